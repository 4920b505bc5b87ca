package catalog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/search"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
)

// decoyRoot writes one session of n entries that hold the trigrams of
// "fix the" and the words of "box turns" but not the phrase, the oldest
// three of which hold "fix the" too.
func decoyRoot(t *testing.T, n int) string {
	root := t.TempDir()
	dir := filepath.Join(root, "--home-dev-decoy--")
	os.MkdirAll(dir, 0o755)
	lines := []string{`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/decoy"}`}
	parent := ""
	for k := range n {
		text := "fix it, the box turns"
		if k < 3 {
			text = "please fix the cache, the box turns"
		}
		id := fmt.Sprintf("u%d", k)
		lines = append(lines, sessiontest.User(id, parent, k+1, text))
		parent = id
	}
	os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00-000Z_s1.jsonl"), []byte(sessiontest.Lines(lines...)), 0o644)
	return root
}

// limitsStore records the Limit of each search the catalog asks of its
// store, and counts its questions for copies.
type limitsStore struct {
	Store
	limits []int
	copies int
}

func (s *limitsStore) Search(ctx context.Context, q store.Query) ([]store.Candidate, error) {
	s.limits = append(s.limits, q.Limit)
	return s.Store.Search(ctx, q)
}

func (s *limitsStore) Copies(ctx context.Context, entryID string, part int, ts int64) ([]store.Candidate, error) {
	s.copies++
	return s.Store.Copies(ctx, entryID, part, ts)
}

// TestSearchWork: a phrase whose words many entries hold apart decodes
// only the lines holding it; a page asks the store first for about a
// page of candidates, and for the copies of its hits only (not of every
// candidate the store gives).
func TestSearchWork(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		st := &limitsStore{Store: openStore(t, dsn)}
		c := New(library.NewLibrary(decoyRoot(t, 100)), Options{Store: st, Logger: quiet(), PageTime: -1})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		defer func() { cancel(); <-done }()
		<-c.Ready()
		wait(t, c)
		d0 := c.counts.decoded.Load()
		if hits := len(find(t, c, `"fix the"`)); hits != 3 || c.counts.decoded.Load()-d0 != 3 || st.copies != 3 {
			t.Errorf(`"fix the": %d hits, %d lines decoded, %d questions for copies; want 3, 3 and 3`, hits, c.counts.decoded.Load()-d0, st.copies)
		}
		st.limits, st.copies = nil, 0
		q, _ := search.Parse("box turns")
		if _, err := c.Search(ctx, q, 20, ""); err != nil || st.limits[0] != 26 || st.copies != 20 {
			t.Errorf(`"box turns": asked for %v candidates and %d times for copies (%v); want 26 first, and 20`, st.limits, st.copies, err)
		}
	})
}

// TestRawCheck: the raw check passes lines whose texts hold the needles,
// wherever pieces joins values or JSON escapes white space, and turns
// away lines that hold a phrase's words apart.
func TestRawCheck(t *testing.T) {
	msg := func(m string) string {
		return `{"type":"message","id":"x1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":` + m + `}`
	}
	cases := []struct {
		needles []string
		line    string
		want    bool
	}{
		{[]string{"fix the"}, msg(`{"role":"user","content":"Fix  The cache"}`), true},
		{[]string{"fix the"}, msg(`{"role":"user","content":"fix\n\tthe cache"}`), true},
		{[]string{"fix the"}, msg("{\"role\":\"user\",\"content\":\"fix\u00a0\u2028the\"}"), true},
		{[]string{"fix the"}, msg(`{"role":"user","content":"the fix, then the cache"}`), false},
		{[]string{"fix the"}, msg(`{"role":"user","content":"fixed it"}`), false},
		{[]string{"fix the"}, msg(`{"role":"user","content":"fi\u0078 the"}`), true}, // escaped letters: not checked
		{[]string{"kelvin"}, msg("{\"role\":\"user\",\"content\":\"\u212aelvin\"}"), true},
		{[]string{"kelvin"}, msg(`{"role":"user","content":"celsius"}`), false},
		// pieces joins a tool's name and its output, a block and the next,
		// a tool call's arguments, a custom type and its content
		{[]string{"bash out"}, msg(`{"role":"toolResult","toolName":"bash","content":[{"type":"text","text":"  out"}]}`), true},
		{[]string{"one two"}, msg(`{"role":"user","content":[{"type":"text","text":"one\n"},{"type":"text","text":"two"}]}`), true},
		{[]string{"bash command: ls n: 3 next: x"}, msg(`{"role":"assistant","content":[{"type":"toolCall","name":"bash","arguments":{"command":"ls","n": 3 ,"next":"x"}}]}`), true},
		{[]string{"$ make all"}, msg(`{"role":"bashExecution","command":"make all","output":""}`), true},
		{[]string{"p/m-1"}, `{"type":"model_change","id":"mc","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","provider":"p","modelId":"m-1"}`, true},
		{[]string{"note text"}, `{"type":"custom_message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","customType":"note","content":"text"}`, true},
		{[]string{"say \"hi\" now"}, msg(`{"role":"user","content":"say \"hi\" now"}`), true},
		{[]string{"path c:\\new"}, msg(`{"role":"user","content":"path c:\\new"}`), true},
	}
	for _, tc := range cases {
		if got := newRawCheck(tc.needles).may([]byte(tc.line)); got != tc.want {
			t.Errorf("%q in %s: %v, want %v", tc.needles, tc.line, got, tc.want)
		}
	}
	if newRawCheck([]string{"é", "  "}) != nil {
		t.Error("needles without plain bytes are checked")
	}
}

// FuzzRawCheck: the raw check passes a line for every needle its pieces'
// texts hold (every substring of a text as Normalize writes it), as read
// (search checks the bytes before it makes them valid UTF-8) and made
// valid.
func FuzzRawCheck(f *testing.F) {
	for _, l := range oddLines {
		f.Add([]byte(l))
	}
	for _, l := range strings.Split(sessiontest.String(1, 40, sessiontest.Options{}), "\n") {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		raw := bytes.Clone(line)
		line = js.ToValidUTF8(line)
		e, ok := sessions.LineEntry(line, 3)
		if !ok {
			return
		}
		for _, p := range pieces(&e, line) {
			text := search.Normalize(p.text)
			for i := 0; i < len(text); i += max(1, len(text)/200) {
				for j := i + 1; j <= min(len(text), i+40); j++ {
					if !utf8.RuneStart(text[i]) || j < len(text) && !utf8.RuneStart(text[j]) {
						continue
					}
					if n, rc := text[i:j], newRawCheck([]string{text[i:j]}); !rc.may(line) || !rc.may(raw) {
						t.Fatalf("%q holds %q (of %q), the raw check says it cannot", raw, n, text)
					}
				}
			}
		}
	})
}
