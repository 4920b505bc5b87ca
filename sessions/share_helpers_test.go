package sessions

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/piweb/piweb/internal/js"
)

// Helpers of the share tests (export, redaction), which move with them.

func mustLoad(t *testing.T, path string) *Session {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return s
}

func mustLookup(t *testing.T, s *Session, id string) int {
	t.Helper()
	i, ok := s.Lookup(id)
	if !ok {
		t.Fatalf("no entry %q", id)
	}
	return i
}

// decoded unmarshals JSON into plain Go values, for comparing meaning rather than bytes.
func decoded(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

// contextAt returns the decoded model context at entry position leaf.
func contextAt(t *testing.T, s *Session, leaf int) any {
	t.Helper()
	c, err := s.Context(leaf)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return decoded(t, b)
}

func keysOf(t *testing.T, line []byte) []string {
	t.Helper()
	var ks []string
	if _, err := js.EachMember(line, 0, func(m js.Member) { ks = append(ks, js.Key(m.Key)) }); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return ks
}

func splitLines(data []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}
