package pitree

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// This file ports the layout of pi's /tree view (TreeList in
// modes/interactive/components/tree-selector.js of pi-coding-agent 1.6.0):
// flattenTree's order, applyFilter's visibility rules,
// recalculateVisualStructure's indents, connectors and gutters, and
// getEntryDisplayText's one-line previews. Structure comes from the index
// alone; previews read entry lines, and only for the rows a caller asks for.

// Filter selects which entries the tree shows, as pi's /tree filter modes do.
type Filter string

// pi's five filter modes.
const (
	// FilterDefault shows everything but settings and bookkeeping entries.
	FilterDefault Filter = "default"
	// FilterNoTools shows what the default does, minus tool results.
	FilterNoTools Filter = "no-tools"
	// FilterUserOnly shows user messages only.
	FilterUserOnly Filter = "user-only"
	// FilterLabeledOnly shows labeled entries only.
	FilterLabeledOnly Filter = "labeled-only"
	// FilterAll shows every entry but usage entries and tool-only assistant turns.
	FilterAll Filter = "all"
)

// Filters lists the filter modes in the order pi cycles through them.
var Filters = []Filter{FilterDefault, FilterNoTools, FilterUserOnly, FilterLabeledOnly, FilterAll}

// ErrFilter is returned for a filter name pi does not know.
var ErrFilter = errors.New("unknown tree filter")

