// Package shape draws the shape of a session tree as SVG: its linear runs
// as segments (one row each, in the order they began in the file, so pi's
// appends never move what is drawn), branch points, the path to the leaf,
// abandoned branches, labels, compactions and branch summaries as marks that
// differ in shape, not only in colour.
package shape

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/piweb/piweb/sessions"
)

// Segment is a drawn run of entries: each after its first is the only
// child of the one before, in the same lane. A segment breaks where an
// entry has several children (a branch point: each child begins one) and
// where a run must change lane.
type Segment struct {
	First, Last int // positions of its first and last entries
	Entries     int
	Parent      int    // the segment it hangs from, -1 for a root
	From        int    // the entry it hangs from (its parent segment's last), -1 for a root
	Lane, Row   int    // where its first entry is drawn
	Label       string // the first label in force in the run, "" for none
	Labels      int    // labeled entries in the run
	Compactions int
	Summary     bool // the run starts with a branch summary
	Summaries   int  // branch summaries in the run
	Kids        int  // segments hanging from its end
}

// Layout is a session's entries placed on a grid, and its segments.
type Layout struct {
	s     *sessions.Session
	Segs  []Segment
	seg   []int32 // entry position → its segment
	row   []int32 // entry position → its row: its depth
	lane  []int32 // entry position → its lane
	lanes int
}

// New lays out s in O(entries log entries), without recursion. Each entry
// is placed from the entries before it in the file alone, so pi's appends
// never move anything drawn: its row is its parent's row + 1 (roots at 0);
// its lane is its parent's when it is the parent's first child and nothing
// lies below the parent in that lane, else the nearest lane with nothing at
// or below its row (to the right on a tie). An entry whose parent comes
// later in the file (an orphan adopted in a damaged file) is placed right
// after its parent.
func New(s *sessions.Session) *Layout {
	n := s.Len()
	l := &Layout{s: s, seg: make([]int32, n), row: make([]int32, n), lane: make([]int32, n)}
	first := make([]int32, n) // each entry's first child in the file
	placed := make([]bool, n)
	for i := range n {
		first[i] = -1
	}
	for i := range n {
		if p := s.Parent(i); p >= 0 && first[p] < 0 {
			first[p] = int32(i)
		}
	}
	free := newLanes(n + 1)
	place := func(i int) {
		p := s.Parent(i)
		r := int32(0)
		want := 0
		if p >= 0 {
			r = l.row[p] + 1
			want = int(l.lane[p])
		}
		lane := -1
		if p >= 0 && int(first[p]) == i && free.bottom(want) == l.row[p] {
			lane = want
		} else {
			lane = free.nearest(want, r)
		}
		l.row[i], l.lane[i] = r, int32(lane)
		free.set(lane, r)
		l.lanes = max(l.lanes, lane+1)
		placed[i] = true
	}
	var waiting map[int][]int // orphans by the parent they wait for
	for i := range n {
		if p := s.Parent(i); p >= 0 && !placed[p] {
			if waiting == nil {
				waiting = map[int][]int{}
			}
			waiting[p] = append(waiting[p], i)
			continue
		}
		place(i)
		if waiting == nil {
			continue
		}
		stack := []int{i}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, c := range waiting[v] {
				place(c)
				stack = append(stack, c)
			}
			delete(waiting, v)
		}
	}
	// Segments in pre-order: a segment's parent comes before it.
	s.Walk(func(i, _ int) bool {
		if !placed[i] { // cannot happen: cycles were broken when the tree was built
			return false
		}
		p := s.Parent(i)
		if p >= 0 && len(s.Children(p)) == 1 && l.lane[p] == l.lane[i] {
			k := l.seg[p]
			l.seg[i] = k
			sg := &l.Segs[k]
			sg.Last, sg.Entries = i, sg.Entries+1
		} else {
			sg := Segment{First: i, Last: i, Entries: 1, Parent: -1, From: -1, Lane: int(l.lane[i]), Row: int(l.row[i])}
			if p >= 0 {
				sg.Parent, sg.From = int(l.seg[p]), p
				l.Segs[sg.Parent].Kids++
			}
			l.seg[i] = int32(len(l.Segs))
			l.Segs = append(l.Segs, sg)
		}
		sg := &l.Segs[l.seg[i]]
		if lb := s.LabelOf(i); lb != "" {
			sg.Labels++
			if sg.Label == "" {
				sg.Label = lb
			}
		}
		switch s.Entries[i].Type {
		case sessions.TypeCompaction:
			sg.Compactions++
		case sessions.TypeBranchSummary:
			sg.Summaries++
			if sg.First == i {
				sg.Summary = true
			}
		}
		return true
	})
	return l
}

