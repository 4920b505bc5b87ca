package sessions

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two snapshots made from one (pi rewrote the file between two Nexts of it)
// keep their own entries: neither writes what the other reads.
func TestNextSiblings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	line := func(id, parent string) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"m"}}`+"\n", id, parent)
	}
	head := `{"type":"session","version":3,"id":"S","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n" +
		`{"type":"message","id":"a0000000","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"m"}}` + "\n"
	write := func(s string) { os.WriteFile(path, []byte(s), 0o600) }
	write(head)
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	write(head + line("x0000000", "a0000000") + line("x0000001", "x0000000"))
	n1, _, _ := s.Next()
	write(head + line("y0000000", "a0000000") + line("y0000001", "y0000000"))
	n2, _, _ := s.Next()
	for i, c := range []struct {
		s    *Session
		want string
	}{{s, "a0000000"}, {n1, "a0000000 x0000000 x0000001"}, {n2, "a0000000 y0000000 y0000001"}} {
		var ids []string
		for j, e := range c.s.Entries {
			ids = append(ids, e.ID)
			if at, ok := c.s.Lookup(e.ID); !ok || at != j {
				t.Errorf("%d: Lookup(%q) = %d, %v; want %d", i, e.ID, at, ok, j)
			}
		}
		if got := strings.Join(ids, " "); got != c.want {
			t.Errorf("%d: ids %q, want %q", i, got, c.want)
		}
	}
}
