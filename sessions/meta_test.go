package sessions

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
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
