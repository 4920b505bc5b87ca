package sessions

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestMetaCacheFollowsUpdates checks the cached summary always equals a fresh
// computation: after load, after appends, after a rewrite, and when only the
// file time changed.
func TestMetaCacheFollowsUpdates(t *testing.T) {
	data, err := os.ReadFile("testdata/branches.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		if got, want := s.Meta(), s.computeMeta(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: cached meta %+v, want %+v", step, got, want)
		}
	}
	check("load")
	before := s.Meta()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`{"type":"message","id":"z1","parentId":"n1","timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"more"}],"provider":"openai","model":"gpt","usage":{"totalTokens":7,"cost":{"total":0.25}},"stopReason":"stop","timestamp":1767312000000}}` + "\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(); err != nil {
		t.Fatal(err)
	}
	check("append")
	if m := s.Meta(); m.Entries != before.Entries+1 || m.Tokens != before.Tokens+7 || len(m.Models) != len(before.Models)+1 {
		t.Errorf("after an append: %+v (before %+v)", m, before)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil { // a rewrite back to the original
		t.Fatal(err)
	}
	if _, err := s.Update(); err != nil {
		t.Fatal(err)
	}
	check("rewrite")
	m := s.Meta()
	m.Models[0] = "changed"
	check("caller changed its copy")
}

// TestLibraryIDHandoff checks that when a file's session id changes, another
// file with the old id takes it over, and the newest file holds a shared id.
func TestLibraryIDHandoff(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "--p--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	header := func(id string) string {
		return `{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" +
			`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"x","timestamp":1}}` + "\n"
	}
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	old := time.Now().Add(-time.Hour)
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, []byte(header("same")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(a, old, old); err != nil {
		t.Fatal(err)
	}
	lib, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := lib.File("same"); f != b {
		t.Fatalf("id held by %s, want the newer %s", f, b)
	}
	// b gets another id: a takes "same" over.
	if err := os.WriteFile(b, []byte(header("other")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := lib.Refresh(b); err != nil {
		t.Fatal(err)
	}
	if f, _ := lib.File("same"); f != a {
		t.Errorf("after b changed its id, %q is held by %q, want %s", "same", f, a)
	}
	if f, _ := lib.File("other"); f != b {
		t.Errorf("%q is held by %q, want %s", "other", f, b)
	}
}
