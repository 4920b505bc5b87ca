package library

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
)

// TestForkPointKeepsNoTree checks that the fork points the library keeps
// (up to 4096) hold none of the trees they were read from: an entry's id
// inside its tree's block of ids would keep that block alive.
func TestForkPointKeepsNoTree(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "--p--")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, id, parent string, ids []string) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"type":"session","version":3,"id":%q,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"%s}`+"\n", id, parent)
		prev := "null"
		for _, e := range ids {
			fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}`+"\n", e, prev)
			prev = `"` + e + `"`
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var shared []string
	for i := range 3000 {
		shared = append(shared, fmt.Sprintf("%08x", i+1))
	}
	parent := write("2026-01-01T00-00-00-000Z_p.jsonl", "p", "", shared)
	const forks = 100
	paths := []string{parent}
	for k := range forks {
		ids := append([]string(nil), shared[:1500]...)
		for i := range 500 {
			ids = append(ids, fmt.Sprintf("k%03d%05d", k, i))
		}
		paths = append(paths, write(fmt.Sprintf("2026-01-01T00-00-01-000Z_c%d.jsonl", k), fmt.Sprintf("c%d", k), fmt.Sprintf(`,"parentSession":%q`, parent), ids))
	}
	l := NewLibrary(root)
	l.SetCacheLimit(1) // a tree stays only while it is read
	for _, p := range paths {
		l.Refresh(p)
	}
	before := sessiontest.LiveHeap()
	for k := range forks {
		if at := l.ForkPoint(fmt.Sprintf("c%d", k), "p"); at != shared[1499] {
			t.Fatalf("fork point of c%d: %q, want %q", k, at, shared[1499])
		}
	}
	l.Refresh(write("2026-01-01T00-00-02-000Z_z.jsonl", "z", "", []string{"z1"})) // pushes the last tree read out
	// A point takes about a hundred bytes; a block of a fork's ids, 8 KB here.
	kept := sessiontest.LiveHeap() - before
	t.Logf("%d fork points keep %d KB", forks, kept>>10)
	if kept > forks*2<<10 {
		t.Errorf("%d fork points keep %d KB of the heap (at most %d KB expected): they hold parts of their trees", forks, kept>>10, forks*2)
	}
}