// RowHeight returns the height of a row in the drawing: 12 up to 400 rows
// deep, then 6, 3 and 2 from 1,200 and 4,000 rows, so that a deep session
// stays a picture. It depends on the deepest entry alone: drawn things
// move only when pi's appends take a session past one of those depths.
func (l *Layout) RowHeight() int {
	deepest := int32(0)
	for _, r := range l.row {
		deepest = max(deepest, r)
	}
	switch {
	case deepest < 400:
		return 12
	case deepest < 1200:
		return 6
	case deepest < 4000:
		return 3
	}
	return 2
}

// lanes keeps the lowest row taken in each lane (-1 for none) in a tree of
// minimums, to find the nearest lane free at and below a row in O(log n).
type lanes struct {
	size int
	min  []int32 // min[size+k] is lane k's lowest row; min[j] the least of its two children
}

func newLanes(n int) *lanes {
	size := 1
	for size < n {
		size *= 2
	}
	f := &lanes{size: size, min: make([]int32, 2*size)}
	for j := range f.min {
		f.min[j] = -1
	}
	return f
}

func (f *lanes) bottom(lane int) int32 { return f.min[f.size+lane] }

func (f *lanes) set(lane int, row int32) {
	j := f.size + lane
	if f.min[j] >= row {
		return
	}
	f.min[j] = row
	for j /= 2; j >= 1; j /= 2 {
		f.min[j] = min(f.min[2*j], f.min[2*j+1])
	}
}

// nearest returns the lane nearest to want whose lowest row is above r
// (to the right on a tie).
func (f *lanes) nearest(want int, r int32) int {
	right := f.search(want, r, true)
	left := f.search(want, r, false)
	switch {
	case left < 0:
		return right
	case right < 0 || want-left < right-want:
		return left
	}
	return right
}

// search finds the first free lane at or after from (up), or the last one
// at or before it (down); -1 when there is none.
func (f *lanes) search(from int, r int32, up bool) int {
	// Walk the leaf's ancestors to the first sibling subtree on the wanted
	// side holding a free lane, then descend into it.
	j := f.size + from
	if f.min[j] < r {
		return from
	}
	for j > 1 {
		sib := j ^ 1
		if (up && j&1 == 0 || !up && j&1 == 1) && f.min[sib] < r {
			j = sib
			for j < f.size {
				if up {
					j = 2 * j
					if f.min[j] >= r {
						j++
					}
				} else {
					j = 2*j + 1
					if f.min[j] >= r {
						j--
					}
				}
			}
			return j - f.size
		}
		j /= 2
	}
	return -1
}

// Of returns the segment of entry pos, -1 for none.
func (l *Layout) Of(pos int) int {
	if pos < 0 || pos >= len(l.seg) {
		return -1
	}
	return int(l.seg[pos])
}

// Options say what a drawing highlights.
type Options struct {
	Leaf   int   // the entry whose path stands out (the session's leaf)
	Select int   // the selected entry, -1 for none
	Hits   []int // entries a search found, marked on the map
	Max    int   // segments drawn at most (default 350: about 1,500 elements with the marks); the rest fold into "+k" at their parents
	Focus  int   // an entry whose subtree is drawn first within the budget (zooming in fetches it), -1 for none
	// Text gives the words shown on hovering a segment (its first user
	// message); nil shows none.
	Text func(pos int) string
}

// Stats say what a drawing holds.
type Stats struct {
	Segments, Folded int
	Marks            int // labels, compactions, summaries and hits drawn
	Crowded          int // labels whose text found no free place (their tags are drawn)
}

const (
	laneW    = 16
	left     = 14
	top      = 14
	maxMarks = 120 // labels, compactions, summaries and hits drawn at most
	maxHits  = 100
)