// ParseFilter returns the filter named s; "" is the default.
func ParseFilter(s string) (Filter, error) {
	if s == "" {
		return FilterDefault, nil
	}
	for _, f := range Filters {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w %q (want default, no-tools, user-only, labeled-only or all)", ErrFilter, s)
}

// Tag returns the tag pi shows for f in the tree's status line ("" for the default).
func (f Filter) Tag() string {
	switch f {
	case FilterNoTools:
		return "no-tools"
	case FilterUserOnly:
		return "user"
	case FilterLabeledOnly:
		return "labeled"
	case FilterAll:
		return "all"
	}
	return ""
}

// Options says how to lay out a session's tree.
type Options struct {
	// Leaf is the position of the active leaf (s.Leaf() is pi's); -1, or an
	// entry without an id, means none. Note that the zero value is entry 0.
	Leaf int
	// Filter is the filter mode; "" means FilterDefault.
	Filter Filter
	// Search is pi's search query: whitespace-separated tokens that must all
	// occur, ignoring case, in an entry's searchable text.
	Search string
	// Folded holds the ids of folded entries; their descendants are hidden.
	Folded map[string]bool
	// Home is the home directory that tool-call previews shorten to "~", as
	// pi does with $HOME; "" leaves paths as they are.
	Home string
	// Index caches the session's searchable text across searches; nil reads every entry's line.
	Index *SearchIndex
}

// Connector is the branch glyph drawn just left of a row.
type Connector uint8

// Connectors.
const (
	// ConnNone draws no connector.
	ConnNone Connector = iota
	// ConnBranch draws "├─ ": a child of a branch point with siblings below it.
	ConnBranch
	// ConnLast draws "└─ ": the last child of a branch point.
	ConnLast
)

// Gutter is a vertical line column to the left of a row, left over from an
// ancestor's connector: at Level (in 3-column steps) pi draws "│" when Line
// is set (more siblings follow below) and blank space otherwise.
type Gutter struct {
	Level int
	Line  bool
}

// Row is one visible line of the tree.
type Row struct {
	Pos         int       // entry position in sessions.Session.Entries
	Indent      int       // display indent in levels; pi draws 3 columns per level
	Connector   Connector // connector at level Indent-1
	Gutters     []Gutter  // gutters, outermost first; the first one at a level wins
	Active      bool      // on the path from the root to the active leaf (pi's "• ")
	Leaf        bool      // the active leaf itself
	BranchPoint bool      // the entry has more than one child in the full tree
	Folded      bool      // folded: its descendants are hidden
	Foldable    bool      // pi would fold it: it has visible children and starts a segment
	Label       string    // the label in force as pi shows it, "" for none
	Labeled     bool      // a label is in force (its text may still be empty: pi's [] label)
	Preview     string    // pi's one-line text for the entry; "" until Previews fills it
}

// Prefix returns what pi draws before a row's label: the gutters and the
// connector (with its fold glyph), the fold marker of a folded root and
// the active-path marker.
func (r Row) Prefix() string {
	var b strings.Builder
	gut := make(map[int]bool, len(r.Gutters))
	seen := make(map[int]bool, len(r.Gutters))
	for _, g := range r.Gutters {
		if !seen[g.Level] {
			seen[g.Level] = true
			gut[g.Level] = g.Line
		}
	}
	for level := 0; level < r.Indent; level++ {
		switch {
		case seen[level]:
			if gut[level] {
				b.WriteString("│  ")
			} else {
				b.WriteString("   ")
			}
		case r.Connector != ConnNone && level == r.Indent-1:
			if r.Connector == ConnLast {
				b.WriteString("└")
			} else {
				b.WriteString("├")
			}
			switch {
			case r.Folded:
				b.WriteString("⊞ ")
			case r.Foldable:
				b.WriteString("⊟ ")
			default:
				b.WriteString("─ ")
			}
		default:
			b.WriteString("   ")
		}
	}
	if r.Folded && r.Connector == ConnNone {
		b.WriteString("⊞ ")
	}
	if r.Active {
		b.WriteString("• ")
	}
	return b.String()
}

// Text returns the row as pi draws it, without colors or the cursor column:
// prefix, "[label] " and preview.
func (r Row) Text() string {
	t := r.Prefix()
	if r.Labeled {
		t += "[" + r.Label + "] "
	}
	return t + r.Preview
}

// Layout is a session's tree laid out as pi's /tree view shows it. It is a
// snapshot that reads the Session's index: lay out again after
// Session.Update, and do not run Update while a Layout is in use. Its
// methods are safe for concurrent use.
type Layout struct {
	s      *sessions.Session
	opt    Options
	leaf   int
	active []bool // on the path from a root to the leaf, by position

	rows  []lrow
	rowOf []int32 // entry position → row index, -1 when not shown
	kidAt []int32 // visible children of row r: kids[kidAt[r]:kidAt[r+1]]
	kids  []int32
	roots []int32 // rows without a visible ancestor
	gut   []gnode // gutter lists, linked from a row to its outer gutters

	mu    sync.Mutex
	prev  []string // previews by row
	have  []bool   // previews filled
	calls map[int]map[string]string
	every map[string]string // every tool call of the session by id, once one was not found nearby

	noiseOnce sync.Once
	noise     []Run // runs of settings rows (noise.go), found on first use
}

// lrow is a row's structure, before a caller asks for its text.
type lrow struct {
	pos    int32
	parent int32 // the visible parent row, -1 for none
	indent int32 // pi's internal indent (display indent + 1 under multiple roots)
	gut    int32 // this row's gutter list, -1 for none
	cgut   int32 // the gutter list its children get
	bits   uint8
}

const (
	bitConnector = 1 << iota // pi's showConnector
	bitLast                  // pi's isLast
	bitBranched              // pi's justBranched
	bitVirtual               // pi's isVirtualRootChild
)

type gnode struct {
	level int32
	line  bool
	next  int32 // the outer gutter, -1 for none
}

// New lays out the tree as pi's /tree does. Structure comes from the
// index; r is read only when opt.Search is set (it may then not be nil).
func New(s *sessions.Session, r *sessions.Reader, opt Options) (*Layout, error) {
	if opt.Filter == "" {
		opt.Filter = FilterDefault
	}
	if _, err := ParseFilter(string(opt.Filter)); err != nil {
		return nil, err
	}
	if len(opt.Folded) > 0 {
		folded := make(map[string]bool, len(opt.Folded))
		for id, f := range opt.Folded {
			if f {
				folded[id] = true
			}
		}
		opt.Folded = folded // the caller may change its map
	}
	tokens := searchTokens(opt.Search)
	if len(tokens) > 0 && r == nil {
		return nil, errors.New("layout: a search needs a sessions.Reader")
	}
	n := len(s.Entries)
	leaf := opt.Leaf
	if leaf < 0 || leaf >= n || s.Entries[leaf].ID == "" {
		leaf = -1 // pi has no leaf (and no active path) when the last entry lacks an id
	}
	// The active path, which pi also sorts first among siblings.
	onPath := make([]bool, n)
	pathIDs := map[string]bool{}
	for v := leaf; v >= 0; v = s.Parent(v) {
		onPath[v] = true
		pathIDs[s.Entries[v].ID] = true
	}
	// pi keeps the path as a set of ids: an entry sharing an id with one on
	// the path (a duplicated line) is on it too.
	if len(pathIDs) > 0 {
		for i := range s.Entries {
			if id := s.Entries[i].ID; id != "" && pathIDs[id] {
				onPath[i] = true
			}
		}
	}
	l := &Layout{s: s, opt: opt, leaf: leaf, active: onPath}

	// flattenTree: pre-order, the branch holding the leaf first. Folding
	// hides every descendant of a folded entry (pi's skipSet).
	order := make([]int32, 0, n)
	hidden := make([]bool, n) // below a folded entry
	type item struct {
		pos  int
		skip bool
	}
	stack := make([]item, 0, 64)
	pushKids := func(list []int, skip bool) {
		// Push in reverse so they pop in order: the active one first, then pi's order.
		for k := len(list) - 1; k >= 0; k-- {
			if !onPath[list[k]] {
				stack = append(stack, item{list[k], skip})
			}
		}
		for _, c := range list {
			if onPath[c] {
				stack = append(stack, item{c, skip})
			}
		}
	}
	pushKids(s.Roots(), false)
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, int32(it.pos))
		hidden[it.pos] = it.skip
		skip := it.skip || len(opt.Folded) > 0 && opt.Folded[s.Entries[it.pos].ID]
		pushKids(s.Children(it.pos), skip)
	}

	// applyFilter: which entries show, in file order so reads go forward.
	visible := make([]bool, n)
	var sr *searcher
	if len(tokens) > 0 {
		sr = &searcher{r: r, tokens: tokens}
		if opt.Index != nil {
			sr.ix = opt.Index.catchUp(s, r)
		}
	}
	for i := range s.Entries {
		if hidden[i] || !l.passes(i) {
			continue
		}
		if sr != nil {
			ok, err := sr.match(i)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		visible[i] = true
	}

	// Rows, and each row's nearest visible ancestor. In pre-order a parent
	// comes before its children, so one pass carries the nearest visible
	// ancestor-or-self down without walking chains of hidden entries.
	l.rowOf = make([]int32, n)
	near := make([]int32, n) // row of the nearest visible ancestor-or-self, -1 for none
	for _, p := range order {
		up := int32(-1)
		if q := s.Parent(int(p)); q >= 0 {
			up = near[q]
		}
		l.rowOf[p] = -1
		near[p] = up
		if visible[p] {
			row := int32(len(l.rows))
			l.rows = append(l.rows, lrow{pos: p, parent: up, gut: -1, cgut: -1})
			l.rowOf[p] = row
			near[p] = row
		}
	}

	// Visible children of each row, in row order.
	nr := len(l.rows)
	l.kidAt = make([]int32, nr+1)
	for i := range l.rows {
		if p := l.rows[i].parent; p >= 0 {
			l.kidAt[p+1]++
		} else {
			l.roots = append(l.roots, int32(i))
		}
	}
	for i := 0; i < nr; i++ {
		l.kidAt[i+1] += l.kidAt[i]
	}
	l.kids = make([]int32, l.kidAt[nr])
	fill := make([]int32, nr)
	for i := range l.rows {
		if p := l.rows[i].parent; p >= 0 {
			l.kids[l.kidAt[p]+fill[p]] = int32(i)
			fill[p]++
		}
	}

	// recalculateVisualStructure, in row order: parents before children.
	multi := len(l.roots) > 1
	for k, ri := range l.roots {
		row := &l.rows[ri]
		if multi {
			row.indent = 1
			row.bits = bitConnector | bitBranched | bitVirtual
		}
		if k == len(l.roots)-1 {
			row.bits |= bitLast
		}
	}
	for i := range l.rows {
		row := &l.rows[i]
		if p := row.parent; p >= 0 {
			pr := &l.rows[p]
			nk := l.kidAt[p+1] - l.kidAt[p]
			row.indent = pr.indent
			if nk > 1 || pr.bits&bitBranched != 0 && pr.indent > 0 {
				row.indent++
			}
			if nk > 1 {
				row.bits |= bitConnector | bitBranched
			}
			if l.kids[l.kidAt[p+1]-1] == int32(i) {
				row.bits |= bitLast
			}
			row.gut = pr.cgut
		}
		row.cgut = row.gut
		if row.bits&bitConnector != 0 && row.bits&bitVirtual == 0 {
			pos := max(0, l.display(row.indent)-1)
			g := gnode{level: int32(pos), line: row.bits&bitLast == 0, next: row.gut}
			l.gut = append(l.gut, g)
			row.cgut = int32(len(l.gut) - 1)
		}
	}
	l.prev = make([]string, nr)
	l.have = make([]bool, nr)
	return l, nil
}

