package web

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantedSecrets are secrets of every kind the share must not carry.
var plantedSecrets = []string{
	"sk-ant-api03-Zq8xK2mV9pL4wR7tN1bY6cH3dF5gJ0sA",
	"ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6",
	"github_pat_11ABCDEFG0123456789_abcdefghijklmnopQRS",
	"AKIAIOSFODNN7QRSTUVW",
	"AIzaSyA-1234567890abcdefghijklmnopqrstu",
	"xoxb-2345678901-abcdefghijKLMN",
	"glpat-aBcDeFgHiJkLmNoPqRsTuV",
	"npm_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6",
	"hf_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6xy",
	"sk_live_51HaBcDeFgHiJkLmNoPqRsTu",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlc2lnbmF0dXJl",
	"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
	"hunter2hunter2",
	"s3cretPassw0rd",
	"Zx9kL2mQp7",
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"pa55w0rdInUrl",
	"BearerTokenAbcdef0123456789xyz",
}

// secretsSession is a session holding the planted secrets wherever pi puts text.
func secretsSession() string {
	p := plantedSecrets
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	lines := []string{
		`{"type":"session","version":3,"id":"sec","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/secret-project"}`,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":` + q("my key is "+p[0]+" and the token "+p[1]) + `,"timestamp":1}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":` + q("I see "+p[2]+" in the env") + `,"thinkingSignature":"EqQBCkYIBxgCSIGNATURE"},{"type":"text","text":` + q("AWS id "+p[3]+", Google "+p[4]) + `},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":` + q("curl -H 'Authorization: Bearer "+p[17]+"' https://x; mysql -uroot -p"+p[14]+" db") + `}}],"provider":"anthropic","model":"claude","stopReason":"toolUse","timestamp":2}}`,
		`{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":` + q("SLACK="+p[5]+"\nGITLAB="+p[6]+"\n-----BEGIN RSA PRIVATE KEY-----\n"+p[11]+"\n-----END RSA PRIVATE KEY-----") + `}],"details":{"fullOutput":` + q("npm "+p[7]+" hf "+p[8]) + `},"isError":false,"timestamp":3}}`,
		`{"type":"message","id":"b1","parentId":"r1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"bashExecution","command":` + q("export STRIPE="+p[9]) + `,"output":` + q("jwt="+p[10]) + `,"exitCode":0,"cancelled":false,"truncated":false,"timestamp":4}}`,
		`{"type":"custom_message","id":"m1","parentId":"b1","timestamp":"2026-01-01T00:00:05.000Z","customType":"note","content":` + q("password: "+p[12]) + `,"display":true}`,
		`{"type":"compaction","id":"k1","parentId":"m1","timestamp":"2026-01-01T00:00:06.000Z","summary":` + q("PASSWORD: "+p[13]) + `,"firstKeptEntryId":"m1","tokensBefore":1000}`,
		`{"type":"branch_summary","id":"s1","parentId":"k1","timestamp":"2026-01-01T00:00:07.000Z","fromId":"k1","summary":` + q("the AWS secret "+p[15]) + `}`,
		`{"type":"session_info","id":"n1","parentId":"s1","timestamp":"2026-01-01T00:00:08.000Z","name":` + q("deploy with postgres://app:"+p[16]+"@db/x") + `}`,
		`{"type":"message","id":"u2","parentId":"n1","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"user","content":"thanks","timestamp":9}}`,
		`{"type":"label","id":"l1","parentId":"u2","timestamp":"2026-01-01T00:00:10.000Z","targetId":"u1","label":` + q("key "+p[0]) + `}`,
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestSharesCarryNoSecrets shares the planted session in every format with
// secrets redacted: none of the secrets, nor the reasoning signature, is
// in the JSONL or the HTML, downloaded or saved; the preview counts them.
func TestSharesCarryNoSecrets(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "--home-dev-secret-project--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00-000Z_sec.jsonl"), []byte(secretsSession()), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := openLib(t, root)
	srv := newServer(t, lib, nil).Handler()
	plain := get(t, srv, "/api/sessions/sec/export").Body.String()
	for _, s := range plantedSecrets {
		if !strings.Contains(plain, s) {
			t.Fatalf("the unredacted export lacks %q: the checks prove nothing", s)
		}
	}
	var outs []string
	for _, format := range []string{"jsonl", "html", "html-session"} {
		rec := get(t, srv, "/api/sessions/sec/export?redact=secrets&format="+format)
		if rec.Code != 200 {
			t.Fatalf("%s: status %d", format, rec.Code)
		}
		outs = append(outs, format+" download", rec.Body.String())
		save := postJSON(t, srv, "/api/sessions/sec/export", fmt.Sprintf(`{"format":%q,"redact":["secrets"]}`, format))
		var r struct{ File string }
		decode(t, save, &r)
		saved, err := os.ReadFile(r.File)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, format+" saved", string(saved))
	}
	for k := 0; k < len(outs); k += 2 {
		for _, s := range append(plantedSecrets, "EqQBCkYIBxgCSIGNATURE") {
			if strings.Contains(outs[k+1], s) {
				t.Errorf("%s holds %q", outs[k], s)
			}
		}
		if !strings.Contains(outs[k+1], "[REDACTED]") {
			t.Errorf("%s has no placeholder", outs[k])
		}
	}
	prev := get(t, srv, "/s/sec/redactions?leaf=&redact=secrets").Body.String()
	if !strings.Contains(prev, "secrets</strong> in") || strings.Count(prev, `class="masked"`) < len(plantedSecrets)-1 {
		t.Errorf("preview lists %d secrets:\n%s", strings.Count(prev, `class="masked"`), prev)
	}
	for _, s := range plantedSecrets {
		if strings.Contains(prev, s) {
			t.Errorf("the preview shows %q unmasked", s)
		}
	}
}
