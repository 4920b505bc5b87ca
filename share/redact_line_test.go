package share

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
)

// TestRedactLineAsShares: each entry's line redacted alone is the line the
// whole-session share with secrets redacted writes for it.
func TestRedactLineAsShares(t *testing.T) {
	s := readtest.LoadFile(t, sessiontest.CopyFixture(t, "basic.jsonl"))
	b, err := Whole(s, Redact{Secrets: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	masked := 0
	for i := range s.Entries {
		raw, err := r.Raw(i)
		if err != nil {
			t.Fatal(err)
		}
		got, rules := RedactLine(raw)
		if !bytes.Equal(got, b.Entries[i].JSON) {
			t.Errorf("entry %d:\n got %s\nwant %s", i, got, b.Entries[i].JSON)
		}
		masked += len(rules)
	}
	if masked == 0 {
		t.Error("no secret masked in basic.jsonl, which holds a Bearer token")
	}
}

func TestRedactLine(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		rules          []string
	}{
		{"clean", `{"type":"message","id":"a","message":{"role":"user","content":"hello"}}`,
			`{"type":"message","id":"a","message":{"role":"user","content":"hello"}}`, nil},
		{"a key in a string", `{"type":"message","id":"sk-abcdefghijklmnopqrstuvwxyz","message":{"role":"user","content":"use password=hunter22x please"}}`,
			`{"type":"message","id":"sk-abcdefghijklmnopqrstuvwxyz","message":{"role":"user","content":"use password=[REDACTED] please"}}`, []string{"assignment"}},
		{"signatures dropped", `{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"opaque"}]}}`,
			`{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"}]}}`, nil},
		{"not JSON", `{"type":"message", password=hunter22x`, `{"type":"message", password=[REDACTED]`, []string{"assignment"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, rules := RedactLine([]byte(c.in))
			if string(got) != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
			if len(rules) != len(c.rules) || len(rules) > 0 && !slices.ContainsFunc(rules, func(r string) bool { return strings.Contains(r, c.rules[0]) }) {
				t.Errorf("rules %v, want %v", rules, c.rules)
			}
		})
	}
}
