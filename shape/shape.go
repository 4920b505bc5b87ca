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

// Segment is a run of entries, each the first child (in the file) of the
// one before; a later child starts a segment of its own, which branches
// off it. So a segment, once drawn, only ever grows at its end.
type Segment struct {
	First, Last int // positions of its first and last entries
	Entries     int
	Parent      int // the segment it hangs from, -1 for a root
	From        int // the entry of the parent segment it branches from, -1 for a root
	Lane, Row   int
	Label       string // the first label in force in the run, "" for none
	Labels      int    // labeled entries in the run
	Compactions int
	Summary     bool // the run starts with a branch summary
	Kids        int  // segments hanging from its end
}

// Layout is a session's segments, placed.
type Layout struct {
	s    *sessions.Session
	Segs []Segment
	seg  []int32 // entry position → its segment
}

// New lays out s: O(entries), without recursion. Segments are numbered in
// the file order of their first entries, each in a lane of its own: pi's
// appends extend a segment or add one at the end, and never move another.
func New(s *sessions.Session) *Layout {
	n := s.Len()
	l := &Layout{s: s, seg: make([]int32, n)}
	for i := range l.seg {
		l.seg[i] = -1
	}
	lanes := 0
	// The first child of each entry in the file (children lists may be long:
	// a root with thousands of branches).
	first := make([]int32, n)
	for i := range first {
		first[i] = -1
	}
	for i := range n {
		if p := s.Parent(i); p >= 0 && first[p] < 0 {
			first[p] = int32(i)
		}
	}
	// Entries in file order: a parent comes before its children in pi's files;
	// one that does not (an orphan adopted later) is placed when its parent is.
	var pending []int
	place := func(i int) bool {
		p := s.Parent(i)
		if p >= 0 && l.seg[p] < 0 {
			return false
		}
		switch {
		case p >= 0 && int(first[p]) == i:
			k := int(l.seg[p]) // the run goes on through the first child in the file
			l.seg[i] = int32(k)
			sg := &l.Segs[k]
			sg.Last, sg.Entries = i, sg.Entries+1
		default:
			// A later child branches off: a segment of its own, in a lane of
			// its own, at the end. Nothing drawn before moves.
			sg := Segment{First: i, Last: i, Entries: 1, Parent: -1, From: -1, Row: len(l.Segs), Lane: lanes}
			lanes++
			if p >= 0 {
				sg.Parent = int(l.seg[p])
				sg.From = p
				l.Segs[sg.Parent].Kids++
			}
			l.seg[i] = int32(len(l.Segs))
			l.Segs = append(l.Segs, sg)
		}
		k := l.seg[i]
		sg := &l.Segs[k]
		e := &s.Entries[i]
		if lb := s.LabelOf(i); lb != "" {
			sg.Labels++
			if sg.Label == "" {
				sg.Label = lb
			}
		}
		switch e.Type {
		case sessions.TypeCompaction:
			sg.Compactions++
		case sessions.TypeBranchSummary:
			if sg.First == i {
				sg.Summary = true
			}
		}
		return true
	}
	for i := range n {
		if !place(i) {
			pending = append(pending, i)
		}
	}
	for len(pending) > 0 { // orphans adopted by a later parent: place them once it is
		next := pending[:0]
		for _, i := range pending {
			if !place(i) {
				next = append(next, i)
			}
		}
		if len(next) == len(pending) {
			break // cannot happen: cycles were broken when the tree was built
		}
		pending = next
	}
	return l
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
	Leaf   int // the entry whose path stands out (the session's leaf)
	Select int // the selected entry, -1 for none
	Max    int // segments drawn at most (default 1000); the rest fold into "+k" at their parents
	Focus  int // an entry whose subtree is drawn first within the budget (zooming in fetches it), -1 for none
	// Text gives the words shown beside a segment (its first user message);
	// nil shows none.
	Text func(pos int) string
}

// Stats say what a drawing holds.
type Stats struct {
	Segments, Folded int
}

const (
	rowH  = 22
	laneW = 16
	left  = 14
	top   = 14
)

