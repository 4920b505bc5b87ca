package sessions

import (
	"slices"
	"strings"
	"testing"
)

// TestPlaces: entries off the path to the leaf are 0, on it 1, and those
// before the entries the path's last compaction keeps 2, as the context
// leaves them out.
func TestPlaces(t *testing.T) {
	line := func(id, parent, rest string) string {
		p := `null`
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":` + rest + `,"id":"` + id + `","parentId":` + p + `,"timestamp":"2026-01-01T00:00:00.000Z"` + "}"
	}
	user := func(id, parent string) string {
		return line(id, parent, `"message","message":{"role":"user","content":"hi","timestamp":1}`)
	}
	compact := func(id, parent, kept string) string {
		k := ""
		if kept != "" {
			k = `,"firstKeptEntryId":"` + kept + `"`
		}
		return line(id, parent, `"compaction","summary":"s","tokensBefore":1`+k)
	}
	head := `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`
	for _, c := range []struct {
		name  string
		lines []string
		want  []uint8
	}{
		{"no compaction, a branch", []string{user("a", ""), user("b", "a"), user("x", "a"), user("c", "b")}, []uint8{1, 1, 0, 1}},
		{"keeps b", []string{user("a", ""), user("b", "a"), compact("k", "b", "b"), user("c", "k")}, []uint8{2, 1, 1, 1}},
		{"the last compaction counts", []string{user("a", ""), compact("k1", "a", "a"), user("b", "k1"), compact("k2", "b", "b"), user("c", "k2")},
			[]uint8{2, 2, 1, 1, 1}},
		{"keeps an entry off the path", []string{user("a", ""), user("x", "a"), user("b", "a"), compact("k", "b", "x"), user("c", "k")},
			[]uint8{2, 0, 2, 1, 1}},
		{"keeps nothing named", []string{user("a", ""), compact("k1", "a", "a"), user("b", "k1"), compact("k2", "b", ""), user("c", "k2")},
			[]uint8{2, 2, 2, 1, 1}},
		{"compacted branch off the path", []string{user("a", ""), compact("k", "a", "a"), user("b", "k"), user("c", "a")}, []uint8{1, 0, 0, 1}},
	} {
		s := tParse(t, head+"\n"+strings.Join(c.lines, "\n")+"\n")
		if got := s.Places(); !slices.Equal(got, c.want) {
			t.Errorf("%s: places %v, want %v", c.name, got, c.want)
		}
	}
}
