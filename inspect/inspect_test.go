package inspect

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/sessions"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestGolden checks the bytes Write prints for every fixture (the fuzz
// seeds of sessions' loader: cycles, duplicate and missing ids, odd
// labels, compactions, edits, invalid UTF-8...) at every leaf, an unknown
// one too. The goldens were printed by the inspect of before streaming.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(files) < 20 {
		t.Fatalf("%d fixtures, %v", len(files), err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := allLeaves(t, data, name+".jsonl")
			golden := strings.TrimSuffix(f, ".jsonl") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("differs from %s (go test ./inspect -run TestGolden -update rewrites it):\n%s", golden, firstDiff(got, want))
			}
		})
	}
}

// allLeaves returns what Write prints of the session in data at each of
// its entries, at pi's leaf and at an unknown leaf, or why it cannot.
func allLeaves(t testing.TB, data []byte, name string) []byte {
	var b bytes.Buffer
	s, err := readtest.Parse(t, data, name)
	if err != nil {
		msg := err.Error()
		if s != nil { // the error names the temporary file; the goldens, the fixture
			msg = strings.ReplaceAll(msg, s.File, name)
		}
		fmt.Fprintf(&b, "load error: %s\n", msg)
		return b.Bytes()
	}
	leaves := []string{"", "nope"}
	for i := range s.Entries {
		leaves = append(leaves, s.Entries[i].ID)
	}
	for _, l := range leaves {
		fmt.Fprintf(&b, "== leaf %q\n", l)
		if err := Write(&b, s, l); err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
	}
	return b.Bytes()
}

func firstDiff(got, want []byte) string {
	n := 0
	for n < len(got) && n < len(want) && got[n] == want[n] {
		n++
	}
	from := max(0, n-200)
	return fmt.Sprintf("at byte %d:\n got %q\nwant %q", n, got[from:min(len(got), n+200)], want[from:min(len(want), n+200)])
}

// TestSameAsEncodingJSON checks the hand-laid-out document says what
// encoding/json says of the same reading, gathered whole, on every fixture
// and demo session at every leaf.
func TestSameAsEncodingJSON(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	more, _ := filepath.Glob("../static/demo/*/*.jsonl")
	n := 0
	for _, f := range append(files, more...) {
		s, err := sessions.Load(f)
		if err != nil {
			continue
		}
		for _, leaf := range append([]string{""}, ids(s)...) {
			want, err := gather(s, leaf)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := Write(&out, s, leaf); err != nil {
				t.Fatal(err)
			}
			var indented bytes.Buffer
			if err := json.Indent(&indented, want, "", indent); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != indented.String()+"\n" {
				t.Errorf("%s at %q:\n%s", f, leaf, firstDiff(out.Bytes(), append(indented.Bytes(), '\n')))
			}
			n++
		}
	}
	if n < 50 {
		t.Errorf("only %d readings compared", n)
	}
}

// gather returns s's reading at leaf gathered whole, by encoding/json.
func gather(s *sessions.Session, leaf string) ([]byte, error) {
	rd, err := s.Read(leaf)
	if err != nil {
		return nil, err
	}
	doc := struct {
		SessionID     string          `json:"sessionId"`
		Version       int             `json:"version"`
		Cwd           json.RawMessage `json:"cwd"`
		ParentSession json.RawMessage `json:"parentSession"`
		Name          json.RawMessage `json:"name"`
		LeafID        *string         `json:"leafId"`
		EntryCount    int             `json:"entryCount"`
		Tree          []sessions.Node `json:"tree"`
		Path          []string        `json:"path"`
		Context       sessions.Context
	}{rd.SessionID, rd.Version, rd.Cwd, rd.ParentSession, rd.Name, rd.LeafID, rd.EntryCount, []sessions.Node{}, rd.Path,
		sessions.Context{Messages: []json.RawMessage{}}}
	if err := rd.EachNode(func(n *sessions.Node) error {
		c := *n
		c.Children = append([]json.RawMessage{}, n.Children...)
		doc.Tree = append(doc.Tree, c)
		return nil
	}); err != nil {
		return nil, err
	}
	doc.Context.ThinkingLevel, doc.Context.Model, err = rd.EachMessage(func(m json.RawMessage) error {
		doc.Context.Messages = append(doc.Context.Messages, append(json.RawMessage{}, m...))
		return nil
	})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(doc)
	// encoding/json escapes <, > and & in strings; JSON.stringify does not.
	b = bytes.ReplaceAll(bytes.ReplaceAll(bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<")), []byte(`\u003e`), []byte(">")), []byte(`\u0026`), []byte("&"))
	return bytes.Replace(b, []byte(`"Context":`), []byte(`"context":`), 1), err
}

func ids(s *sessions.Session) []string {
	var out []string
	for i := range s.Entries {
		if id := s.Entries[i].ID; id != "" {
			out = append(out, id)
		}
	}
	return out
}

// TestDeep checks a value nested far deeper than encoding/json takes is printed.
func TestDeep(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	s := parse(t,
		`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"x","arguments":{"a":`+deep+`}}],"details":`+deep+`,"timestamp":2}}`)
	var out bytes.Buffer
	if err := Write(&out, s, ""); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte(`"leafId": "a1"`)) || !bytes.Contains(out.Bytes(), []byte(deep[:1000])) {
		t.Errorf("deep content: %.300s", out.Bytes())
	}
}

// TestValuesAsPi checks an empty id, parentId, type and cwd print as pi
// prints them ("", not null: pi prints `value ?? null`), an absent one as
// null, and an entry whose parentId is "" hangs under the line whose id is
// "", as in pi's getTree.
func TestValuesAsPi(t *testing.T) {
	s := parse(t,
		`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":""}`,
		`{"type":"","id":"","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}`,
		`{"type":"message","id":"b","parentId":"","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"b","timestamp":2}}`,
		`{"id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z"}`)
	var out bytes.Buffer
	if err := Write(&out, s, ""); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Cwd           *string `json:"cwd"`
		ParentSession *string `json:"parentSession"`
		Tree          []struct {
			ID, ParentID, Type any
			Children           []any
		} `json:"tree"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Cwd == nil || *got.Cwd != "" || got.ParentSession != nil {
		t.Errorf("cwd %v parentSession %v: want \"\" and null", got.Cwd, got.ParentSession)
	}
	if len(got.Tree) != 3 || got.Tree[0].ID != "" || got.Tree[0].Type != "" || got.Tree[0].ParentID != nil ||
		len(got.Tree[0].Children) != 1 || got.Tree[0].Children[0] != "b" || got.Tree[1].ParentID != "" || got.Tree[2].Type != nil {
		t.Errorf("tree: %+v", got.Tree)
	}
}

// TestErrors checks an unknown leaf writes nothing, and a failing writer's
// error comes back.
func TestErrors(t *testing.T) {
	s, err := sessions.Load("testdata/branches.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var e *sessions.Error
	if err := Write(&out, s, "nope"); !errors.As(err, &e) || e.Kind != sessions.ErrNoEntry || out.Len() != 0 {
		t.Errorf("unknown leaf: %v, %d bytes written", err, out.Len())
	}
	broken := errors.New("disk full")
	if err := Write(failWriter{broken}, s, ""); !errors.Is(err, broken) {
		t.Errorf("failing writer: %v", err)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// parse returns the session of lines.
func parse(t *testing.T, lines ...string) *sessions.Session {
	t.Helper()
	s, err := readtest.Parse(t, []byte(strings.Join(lines, "\n")+"\n"), "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return s
}
