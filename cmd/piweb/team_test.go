package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/internal/storetest"
)

// machineRoot makes a sessions root with one session that says text.
func machineRoot(t *testing.T, id, cwd, text string) (string, string) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "--"+strings.ReplaceAll(strings.Trim(cwd, "/"), "/", "-")+"--")
	os.MkdirAll(dir, 0o755)
	f := filepath.Join(dir, "2026-01-01T00-00-00-000Z_"+id+".jsonl")
	content := sessiontest.Lines(`{"type":"session","version":3,"id":"`+id+`","timestamp":"2026-01-01T00:00:00.000Z","cwd":"`+cwd+`"}`,
		sessiontest.User("u-"+id, "", 1, text))
	if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, f
}

// authGet gets path from the server with a Bearer token.
func authGet(t *testing.T, base, path, tok string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+strings.TrimPrefix(path, "/"), nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestTeam pushes two machines' sessions, serves them with a team server
// behind a login, sees an append arrive live, and searches across both.
func TestTeam(t *testing.T) {
	dsn, ok := storetest.Postgres(t)
	if !ok {
		t.Skip("no PostgreSQL")
	}
	ctx := context.Background()
	laptop, lf := machineRoot(t, "s-laptop", "/home/ann/app", "the laptop asks about quasar widgets")
	desk, _ := machineRoot(t, "s-desk", "/home/bob/app", "the desk asks about nebula gadgets")
	for _, m := range []struct{ name, root string }{{"laptop", laptop}, {"desk", desk}} {
		var out bytes.Buffer
		if err := pushCmd(ctx, &out, []string{"--to", dsn, "--session-dir", m.root, "--machine", m.name}); err != nil {
			t.Fatalf("push %s: %v", m.name, err)
		}
		if !strings.Contains(out.String(), "piweb push: 1 files, 1 sent") {
			t.Errorf("push %s said:\n%s", m.name, out.String())
		}
	}
	var tokOut bytes.Buffer
	if err := tokenCmd(ctx, &tokOut, []string{"new", "ann", "--from", dsn}); err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(tokOut.String())
	u, out := start(t, config{addr: "127.0.0.1:0", from: dsn, cacheDir: t.TempDir()})
	if !strings.Contains(out.String(), "team server") || !strings.Contains(out.String(), "login required (a team server): 1 tokens") {
		t.Errorf("output:\n%s", out)
	}
	waitOutput(t, out, "indexed 2 sessions")

	if res := authGet(t, u, "/api/sessions", ""); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("no login: %d", res.StatusCode)
	}
	res := authGet(t, u, "/api/sessions", tok)
	var rows []struct {
		ID, Machine string
		Entries     int
	}
	json.NewDecoder(res.Body).Decode(&rows)
	res.Body.Close()
	got := map[string]string{}
	for _, r := range rows {
		got[r.ID] = r.Machine
	}
	if len(rows) != 2 || got["s-laptop"] != "laptop" || got["s-desk"] != "desk" {
		t.Fatalf("rows %+v", rows)
	}

	// An append pushed arrives on the live stream of the sessions page.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, http.MethodGet, u+"events", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("live stream: %v %v", err, stream)
	}
	defer stream.Body.Close()
	lines := bufio.NewScanner(stream.Body)
	lines.Buffer(nil, 1<<20)
	// Its headers came: the server follows the library's changes already.
	f, _ := os.OpenFile(lf, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(sessiontest.Asst("a1", "u-s-laptop", 2, "a quasar widget is a pulsing thing") + "\n")
	f.Close()
	if err := pushCmd(ctx, io.Discard, []string{"--to", dsn, "--session-dir", laptop, "--machine", "laptop"}); err != nil {
		t.Fatal(err)
	}
	arrived := make(chan bool, 1)
	go func() {
		for lines.Scan() {
			if strings.Contains(lines.Text(), "/s/s-laptop") {
				arrived <- true
				return
			}
		}
		arrived <- false
	}()
	select {
	case ok := <-arrived:
		if !ok {
			t.Fatal("the live stream ended before the append came")
		}
	case <-time.After(guard): // a bound for a lost change, not a pace
		t.Fatal("the append never reached the sessions page")
	}
	res = authGet(t, u, "/api/sessions/s-laptop", tok)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "pulsing thing") {
		t.Errorf("the appended entry is not in the session:\n%.500s", body)
	}

	// Search finds both machines' entries; writes are refused, naming the machine.
	// (An answer while the append is being indexed says partial: ask again until it is whole.)
	for q, want := range map[string]string{"nebula": "s-desk", "quasar": "s-laptop"} {
		var body []byte
		for end := time.Now().Add(guard); ; time.Sleep(20 * time.Millisecond) {
			res := authGet(t, u, "/api/search?q="+q, tok)
			body, _ = io.ReadAll(res.Body)
			res.Body.Close()
			if !strings.Contains(string(body), `"partial":true`) || time.Now().After(end) {
				break
			}
		}
		if !strings.Contains(string(body), `"key":"`+want+`"`) {
			t.Errorf("search %s: %s", q, body)
		}
	}
	wr, _ := http.NewRequest(http.MethodPost, u+"api/sessions/s-desk/label", strings.NewReader(`{"entryId":"u-s-desk","label":"x"}`))
	wr.Header.Set("Authorization", "Bearer "+tok)
	wr.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(wr); err != nil || res.StatusCode != http.StatusConflict {
		t.Errorf("a write: %v %v", err, res)
	}
}

// TestPushExit: push's exit statuses tell a script what happened.
func TestPushExit(t *testing.T) {
	root, _ := machineRoot(t, "s", "/p", "hello")
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "postgres://nobody@" + ln.Addr().String() + "/db?sslmode=disable&connect_timeout=2"
	ln.Close()
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--to", closed, "--session-dir", root}, exitUnreachable},
		{[]string{"--session-dir", root}, 2},
		{[]string{"--to", "sqlite:/tmp/x.db", "--session-dir", root}, 2},
		{[]string{"--to", closed, "--redact", "everything", "--session-dir", root}, 2},
		{[]string{"--to", closed, "--session-dir", filepath.Join(root, "nope")}, 2},
	} {
		err := pushCmd(context.Background(), io.Discard, c.args)
		if got := exitCode(err); got != c.code {
			t.Errorf("%v: exit %d (%v), want %d", c.args, got, err, c.code)
		}
	}
	if dsn, ok := storetest.Postgres(t); ok {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // a signal came before the push began
		if err := pushCmd(ctx, io.Discard, []string{"--to", dsn, "--session-dir", root}); exitCode(err) != exitInterrupted {
			t.Errorf("interrupted: exit %d (%v)", exitCode(err), err)
		}
	}
}

// TestServeFromFlags: a team server refuses what it cannot do.
func TestServeFromFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--from", "sqlite:/tmp/x"},
		{"--from", "postgres://h/db", "--session-dir", "/tmp"},
		{"--from", "postgres://h/db", "--demo"},
		{"--public-url", "piweb.example.com"},
		{"--allowed-origin", "https://x.example/path"},
	} {
		if err := serve(t.Context(), args); exitCode(err) != 2 {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	err := listenAndServe(t.Context(), io.Discard, config{addr: "0.0.0.0:0", root: t.TempDir(), noLogin: true})
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--no-login") {
		t.Errorf("--no-login off loopback: %v", err)
	}
}
