package shape

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

var update = flag.Bool("update", false, "rewrite the golden SVG files")

// tree is a session with two branch points, a label, a compaction and a
// branch summary, and a label holding markup.
var tree = sessiontest.Lines(sessiontest.Header,
	sessiontest.User("u1", "", 1, "fix the <b>login</b> bug"),
	sessiontest.Asst("a1", "u1", 2, "looking"),
	sessiontest.User("u2", "a1", 3, "try A"),
	sessiontest.Asst("a2", "u2", 4, "A done"),
	sessiontest.User("u3", "a1", 5, "try B"),
	sessiontest.Asst("a3", "u3", 6, "B done"),
	sessiontest.Entry("compaction", "c1", "a3", 7, `,"summary":"so far","firstKeptEntryId":"u3","tokensBefore":100`),
	sessiontest.User("u4", "c1", 8, "go on"),
	sessiontest.Entry("branch_summary", "b1", "a1", 9, `,"fromId":"a2","summary":"A was abandoned"`),
	sessiontest.User("u5", "b1", 10, "after the summary"),
	sessiontest.Entry("label", "l1", "u5", 11, `,"targetId":"u3","label":"<script>x</script>"`),
)

func render(t *testing.T, content string, o Options) (string, Stats, *Layout) {
	t.Helper()
	s, err := sessions.Parse(strings.NewReader(content), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if o.Leaf == 0 {
		o.Leaf = s.Leaf()
	}
	l := New(s)
	var b bytes.Buffer
	st, err := l.Render(&b, o)
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), st, l
}

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"tree", Options{Select: -1, Focus: -1}},
		{"tree-select-a2", Options{Select: 3, Focus: -1}},
	} {
		got, _, _ := render(t, tree, c.o)
		file := filepath.Join("testdata", c.name+".golden.svg")
		if *update {
			os.WriteFile(file, []byte(got), 0o644)
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs from %s (go test ./shape -update and look)", c.name, file)
		}
	}
}

// TestMarks checks what the drawing says about the tree.
func TestMarks(t *testing.T) {
	got, st, l := render(t, tree, Options{Select: -1, Focus: -1})
	if len(l.Segs) != 3 || st.Segments != 3 {
		t.Errorf("%d segments (%d drawn), want 3", len(l.Segs), st.Segments)
	}
	for _, want := range []string{
		`class="mk fork"`, `class="mk compaction"`, `class="mk summary"`, `class="mk leaf"`, `class="mk tag"`,
		`&lt;script&gt;x&lt;/script&gt;`, `class="seg path"`, `class="seg off"`, `class="edge off"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the map lacks %s", want)
		}
	}
	if strings.Contains(got, "<script>") {
		t.Error("session text reached the SVG unescaped")
	}
	// The leaf's path: the root's run, then the summary's branch from a1.
	if l.Of(9) != l.Of(10) || l.Segs[l.Of(10)].Parent != l.Of(0) || l.Segs[l.Of(10)].From != 1 {
		t.Errorf("the summary branch is not one run under the root's: %+v", l.Segs)
	}
}

// TestAppendsKeepPlaces: appending to the leaf's run, or a new branch at
// the end, moves no segment already drawn.
func TestAppendsKeepPlaces(t *testing.T) {
	_, _, before := render(t, tree, Options{Select: -1, Focus: -1})
	more := tree + sessiontest.Lines(
		sessiontest.Asst("a5", "l1", 12, "more on the leaf"),
		sessiontest.User("u6", "a2", 13, "back on A"),
	)
	_, _, after := render(t, more, Options{Select: -1, Focus: -1})
	for k, sg := range before.Segs {
		a := after.Segs[k]
		if a.First != sg.First || a.Row != sg.Row || a.Lane != sg.Lane {
			t.Errorf("segment %d moved: %+v → %+v", k, sg, a)
		}
	}
	if len(after.Segs) != len(before.Segs) {
		t.Errorf("%d segments after the appends, want %d (both extend runs)", len(after.Segs), len(before.Segs))
	}
	// A branch from the middle of a run (a rewind, then a new prompt) adds
	// a segment at the end, in a lane of its own; nothing else moves.
	fork := more + sessiontest.Lines(sessiontest.User("u7", "u1", 14, "a third way"))
	_, _, forked := render(t, fork, Options{Select: -1, Focus: -1})
	for k, sg := range after.Segs {
		if f := forked.Segs[k]; f.First != sg.First || f.Row != sg.Row || f.Lane != sg.Lane || f.Last != sg.Last {
			t.Errorf("segment %d moved when a branch began mid-run: %+v → %+v", k, sg, f)
		}
	}
	last := forked.Segs[len(forked.Segs)-1]
	if len(forked.Segs) != len(after.Segs)+1 || last.First != forked.s.Len()-1 || last.From != 0 {
		t.Errorf("the new branch is not one segment at the end, from u1: %+v", last)
	}
}

// TestBudget: a session of many branches draws at most Max segments, the
// path among them, and says how many folded.
func TestBudget(t *testing.T) {
	lines := []string{sessiontest.Header, sessiontest.User("r", "", 1, "root")}
	for i := range 300 {
		id := "b" + strings.Repeat("x", 1) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		lines = append(lines, sessiontest.User(id, "r", 2+i, "branch"))
		lines = append(lines, sessiontest.Asst(id+"a", id, 2+i, "answer"))
	}
	got, st, all := render(t, sessiontest.Lines(lines...), Options{Select: -1, Max: 50, Focus: -1})
	n := len(all.Segs) // the root's run goes on through its first branch: 300
	if n != 300 || st.Segments > 50 || st.Folded != n-st.Segments {
		t.Errorf("drew %d, folded %d of %d", st.Segments, st.Folded, n)
	}
	if !strings.Contains(got, "folded") || !strings.Contains(got, `class="seg path"`) || !strings.Contains(got, `data-focus="`) {
		t.Error("the folded count, its detail link or the path is missing")
	}
	// Zooming in on the root fetches its subtree: its folded branches are drawn.
	_, st2, l := render(t, sessiontest.Lines(lines...), Options{Select: -1, Max: 120, Focus: 0})
	if st2.Segments != 120 || st2.Folded != 300-120 {
		t.Errorf("focused: drew %d, folded %d", st2.Segments, st2.Folded)
	}
	_ = l
}