// display converts pi's internal indent to the drawn one: with several
// visible roots pi indents everything one level and then shifts it back.
func (l *Layout) display(indent int32) int {
	if len(l.roots) > 1 {
		return max(0, int(indent)-1)
	}
	return int(indent)
}

// passes applies pi's applyFilter rules (all but search and folding) to entry i.
func (l *Layout) passes(i int) bool {
	e := &l.s.Entries[i]
	if e.Type == sessions.TypeUsage {
		return false
	}
	// pi hides assistant turns with only tool calls unless they stopped
	// abnormally, and always shows the leaf.
	if e.Type == sessions.TypeMessage && e.Role == sessions.RoleAssistant && i != l.leaf &&
		!e.Flags.Has(sessions.FlagText) && !e.Flags.Has(sessions.FlagOddStop) {
		return false
	}
	settings := false
	switch e.Type {
	case sessions.TypeLabel, sessions.TypeContextEdit, sessions.TypeCustom, sessions.TypeModelChange, sessions.TypeThinking, sessions.TypeSessionInfo:
		settings = true
	}
	switch l.opt.Filter {
	case FilterUserOnly:
		return e.Type == sessions.TypeMessage && e.Role == sessions.RoleUser
	case FilterNoTools:
		return !settings && !(e.Type == sessions.TypeMessage && e.Role == sessions.RoleToolResult)
	case FilterLabeledOnly:
		return l.s.LabelOn(i) >= 0
	case FilterAll:
		return true
	}
	return !settings
}

