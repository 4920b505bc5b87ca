// Package readtest holds test helpers for the packages above sessions
// (writer, library, share, web...): a session read from a temporary file, its
// reading collected whole as pi's is, comparisons of two indexes, and
// the decoding of written lines.
// sessions' own tests keep their own copies: they cannot import this
// package, which imports sessions. It may import sessions and
// internal/sessiontest, and only tests may import it.
package readtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// Inspection is a Reading collected whole: the document package inspect
// prints, for the tests that compare it with pi's reading.
type Inspection struct {
	SessionID     string           `json:"sessionId"`
	Version       int              `json:"version"`
	Cwd           json.RawMessage  `json:"cwd"`
	ParentSession json.RawMessage  `json:"parentSession"`
	Name          json.RawMessage  `json:"name"`
	LeafID        *string          `json:"leafId"`
	EntryCount    int              `json:"entryCount"`
	Tree          []sessions.Node  `json:"tree"`
	Path          []string         `json:"path"`
	Context       sessions.Context `json:"context"`
}

// SessionName returns the session name decoded, nil for none.
func (in *Inspection) SessionName() *string {
	var n *string
	_ = json.Unmarshal(in.Name, &n)
	return n
}

// Inspect collects s's Reading at leaf.
func Inspect(s *sessions.Session, leaf string) (*Inspection, error) {
	rd, err := s.Read(leaf)
	if err != nil {
		return nil, err
	}
	in := &Inspection{SessionID: rd.SessionID, Version: rd.Version, Cwd: rd.Cwd, ParentSession: rd.ParentSession,
		Name: rd.Name, LeafID: rd.LeafID, EntryCount: rd.EntryCount, Tree: []sessions.Node{}, Path: rd.Path,
		Context: sessions.Context{Messages: []json.RawMessage{}}}
	err = rd.EachNode(func(n *sessions.Node) error {
		c := *n
		c.Children = append([]json.RawMessage{}, n.Children...)
		in.Tree = append(in.Tree, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	in.Context.ThinkingLevel, in.Context.Model, err = rd.EachMessage(func(m json.RawMessage) error {
		in.Context.Messages = append(in.Context.Messages, append(json.RawMessage{}, m...)) // m is reused
		return nil
	})
	return in, err
}

// Context returns pi's buildSessionContext at entry position leaf (-1: the empty context).
func Context(s *sessions.Session, leaf int) (*sessions.Context, error) {
	r, err := s.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	p, err := r.Project(leaf)
	if err != nil {
		return nil, err
	}
	return &p.Context, nil
}

// Load writes content to a temporary file and loads it.
func Load(t testing.TB, content string) (*sessions.Session, string) {
	t.Helper()
	p := sessiontest.File(t, t.TempDir(), "s.jsonl", content)
	s, err := sessions.Load(p)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s, p
}

// Parse writes data to a file named name (a plain file name; "s.jsonl"
// when it is not one) in a temporary folder and loads it as the library
// does (sessions.Load): the session piweb would read from those bytes.
func Parse(t testing.TB, data []byte, name string) (*sessions.Session, error) {
	t.Helper()
	if name == "" || name == "." || name == ".." || name != filepath.Base(name) {
		name = "s.jsonl"
	}
	return sessions.Load(sessiontest.File(t, t.TempDir(), name, string(data)))
}

// LoadFile loads the session file at path, failing the test on error.
func LoadFile(t testing.TB, path string) *sessions.Session {
	t.Helper()
	s, err := sessions.Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return s
}

// MustLookup returns the position of id in s, failing the test when s has no such entry.
func MustLookup(t testing.TB, s *sessions.Session, id string) int {
	t.Helper()
	i, ok := s.Lookup(id)
	if !ok {
		t.Fatalf("no entry %q", id)
	}
	return i
}

// Decoded unmarshals JSON into plain Go values, for comparing meaning rather than bytes.
func Decoded(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

// ContextAt returns the decoded model context at entry position leaf.
func ContextAt(t testing.TB, s *sessions.Session, leaf int) any {
	t.Helper()
	c, err := Context(s, leaf)
	if err != nil {
		t.Fatal(err)
	}
	return Decoded(t, JSON(t, c))
}

// Keys returns the member names of the JSON object line, in order.
func Keys(t testing.TB, line []byte) []string {
	t.Helper()
	var ks []string
	if _, err := js.EachMember(line, 0, func(m js.Member) { ks = append(ks, js.Key(m.Key)) }); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return ks
}

// SplitLines splits the content of a file into its lines, without their newlines.
func SplitLines(data []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

// Update makes s its next snapshot (Next), for tests that follow one
// session in one variable and never share it.
func Update(s *sessions.Session) (sessions.Delta, error) {
	n, d, err := s.Next()
	if n != s {
		*s = *n
	}
	return d, err
}

// Lookup returns the position of id in s, or -1.
func Lookup(s *sessions.Session, id string) int {
	if i, ok := s.Lookup(id); ok {
		return i
	}
	return -1
}

// JSON marshals v, failing the test on error.
func JSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// diags returns s's diagnostics as "line:kind", sorted.
func diags(s *sessions.Session) []string {
	var out []string
	for _, d := range s.Diags {
		out = append(out, fmt.Sprintf("%d:%s", d.Line, d.Kind))
	}
	slices.Sort(out)
	return out
}

// SameIndex fails unless got indexes exactly what want does.
func SameIndex(t testing.TB, got, want *sessions.Session) {
	t.Helper()
	if got.Header != want.Header {
		t.Fatalf("Header = %+v, want %+v", got.Header, want.Header)
	}
	if got.Size != want.Size || got.FirstMessage != want.FirstMessage || got.Name() != want.Name() {
		t.Fatalf("Size/FirstMessage/Name = %d %q %q, want %d %q %q", got.Size, got.FirstMessage, got.Name(), want.Size, want.FirstMessage, want.Name())
	}
	if len(got.Entries) != len(want.Entries) {
		t.Fatalf("%d entries, want %d", len(got.Entries), len(want.Entries))
	}
	for i := range got.Entries {
		if got.Entries[i] != want.Entries[i] {
			t.Fatalf("entry %d = %+v,\nwant %+v", i, got.Entries[i], want.Entries[i])
		}
		if got.Parent(i) != want.Parent(i) || !slices.Equal(got.Children(i), want.Children(i)) {
			t.Fatalf("entry %d: parent %d children %v, want %d %v", i, got.Parent(i), got.Children(i), want.Parent(i), want.Children(i))
		}
	}
	if !slices.Equal(got.Roots(), want.Roots()) {
		t.Fatalf("Roots = %v, want %v", got.Roots(), want.Roots())
	}
	gl, wl := got.Labels(), want.Labels()
	if len(gl) != len(wl) {
		t.Fatalf("Labels = %v, want %v", gl, wl)
	}
	for k, v := range wl {
		if gl[k] != v {
			t.Fatalf("Labels = %v, want %v", gl, wl)
		}
	}
	if g, w := diags(got), diags(want); !slices.Equal(g, w) {
		t.Fatalf("diagnostics = %v,\nwant %v", got.Diags, want.Diags)
	}
}