// Render writes the layout as one SVG element.
func (l *Layout) Render(w io.Writer, o Options) (Stats, error) {
	s := l.s
	if o.Max <= 0 {
		o.Max = 1000
	}
	// A segment stands out when it ends on the leaf's path; one the path
	// leaves part way (its tail abandoned) is drawn as abandoned, and the
	// segment the path goes on in stands out from the entry it branches from.
	// keep() still keeps every segment the path runs through.
	through := make([]bool, len(l.Segs))
	onEntry := make([]bool, s.Len())
	for v := o.Leaf; v >= 0 && v < s.Len(); v = s.Parent(v) {
		onEntry[v] = true
		through[l.seg[v]] = true
	}
	onPath := make([]bool, len(l.Segs))
	for k := range l.Segs {
		onPath[k] = onEntry[l.Segs[k].Last]
	}
	sel := l.Of(o.Select)
	shown := l.keep(o.Max, through, sel, l.Of(o.Focus))
	// Rows and lanes of the segments shown, packed.
	row := make([]int, len(l.Segs))
	laneOf := map[int]int{}
	rows, lanes := 0, 0
	folded := make([]int, len(l.Segs))
	st := Stats{}
	for k := range l.Segs {
		if !shown[k] {
			st.Folded++
			a := l.Segs[k].Parent
			for a >= 0 && !shown[a] {
				a = l.Segs[a].Parent
			}
			if a >= 0 {
				folded[a]++
			}
			continue
		}
		row[k] = rows
		rows++
		if _, ok := laneOf[l.Segs[k].Lane]; !ok {
			laneOf[l.Segs[k].Lane] = lanes
			lanes++
		}
	}
	st.Segments = rows
	x := func(k int) int { return left + laneOf[l.Segs[k].Lane]*laneW }
	y := func(k int) int { return top + row[k]*rowH }
	textX := left + lanes*laneW + 10
	width := textX + 420
	height := top*2 + max(rows, 1)*rowH
	bw := &errWriter{w: w}
	bw.printf(`<svg xmlns="http://www.w3.org/2000/svg" class="map" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		width, height, width, height, attr(fmt.Sprintf("Map of the session: %d segments, %d entries", len(l.Segs), s.Len())))
	// Edges first, under the marks: down the parent's lane, then across.
	bw.printf(`<g class="edges">`)
	for k, sg := range l.Segs {
		if !shown[k] || sg.Parent < 0 {
			continue
		}
		p := sg.Parent
		cls := "edge"
		if !onPath[k] {
			cls += " off"
		}
		bw.printf(`<path class="%s" d="M%d %dV%dH%d"/>`, cls, x(p), y(p), y(k), x(k))
	}
	bw.printf(`</g><g class="segs">`)
	for k, sg := range l.Segs {
		if !shown[k] {
			continue
		}
		cls := "seg"
		if onPath[k] {
			cls += " path"
		} else {
			cls += " off"
		}
		if k == sel {
			cls += " sel"
		}
		last := s.Entries[sg.Last]
		ref := last.ID
		if ref == "" {
			ref = "~" + strconv.Itoa(sg.Last)
		}
		var hint strings.Builder
		fmt.Fprintf(&hint, "%s · %s", plural(sg.Entries, "entry", "entries"), ref)
		if sg.Label != "" {
			fmt.Fprintf(&hint, " · [%s]", sg.Label)
		}
		text := ""
		if o.Text != nil {
			text = oneLine(o.Text(l.firstUser(k)), 70)
		}
		if text != "" {
			hint.WriteString("\n" + text)
		}
		cx, cy := x(k), y(k)
		bw.printf(`<g class="%s" data-entry="%s" data-first="%s" tabindex="0"><title>%s</title>`, cls, attr(ref), attr(s.Entries[sg.First].ID), esc(hint.String()))
		// The segment: a dot sized by its length (longer runs, bigger dots).
		r := 3 + min(5, len(strconv.Itoa(sg.Entries)))
		switch {
		case sg.Summary: // a branch summary starts it: a diamond
			bw.printf(`<path class="mk summary" d="M%d %dl%d %dl%d %dl%d %dz"/>`, cx, cy-r-1, r+1, r+1, -(r + 1), r+1, -(r + 1), -(r + 1))
		default:
			bw.printf(`<circle class="mk run" cx="%d" cy="%d" r="%d"/>`, cx, cy, r)
		}
		if sg.Kids > 0 { // branches leave it: a ring
			bw.printf(`<circle class="mk fork" cx="%d" cy="%d" r="%d"/>`, cx, cy, r+4)
		}
		if sg.Compactions > 0 { // a bow tie beside it
			bw.printf(`<path class="mk compaction" d="M%d %dl8 8v-8l-8 8z"/>`, cx+r+3, cy-4)
		}
		if o.Leaf >= 0 && l.Of(o.Leaf) == k && len(s.Children(o.Leaf)) == 0 { // the leaf: a ringed dot at the run's end
			bw.printf(`<circle class="mk leaf" cx="%d" cy="%d" r="%d"/>`, cx, cy, r+2)
		}
		if k == sel {
			bw.printf(`<rect class="mk sel" x="%d" y="%d" width="%d" height="%d"/>`, cx-r-6, cy-r-6, 2*r+12, 2*r+12)
		}
		tx := textX
		if sg.Label != "" { // a tag with the label's text
			bw.printf(`<path class="mk tag" d="M%d %dh%dl5 5l-5 5h-%dz"/><text class="label" x="%d" y="%d">%s</text>`,
				tx, cy-5, 10, 10, tx+18, cy+4, esc(oneLine(sg.Label, 30)))
			tx += 24 + 7*min(utfLen(sg.Label), 30)
		}
		line := plural(sg.Entries, "entry", "entries")
		if f := folded[k]; f > 0 {
			line += fmt.Sprintf(" · +%d folded", f)
			bw.printf(`<text class="more" x="%d" y="%d" data-focus="%s">+%d</text>`, cx-4, cy+r+12, attr(ref), f)
		}
		if text != "" {
			line += " · " + text
		}
		bw.printf(`<text class="txt" x="%d" y="%d">%s</text>`, tx, cy+4, esc(line))
		bw.printf(`</g>`)
	}
	bw.printf(`</g></svg>`)
	return st, bw.err
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
	n := 0
	mark := func(k int) {
		for ; k >= 0 && !shown[k]; k = l.Segs[k].Parent { // with its ancestors: a kept segment hangs from kept ones
			shown[k] = true
			n++
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
			if sg.Labels > 0 || sg.Compactions > 0 || sg.Summary {
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
