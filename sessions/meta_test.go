package sessions

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
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

// TestMetaKeepsNoTree checks that a session's summary holds none of its
// tree's memory: the library keeps a summary per session once the tree is
// dropped, so a summary that pointed into the tree's blocks (the leaf's
// id did) would keep a part of every tree read, growing with the root.
func TestMetaKeepsNoTree(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	parent := "null"
	for i := range 3000 {
		id := fmt.Sprintf("%08x", i+1)
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1767225600000}}`+"\n", id, parent)
		parent = strconv.Quote(id)
	}
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 100 // sessions read; half of them then appended to (their summary extended)
	before := sessiontest.LiveHeap()
	metas := make([]Meta, 0, n)
	for k := range n {
		s, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if k%2 == 1 {
			line := fmt.Sprintf(`{"type":"message","id":"zz%06d","parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"more","timestamp":1767225600000}}`+"\n", k, parent)
			if err := os.WriteFile(p, []byte(b.String()+line), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Update(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		metas = append(metas, s.Meta())
	}
	// A summary takes a few hundred bytes; a tree's block of ids, 16 KB here.
	kept := sessiontest.LiveHeap() - before
	t.Logf("%d summaries keep %d KB", n, kept>>10)
	if kept > n*4<<10 {
		t.Errorf("%d summaries keep %d KB of the heap (at most %d KB expected): they hold parts of their trees", n, kept>>10, n*4)
	}
	if m := metas[1]; m.Leaf != "zz000001" || metas[0].Leaf != "00000bb8" {
		t.Errorf("leaves %q and %q, want 00000bb8 and zz000001", metas[0].Leaf, m.Leaf)
	}
	runtime.KeepAlive(metas)
}
