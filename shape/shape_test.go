package shape

import (
	"bytes"
	"flag"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
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
	s, err := readtest.Parse(t, []byte(content), "t.jsonl")
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
		// Viewing the path to u3 (inside a run: the rest is drawn abandoned), two search hits.
		{"tree-leaf-u3-hits", Options{Leaf: 4, Select: 4, Hits: []int{0, 5}, Focus: -1}},
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
	// u1-a1, then a1's three children: u2-a2, u3-u4 (with the compaction),
	// b1-l1 (the summary's branch, the leaf's).
	if len(l.Segs) != 4 || st.Segments != 4 {
		t.Errorf("%d segments (%d drawn), want 4", len(l.Segs), st.Segments)
	}
	for _, want := range []string{
		`class="mk fork"`, `class="mk compaction"`, `class="mk summary"`, `class="mk leaf"`, `class="mk tag"`,
		`&lt;script&gt;x&lt;/script&gt;`, `class="seg path"`, `class="seg off"`, `class="mk root"`, `class="mk dot"`, `class="ln"`,
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

// TestAppendsKeepPlaces: appending to the leaf's run, a new branch at the
// end of another, or a branch from the middle of a run (a rewind, then a
// new prompt) moves no entry already drawn.
func TestAppendsKeepPlaces(t *testing.T) {
	steps := []string{tree}
	steps = append(steps, steps[0]+sessiontest.Lines(
		sessiontest.Asst("a5", "l1", 12, "more on the leaf"),
		sessiontest.User("u6", "a2", 13, "back on A"),
	))
	steps = append(steps, steps[1]+sessiontest.Lines(sessiontest.User("u7", "u1", 14, "a third way")))
	steps = append(steps, steps[2]+sessiontest.Lines(sessiontest.Asst("a7", "u7", 15, "third answer"), sessiontest.User("u8", "a5", 16, "on")))
	var before *Layout
	for n, content := range steps {
		_, _, l := render(t, content, Options{Select: -1, Focus: -1})
		if before != nil {
			for i := range before.s.Len() {
				r0, l0 := before.Place(i)
				r1, l1 := l.Place(i)
				if r0 != r1 || l0 != l1 {
					t.Errorf("step %d: entry %d moved from row %d lane %d to row %d lane %d", n, i, r0, l0, r1, l1)
				}
			}
		}
		before = l
	}
	// The leaf's run went on in its lane; u7 (row 1) found the nearest
	// lane free from row 1 down.
	if r, ln := before.Place(before.s.Len() - 1); r != 6 || ln != 2 {
		t.Errorf("u8 at row %d lane %d, want 6, 2 (under a5)", r, ln)
	}
	if r, ln := before.Place(13); r != 1 || ln != 3 {
		t.Errorf("u7 at row %d lane %d, want 1, 3", r, ln)
	}
}

// TestLaneReuse: a branch that ended leaves its lane to a later branch
// lower down; a branch beside a longer one takes the next lane.
func TestLaneReuse(t *testing.T) {
	lines := []string{sessiontest.Header}
	parent := ""
	for i := range 20 {
		id := fmt.Sprintf("m%02d", i)
		lines = append(lines, sessiontest.User(id, parent, i, "main"))
		parent = id
	}
	lines = append(lines,
		sessiontest.User("x1", "m02", 30, "early try"), sessiontest.Asst("x2", "x1", 31, "short"),
		sessiontest.User("y1", "m10", 32, "later try"), sessiontest.Asst("y2", "y1", 33, "short"),
		sessiontest.User("z1", "m10", 34, "beside"),
	)
	s, err := readtest.Parse(t, []byte(sessiontest.Lines(lines...)), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	l := New(s)
	lane := func(id string) int {
		i, _ := s.Lookup(id)
		_, ln := l.Place(i)
		return ln
	}
	if lane("m19") != 0 || lane("x2") != 1 || lane("y2") != 1 || lane("z1") != 2 || l.Lanes() != 3 {
		t.Errorf("lanes m19 %d, x2 %d, y2 %d, z1 %d (%d lanes), want 0 1 1 2 (3)", lane("m19"), lane("x2"), lane("y2"), lane("z1"), l.Lanes())
	}
}

// TestNearestLane checks the tree of lanes against a plain scan.
func TestNearestLane(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n := 1 + rng.IntN(40)
		f := newLanes(n)
		plain := make([]int32, f.size)
		for j := range plain {
			plain[j] = -1
		}
		for range n {
			ln, r := rng.IntN(n), int32(rng.IntN(10))
			f.set(ln, r)
			plain[ln] = max(plain[ln], r)
		}
		for range 20 {
			want, r := rng.IntN(n), int32(rng.IntN(11))
			best := -1
			for d := 0; d < f.size && best < 0; d++ {
				if want+d < f.size && plain[want+d] < r {
					best = want + d
				} else if want-d >= 0 && plain[want-d] < r {
					best = want - d
				}
			}
			if got := f.nearest(want, r); got != best {
				t.Fatalf("nearest(%d, %d) = %d, want %d (%v)", want, r, got, best, plain)
			}
		}
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
	n := len(all.Segs) // the root, and each branch
	if n != 301 || st.Segments > 50 || st.Folded != n-st.Segments {
		t.Errorf("drew %d, folded %d of %d", st.Segments, st.Folded, n)
	}
	if !strings.Contains(got, "folded") || !strings.Contains(got, `class="seg path"`) || !strings.Contains(got, `data-focus="`) {
		t.Error("the folded count, its detail link or the path is missing")
	}
	// Zooming in on a folded branch fetches it.
	if strings.Contains(got, `data-first="bxml"`) {
		t.Fatal("the last branch is drawn without focus: the test checks nothing")
	}
	focused, _, _ := render(t, sessiontest.Lines(lines...), Options{Select: -1, Max: 50, Focus: 597})
	if !strings.Contains(focused, `data-first="bxml"`) {
		t.Error("the focused branch is not drawn")
	}
}

// TestRewindsFold: a long path with an abandoned attempt every few entries
// (a session of rewinds) stays within the element budget: the attempts
// that do not fit fold into counts along the path, which is drawn as a few
// runs rather than one segment per attempt.
func TestRewindsFold(t *testing.T) {
	lines := []string{sessiontest.Header}
	parent := ""
	for i := range 10_000 {
		id := fmt.Sprintf("m%d", i)
		lines = append(lines, sessiontest.User(id, parent, 2, "go on"))
		parent = id
		if i%5 == 4 {
			lines = append(lines, sessiontest.Asst(fmt.Sprintf("x%d", i), fmt.Sprintf("m%d", i-1), 2, "an attempt"))
		}
	}
	s, err := readtest.Parse(t, []byte(sessiontest.Lines(lines...)), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	l := New(s)
	var n countWriter
	st, err := l.Render(&n, Options{Leaf: s.Leaf(), Select: -1, Focus: -1})
	if err != nil {
		t.Fatal(err)
	}
	if n.elements > 1600 || n.bytes > 500<<10 || st.Folded == 0 {
		t.Errorf("%d elements, %d bytes, %d folded", n.elements, n.bytes, st.Folded)
	}
	if l.Lanes() != 2 {
		t.Errorf("%d lanes, want 2: the attempts share one", l.Lanes())
	}
}

// crowded is a session whose labels would overlap where they stand: on
// three branches side by side at the same depths, and on entries one row
// apart in one lane.
var crowded = sessiontest.Crowded(6, "x2", "y2", "z2", "x3", "y3", "x4", "z4")

// TestLabelsApart: no label's text overlaps another's or any tag, mark or
// the drawing's edges; each moved text has its line back to its tag; the
// drawing is as wide as what it holds, and the same every time (golden).
func TestLabelsApart(t *testing.T) {
	got, st, _ := render(t, crowded, Options{Select: -1, Focus: -1})
	again, _, _ := render(t, crowded, Options{Select: -1, Focus: -1})
	if got != again {
		t.Fatal("two drawings of one tree differ")
	}
	file := filepath.Join("testdata", "crowded.golden.svg")
	if *update {
		os.WriteFile(file, []byte(got), 0o644)
	}
	if want, err := os.ReadFile(file); err != nil || got != string(want) {
		t.Errorf("the drawing differs from %s (go test ./shape -update and look): %v", file, err)
	}
	w, h := svgSize(t, got)
	texts := regexp.MustCompile(`<text class="label" x="(\d+)" y="(\d+)">([^<]*)</text>`).FindAllStringSubmatch(got, -1)
	tags := regexp.MustCompile(`<path class="mk tag" d="M(\d+) (\d+)h`).FindAllStringSubmatch(got, -1)
	if len(tags) != 7 || len(texts)+st.Crowded != 7 || len(texts) < 6 {
		t.Fatalf("%d tags, %d texts, %d crowded out; want 7 tags and at most one text left out", len(tags), len(texts), st.Crowded)
	}
	var boxes []box
	for _, m := range texts {
		x, y := atoi(t, m[1]), atoi(t, m[2])
		b := box{x, y - 9, x + textWidth(html.UnescapeString(m[3])), y + 3}
		if b.x0 < 0 || b.y0 < 0 || b.x1 > w || b.y1 > h {
			t.Errorf("label %q at %v leaves the %dx%d drawing", m[3], b, w, h)
		}
		for _, o := range boxes {
			if b.overlaps(o) {
				t.Errorf("label %q at %v overlaps another at %v", m[3], b, o)
			}
		}
		boxes = append(boxes, b)
	}
	for _, m := range tags {
		tg := box{atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[1]) + 15, atoi(t, m[2]) + 10}
		for _, b := range boxes {
			if b.overlaps(tg) {
				t.Errorf("a label at %v covers the tag at %v", b, tg)
			}
		}
	}
	// The labels stood on one another before: some moved, each with its line.
	if n := strings.Count(got, `class="lead"`); n == 0 || n > len(texts) {
		t.Errorf("%d lines to moved labels", n)
	}
}

func svgSize(t *testing.T, svg string) (int, int) {
	t.Helper()
	m := regexp.MustCompile(`width="(\d+)" height="(\d+)"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatal("no size")
	}
	return atoi(t, m[1]), atoi(t, m[2])
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Place returns the row and lane of entry pos.
func (l *Layout) Place(pos int) (row, lane int) { return int(l.row[pos]), int(l.lane[pos]) }

// Lanes returns the number of lanes the layout uses.
func (l *Layout) Lanes() int { return l.lanes }