// Len returns the number of visible rows.
func (l *Layout) Len() int { return len(l.rows) }

// Leaf returns the position of the active leaf, or -1 for none.
func (l *Layout) Leaf() int { return l.leaf }

// Rows returns up to n rows from row start, with the previews filled so far.
func (l *Layout) Rows(start, n int) []Row {
	start, end := l.clamp(start, n)
	out := make([]Row, 0, end-start)
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := start; i < end; i++ {
		out = append(out, l.row(i))
	}
	return out
}

func (l *Layout) clamp(start, n int) (int, int) {
	start = max(0, min(start, len(l.rows)))
	return start, start + max(0, min(n, len(l.rows)-start))
}

// row builds the public Row i; l.mu is held.
func (l *Layout) row(i int) Row {
	lr := &l.rows[i]
	pos := int(lr.pos)
	e := &l.s.Entries[pos]
	r := Row{
		Pos:         pos,
		Indent:      l.display(lr.indent),
		Active:      l.active[pos],
		Leaf:        pos == l.leaf,
		BranchPoint: len(l.s.Children(pos)) > 1,
		Folded:      len(l.opt.Folded) > 0 && l.opt.Folded[e.ID],
		Foldable:    l.Foldable(i),
		Label:       l.s.LabelOf(pos),
		Labeled:     l.s.LabelOn(pos) >= 0,
		Preview:     l.prev[i],
	}
	if lr.bits&bitConnector != 0 && lr.bits&bitVirtual == 0 {
		r.Connector = ConnBranch
		if lr.bits&bitLast != 0 {
			r.Connector = ConnLast
		}
	}
	k := 0
	for g := lr.gut; g >= 0; g = l.gut[g].next {
		k++
	}
	if k > 0 {
		r.Gutters = make([]Gutter, k)
		for g := lr.gut; g >= 0; g = l.gut[g].next {
			k--
			r.Gutters[k] = Gutter{Level: int(l.gut[g].level), Line: l.gut[g].line}
		}
	}
	return r
}

// Previews fills the previews of up to n rows from row start, reading
// their lines (and, for tool results, their tool call) through r.
func (l *Layout) Previews(r *sessions.Reader, start, n int) error {
	start, end := l.clamp(start, n)
	l.mu.Lock()
	defer l.mu.Unlock()
	var want []int
	for i := start; i < end; i++ {
		if !l.have[i] {
			want = append(want, int(l.rows[i].pos))
		}
	}
	if len(want) == 0 {
		return nil
	}
	r = r.Gathered(want) // the rows' lines at once, not one system call each
	defer r.Close()
	for i := start; i < end; i++ {
		if l.have[i] {
			continue
		}
		p, err := l.preview(r, int(l.rows[i].pos))
		if err != nil {
			return err
		}
		l.prev[i], l.have[i] = p, true
	}
	return nil
}

// Window returns up to n rows from row start with their previews.
func (l *Layout) Window(r *sessions.Reader, start, n int) ([]Row, error) {
	if err := l.Previews(r, start, n); err != nil {
		return nil, err
	}
	return l.Rows(start, n), nil
}

// Pos returns the entry position of row i.
func (l *Layout) Pos(i int) int { return int(l.rows[i].pos) }