// Render writes the layout as one SVG element: each segment a group
// (data-entry its last entry, data-first its first) holding its line (from
// the entry it hangs from) and its marks; the path to o.Leaf thick, other
// segments dashed; marks of distinct shapes: a root (triangle), a branch
// point (ring), the leaf (ringed dot), a label (tag and its text), a
// compaction (bow tie), a branch summary (diamond), a search hit (bar),
// the selected entry (square).
func (l *Layout) Render(w io.Writer, o Options) (Stats, error) {
	s := l.s
	if o.Max <= 0 {
		o.Max = 350
	}
	onEntry := make([]bool, s.Len())
	for v := o.Leaf; v >= 0 && v < s.Len(); v = s.Parent(v) {
		onEntry[v] = true
	}
	onPath := make([]bool, len(l.Segs))
	for k := range l.Segs {
		onPath[k] = onEntry[l.Segs[k].First]
	}
	sel := l.Of(o.Select)
	shown := l.keep(o.Max, onPath, sel, l.Of(o.Focus))
	folded := make([]int, len(l.Segs))
	st := Stats{}
	usedLane := make([]bool, l.lanes)
	maxRow := 0
	for k, sg := range l.Segs {
		if !shown[k] {
			st.Folded++
			a := sg.Parent
			for a >= 0 && !shown[a] {
				a = l.Segs[a].Parent
			}
			if a >= 0 {
				folded[a]++
			}
			continue
		}
		st.Segments++
		usedLane[sg.Lane] = true
		if sg.From >= 0 {
			usedLane[l.lane[sg.From]] = true
		}
		maxRow = max(maxRow, int(l.row[sg.Last]))
	}
	// Lanes are drawn where they are unless segments folded: then the
	// lanes left empty close up.
	laneX := make([]int, l.lanes)
	nx := 0
	for k := range laneX {
		laneX[k] = left + nx*laneW
		if usedLane[k] || st.Folded == 0 {
			nx++
		}
	}
	x := func(pos int) int { return laneX[l.lane[pos]] }
	rowH := l.RowHeight()
	y := func(pos int) int { return top + int(l.row[pos])*rowH }
	// Marks inside the runs: hits, then labels, compactions and summaries
	// of the path's segments first, as far as the budget goes.
	var marks []int
	hit := map[int]bool{}
	for _, h := range o.Hits {
		if h >= 0 && h < s.Len() && len(hit) < maxHits && shown[l.seg[h]] && !hit[h] {
			hit[h] = true
			marks = append(marks, h)
		}
	}
	budget := maxMarks - len(marks)
	for pass := 0; pass < 2 && budget > 0; pass++ {
		for k, sg := range l.Segs {
			if !shown[k] || onPath[k] != (pass == 0) || sg.Labels+sg.Compactions+sg.Summaries == 0 {
				continue
			}
			for i := sg.First; budget > 0; i = s.Children(i)[0] {
				if e := &s.Entries[i]; !hit[i] && (s.LabelOf(i) != "" || e.Type == sessions.TypeCompaction || e.Type == sessions.TypeBranchSummary) {
					marks = append(marks, i)
					budget--
				}
				if i == sg.Last {
					break
				}
			}
		}
	}
	height := top*2 + (maxRow+1)*rowH
	// A shown segment that is the only one drawn below its parent, in the
	// parent's lane and of its kind (path or not), joins the parent's run:
	// one line, its folded branches counted together.
	kids := make([]int32, len(l.Segs))
	for k, sg := range l.Segs {
		if shown[k] && sg.Parent >= 0 {
			kids[sg.Parent]++
		}
	}
	type run struct {
		tail, entries, folded int
		label                 string
		sel                   bool
	}
	head := make([]int32, len(l.Segs))
	runs := map[int]*run{}
	var order []int
	for k, sg := range l.Segs {
		if !shown[k] {
			continue
		}
		h := k
		if p := sg.Parent; p >= 0 && kids[p] == 1 && onPath[p] == onPath[k] && l.lane[sg.First] == l.lane[l.Segs[p].Last] {
			h = int(head[p])
		} else {
			runs[k] = &run{}
			order = append(order, k)
		}
		head[k] = int32(h)
		r := runs[h]
		r.tail, r.entries, r.folded = k, r.entries+sg.Entries, r.folded+folded[k]
		r.sel = r.sel || k == sel
		if r.label == "" {
			r.label = sg.Label
		}
	}
	leafRun := -1
	if o.Leaf >= 0 && o.Leaf < s.Len() && shown[l.seg[o.Leaf]] {
		leafRun = int(head[l.seg[o.Leaf]])
	}
	// Marks inside the runs on top, each naming its own entry; labels
	// first, so that a label's tag reaching into the next lane does not
	// hide a mark there.
	slices.SortStableFunc(marks, func(a, b int) int {
		return cmp.Compare(min(1, len(s.LabelOf(b))), min(1, len(s.LabelOf(a))))
	})
	// The labels' texts go where nothing else is: the marks drawn at
	// entries are in the way, lines are not (a text has a halo).
	width := left*2 + nx*laneW
	var in []box
	for _, k := range order {
		sg, r := l.Segs[k], runs[k]
		last := l.Segs[r.tail].Last
		if sg.Parent < 0 {
			in = append(in, box{x(sg.First) - 6, y(sg.First) - 7, x(sg.First) + 7, y(sg.First) + 3})
		}
		if len(s.Children(last)) >= 2 {
			in = append(in, box{x(last) - 6, y(last) - 6, x(last) + 7, y(last) + 7})
		}
		if r.folded > 0 {
			b := box{x(last) + 8, y(last) + 3, x(last) + 8 + textWidth("+"+strconv.Itoa(r.folded)), y(last) + 15}
			in = append(in, b)
			width = max(width, b.x1+left)
		}
	}
	if leafRun >= 0 {
		in = append(in, box{x(o.Leaf) - 8, y(o.Leaf) - 8, x(o.Leaf) + 9, y(o.Leaf) + 9})
	}
	var anchors [][2]int
	var widths []int
	for _, i := range marks {
		if e := &s.Entries[i]; e.Type == sessions.TypeCompaction || e.Type == sessions.TypeBranchSummary || hit[i] {
			in = append(in, box{x(i) - 7, y(i) - 6, x(i) + 8, y(i) + 7})
		}
		if lb := s.LabelOf(i); lb != "" {
			t := oneLine(lb, 30)
			anchors = append(anchors, [2]int{x(i), y(i)})
			widths = append(widths, textWidth(t))
		}
	}
	places := placeLabels(anchors, widths, in, height)
	for k := range places {
		width = max(width, tagBox(anchors[k][0], anchors[k][1]).x1+left)
		if places[k].shown {
			width = max(width, places[k].box.x1+left)
		}
	}
	bw := &errWriter{w: w}
	bw.printf(`<svg xmlns="http://www.w3.org/2000/svg" class="map" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		width, height, width, height, attr(fmt.Sprintf("Map of the session: %d segments, %d entries", len(l.Segs), s.Len())))
	for _, k := range order {
		sg, r := l.Segs[k], runs[k]
		last := l.Segs[r.tail].Last
		cls := "seg"
		if onPath[k] {
			cls += " path"
		} else {
			cls += " off"
		}
		if r.sel {
			cls += " sel"
		}
		ref := l.ref(last)
		var hint strings.Builder
		fmt.Fprintf(&hint, "%s up to %s", plural(r.entries, "entry", "entries"), ref)
		switch {
		case onPath[k] && !onEntry[last]:
			hint.WriteString(" · the path pi resumes leaves it part way")
		case onPath[k]:
			hint.WriteString(" · on the path pi resumes")
		default:
			hint.WriteString(" · off the path pi resumes")
		}
		if r.label != "" {
			fmt.Fprintf(&hint, " · labeled “%s”", oneLine(r.label, 60))
		}
		if r.folded > 0 {
			fmt.Fprintf(&hint, " · %s folded here (zoom in to draw them)", plural(r.folded, "branch", "branches"))
		}
		if o.Text != nil {
			if text := oneLine(o.Text(l.firstUser(k)), 120); text != "" {
				hint.WriteString("\n" + text)
			}
		}
		up := ""
		if sg.Parent >= 0 {
			up = ` data-up="` + attr(l.ref(l.Segs[sg.Parent].Last)) + `"`
		}
		bw.printf(`<g class="%s" data-entry="%s" data-first="%s"%s><title>%s</title>`, cls, attr(ref), attr(l.ref(sg.First)), up, esc(hint.String()))
		// The line: from the entry it hangs from, then down its lane. When
		// the path ends inside it, the rest is drawn abandoned.
		fx, fy, lx, ly := x(sg.First), y(sg.First), x(last), y(last)
		var d strings.Builder
		if sg.From >= 0 {
			fmt.Fprintf(&d, "M%d %dL%d %d", x(sg.From), y(sg.From), fx, fy)
		} else {
			fmt.Fprintf(&d, "M%d %d", fx, fy)
		}
		switch {
		case onPath[k] && !onEntry[last]:
			fmt.Fprintf(&d, "V%d", y(o.Leaf))
			bw.printf(`<path class="ln" d="%s"/><path class="ln rest" d="M%d %dV%d"/>`, d.String(), lx, y(o.Leaf), ly)
		default:
			if ly != fy {
				fmt.Fprintf(&d, "V%d", ly)
			}
			bw.printf(`<path class="ln" d="%s"/>`, d.String())
		}
		if sg.Parent < 0 { // a root: a triangle pointing down
			bw.printf(`<path class="mk root" d="M%d %dh12l-6 9z"/>`, fx-6, fy-7)
		}
		switch {
		case len(s.Children(last)) >= 2: // a branch point: a ring
			bw.printf(`<circle class="mk fork" cx="%d" cy="%d" r="5"/>`, lx, ly)
		case onPath[k] && !onEntry[last]: // the end of a run the path leaves
			bw.printf(`<circle class="mk run rest" cx="%d" cy="%d" r="3"/>`, lx, ly)
		case o.Leaf != last: // the end of a run
			bw.printf(`<circle class="mk run" cx="%d" cy="%d" r="3"/>`, lx, ly)
		}
		if leafRun == k { // the leaf: a ringed dot
			bw.printf(`<circle class="mk leaf" cx="%d" cy="%d" r="7"/><circle class="mk dot" cx="%d" cy="%d" r="3"/>`, x(o.Leaf), y(o.Leaf), x(o.Leaf), y(o.Leaf))
		}
		if r.sel { // the selected entry: a square
			bw.printf(`<rect class="mk sel" x="%d" y="%d" width="16" height="16"/>`, x(o.Select)-8, y(o.Select)-8)
		}
		if r.folded > 0 {
			bw.printf(`<text class="more" x="%d" y="%d" data-focus="%s">+%d</text>`, lx+8, ly+12, attr(l.ref(sg.Last)), r.folded)
		}
		bw.printf(`</g>`)
	}
	n := 0 // labels drawn so far
	for _, i := range marks {
		var p *placement
		if s.LabelOf(i) != "" {
			p = &places[n]
			n++
		}
		l.mark(bw, i, x(i), y(i), hit[i], p)
	}
	bw.printf(`</svg>`)
	st.Marks = len(marks)
	for _, p := range places {
		if !p.shown {
			st.Crowded++
		}
	}
	return st, bw.err
}

// mark draws the mark of entry i inside a run, as a group naming the entry:
// a search hit's bar, a label's tag and text (placed by p: moved, with a
// line back to its tag, or left out), a compaction's bow tie, a branch
// summary's diamond.
func (l *Layout) mark(bw *errWriter, i, cx, cy int, hit bool, p *placement) {
	s := l.s
	e := &s.Entries[i]
	lb := s.LabelOf(i)
	ref := l.ref(i)
	what := "entry " + ref
	switch {
	case e.Type == sessions.TypeCompaction:
		what = "compaction " + ref
	case e.Type == sessions.TypeBranchSummary:
		what = "branch summary " + ref
	}
	if lb != "" {
		what += ", labeled “" + oneLine(lb, 60) + "”"
	}
	if hit {
		what = "search hit: " + what
	}
	bw.printf(`<g class="mark" data-entry="%s"><title>%s</title>`, attr(ref), esc(strings.ToUpper(what[:1])+what[1:]))
	switch e.Type {
	case sessions.TypeCompaction:
		bw.printf(`<path class="mk compaction" d="M%d %dl12 10v-10l-12 10z"/>`, cx-6, cy-5)
	case sessions.TypeBranchSummary:
		bw.printf(`<path class="mk summary" d="M%d %dl6 6l-6 6l-6 -6z"/>`, cx, cy-6)
	}
	if hit {
		bw.printf(`<path class="mk hit" d="M%d %dh14"/>`, cx-7, cy)
	}
	if lb != "" {
		bw.printf(`<path class="mk tag" d="M%d %dh10l5 5l-5 5h-10z"/>`, cx+8, cy-5)
		if p != nil && p.shown {
			if p.dy != 0 {
				bw.printf(`<path class="lead" d="M%d %dL%d %d"/>`, cx+23, cy, cx+labelDX-2, cy+p.dy)
			}
			bw.printf(`<text class="label" x="%d" y="%d">%s</text>`, cx+labelDX, cy+p.dy+4, esc(oneLine(lb, 30)))
		}
	}
	bw.printf(`</g>`)
}

// ref is the id an entry is linked by: its id, or ~position for an entry
// without one (as the page names it).
func (l *Layout) ref(pos int) string {
	if id := l.s.Entries[pos].ID; id != "" {
		return id
	}
	return "~" + strconv.Itoa(pos)
}

// firstUser is the first user message of segment k (its first entry when
// it has none), looked up in the index without reading the file.
func (l *Layout) firstUser(k int) int {
	sg := &l.Segs[k]
	for i, steps := sg.First, 0; i >= 0 && steps < 10000; steps++ {
		if e := &l.s.Entries[i]; e.Type == sessions.TypeMessage && e.Role == sessions.RoleUser {
			return i
		}
		if i == sg.Last || len(l.s.Children(i)) != 1 {
			break
		}
		i = l.s.Children(i)[0]
	}
	return sg.First
}

// keep chooses the segments drawn when there are more than max: those on
// the path and the selected one, those with labels, compactions or
// summaries, then the largest subtrees.
func (l *Layout) keep(limit int, onPath []bool, sel, focus int) []bool {
	shown := make([]bool, len(l.Segs))
	if len(l.Segs) <= limit {
		for k := range shown {
			shown[k] = true
		}
		return shown
	}
	size := make([]int, len(l.Segs)) // entries under each segment, itself included
	for k := len(l.Segs) - 1; k >= 0; k-- {
		size[k] += l.Segs[k].Entries
		if p := l.Segs[k].Parent; p >= 0 {
			size[p] += size[k]
		}
	}
	// n counts what is drawn: the path's segments join into runs as long
	// as nothing branching off them is drawn, so they cost nothing; a
	// segment costs one, and one more when it hangs from the path (it
	// splits a run of it in two).
	n := 0
	mark := func(k int) {
		for ; k >= 0 && !shown[k]; k = l.Segs[k].Parent { // with its ancestors: a kept segment hangs from kept ones
			shown[k] = true
			if !onPath[k] {
				n++
				if p := l.Segs[k].Parent; p >= 0 && onPath[p] {
					n++
				}
			}
		}
	}
	for k := range l.Segs {
		if onPath[k] || k == sel {
			mark(k)
		}
	}
	if focus >= 0 { // the focused segment's subtree, nearest first, as far as the budget goes
		kids := make([][]int, len(l.Segs))
		for k, sg := range l.Segs {
			if sg.Parent >= 0 {
				kids[sg.Parent] = append(kids[sg.Parent], k)
			}
		}
		queue := []int{focus}
		for len(queue) > 0 && n < limit {
			k := queue[0]
			queue = queue[1:]
			mark(k)
			queue = append(queue, kids[k]...)
		}
	}
	var rest []int
	for k, sg := range l.Segs {
		if !shown[k] {
			if sg.Labels > 0 || sg.Compactions > 0 || sg.Summaries > 0 {
				if n < limit {
					mark(k)
				}
				continue
			}
			rest = append(rest, k)
		}
	}
	slices.SortStableFunc(rest, func(a, b int) int { return cmp.Compare(size[b], size[a]) })
	for _, k := range rest {
		if n >= limit {
			break
		}
		mark(k)
	}
	return shown
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// esc escapes session text for SVG.
func esc(s string) string { return html.EscapeString(strings.ToValidUTF8(s, "\uFFFD")) }

// attr escapes an attribute value.
func attr(s string) string { return esc(s) }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// oneLine is the first n runes of s on one line.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utfLen(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func utfLen(s string) int { return len([]rune(s)) }
