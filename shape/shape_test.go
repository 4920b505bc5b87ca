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
		{"tree", Options{Select: -1}},
		{"tree-select-a2", Options{Select: 3}},
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
	got, st, l := render(t, tree, Options{Select: -1})
	if len(l.Segs) != 4 || st.Segments != 4 {
		t.Errorf("%d segments (%d drawn), want 4", len(l.Segs), st.Segments)
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
	// The leaf's path: the root's run, then the summary's branch.
	if l.Of(9) != l.Of(10) || l.Segs[l.Of(10)].Parent != l.Of(0) {
		t.Errorf("the summary branch is not one run under the root's: %+v", l.Segs)
	}
}

// TestAppendsKeepPlaces: appending to the leaf's run, or a new branch at
// the end, moves no segment already drawn.
func TestAppendsKeepPlaces(t *testing.T) {
	_, _, before := render(t, tree, Options{Select: -1})
	more := tree + sessiontest.Lines(
		sessiontest.Asst("a5", "l1", 12, "more on the leaf"),
		sessiontest.User("u6", "a2", 13, "back on A"),
	)
	_, _, after := render(t, more, Options{Select: -1})
	for k, sg := range before.Segs {
		a := after.Segs[k]
		if a.First != sg.First || a.Row != sg.Row || a.Lane != sg.Lane {
			t.Errorf("segment %d moved: %+v → %+v", k, sg, a)
		}
	}
	if len(after.Segs) != len(before.Segs) {
		t.Errorf("%d segments after the appends, want %d (both extend runs)", len(after.Segs), len(before.Segs))
	}
	// A new branch adds a segment at the end, in a lane of its own.
	fork := more + sessiontest.Lines(sessiontest.User("u7", "u1", 14, "a third way"))
	_, _, forked := render(t, fork, Options{Select: -1})
	last := forked.Segs[len(forked.Segs)-1]
	if last.First != forked.s.Len()-1 || last.Row != len(forked.Segs)-1 {
		t.Errorf("the new branch is not the last segment: %+v", last)
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
	got, st, _ := render(t, sessiontest.Lines(lines...), Options{Select: -1, Max: 50})
	if st.Segments > 50 || st.Folded != 301-st.Segments {
		t.Errorf("drew %d, folded %d of 301", st.Segments, st.Folded)
	}
	if !strings.Contains(got, "folded") || !strings.Contains(got, `class="seg path"`) {
		t.Error("the folded count or the path is missing")
	}
}