// RowOf returns the row showing entry pos, or -1 when it is not shown.
func (l *Layout) RowOf(pos int) int {
	if pos < 0 || pos >= len(l.rowOf) {
		return -1
	}
	return int(l.rowOf[pos])
}

// Find returns the row of entry pos or, when it is hidden, of its nearest
// visible ancestor; failing both, the last row (pi's findNearestVisibleIndex).
// It returns -1 only when no row is visible.
func (l *Layout) Find(pos int) int {
	if len(l.rows) == 0 {
		return -1
	}
	if pos >= 0 && pos < len(l.rowOf) {
		for v := pos; v >= 0; v = l.s.Parent(v) {
			if r := l.rowOf[v]; r >= 0 {
				return int(r)
			}
		}
	}
	return len(l.rows) - 1
}

// Parent returns the row of row i's nearest visible ancestor, or -1.
func (l *Layout) Parent(i int) int { return int(l.rows[i].parent) }

// Children returns the rows of row i's visible children, in display order.
func (l *Layout) Children(i int) []int {
	out := make([]int, 0, l.kidAt[i+1]-l.kidAt[i])
	for _, k := range l.kids[l.kidAt[i]:l.kidAt[i+1]] {
		out = append(out, int(k))
	}
	return out
}

func (l *Layout) nkids(i int) int { return int(l.kidAt[i+1] - l.kidAt[i]) }

// Foldable reports whether pi would fold row i: it has visible children and
// is a root or a segment start (its visible parent has several visible children).
func (l *Layout) Foldable(i int) bool {
	if l.nkids(i) == 0 {
		return false
	}
	p := l.rows[i].parent
	return p < 0 || l.nkids(int(p)) > 1
}

// searchTokens splits a query as pi does: lower-cased, on whitespace.
func searchTokens(q string) []string {
	return strings.FieldsFunc(js.ToLower(q), js.IsSpace)
}

// searcher matches entries against search tokens, from a SearchIndex's
// view or by reading their lines.
type searcher struct {
	r      *sessions.Reader
	tokens []string
	ix     searchView
}

func (sr *searcher) match(i int) (bool, error) {
	if text, ok := sr.ix.entry(i); ok {
		// pi joins the label and the rest with a space, which no token holds:
		// a token occurs in the whole text when it occurs in one of them.
		label, lowered := "", false
		for _, t := range sr.tokens {
			if bytes.Contains(text, []byte(t)) {
				continue
			}
			if !lowered {
				label, lowered = js.ToLower(sr.r.Session().LabelOf(i)), true
			}
			if !strings.Contains(label, t) {
				return false, nil
			}
		}
		return true, nil
	}
	text, err := searchText(sr.r, i)
	if err != nil {
		return false, err
	}
	text = js.ToLower(text)
	for _, t := range sr.tokens {
		if !strings.Contains(text, t) {
			return false, nil
		}
	}
	return true, nil
}

// Render writes the tree as pi's /tree list draws it, without colors: a
// cursor column ("› " on the row pi selects on opening: the leaf, or its
// nearest visible ancestor), each row's text, and pi's "(n/total)" status
// line with the filter's tag. Previews are read through r in chunks.
func (l *Layout) Render(w io.Writer, r *sessions.Reader) error {
	bw := bufio.NewWriter(w)
	tag := ""
	if t := l.opt.Filter.Tag(); t != "" {
		tag = " [" + t + "]"
	}
	if len(l.rows) == 0 {
		fmt.Fprintf(bw, "  No entries found\n  (0/0)%s\n", tag)
		return bw.Flush()
	}
	sel := l.Find(l.leaf)
	if l.leaf >= 0 {
		// pi selects the last visible row showing the leaf's id (a
		// duplicated line shows the same id twice).
		id := l.s.Entries[l.leaf].ID
		for k := len(l.rows) - 1; k > sel; k-- {
			if l.s.Entries[l.rows[k].pos].ID == id {
				sel = k
				break
			}
		}
	}
	const chunk = 1024
	for start := 0; start < len(l.rows); start += chunk {
		rows, err := l.Window(r, start, chunk)
		if err != nil {
			return err
		}
		for k := range rows {
			if start+k == sel {
				bw.WriteString("› ")
			} else {
				bw.WriteString("  ")
			}
			bw.WriteString(rows[k].Text())
			bw.WriteByte('\n')
		}
	}
	fmt.Fprintf(bw, "  (%d/%d)%s\n", sel+1, len(l.rows), tag)
	return bw.Flush()
}
