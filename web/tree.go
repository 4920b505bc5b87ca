package web

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/ledger"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/pitree"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// Tree windows: rows sent per page; a page's first window holds
// firstRows, from rowsBefore rows above the selected one. The first paint
// needs no more than a screen or two: the page asks for the next rows
// before a scroll reaches them (600px ahead), a page of pageRows each time.
const (
	pageRows   = 500
	firstRows  = 200
	rowsBefore = 80
)

// treeState parses the tree's query parameters: filter, q, fold, open, leaf, target.
func treeState(c echo.Context) (views.TreeState, error) {
	st := views.TreeState{
		Filter: c.QueryParam("filter"),
		Search: strings.TrimSpace(c.QueryParam("q")),
		Leaf:   c.QueryParam("leaf"),
		Target: c.QueryParam("target"),
	}
	f, err := pitree.ParseFilter(st.Filter)
	if err != nil {
		return st, errBadRequest("Unknown tree filter. Use default, no-tools, user-only, labeled-only or all.", err)
	}
	st.Filter = string(f)
	if len(st.Search) > 500 {
		st.Search = st.Search[:500]
	}
	for _, id := range strings.Split(c.QueryParam("fold"), ",") {
		if id != "" && len(st.Folds) < 1000 {
			st.Folds = append(st.Folds, id)
		}
	}
	slices.Sort(st.Folds)
	st.Folds = slices.Compact(st.Folds)
	for _, id := range strings.Split(c.QueryParam("open"), ",") {
		if id != "" && len(st.Open) < 1000 {
			st.Open = append(st.Open, id)
		}
	}
	slices.Sort(st.Open)
	st.Open = slices.Compact(st.Open)
	return st, nil
}

// ref returns the URL reference of entry i: its id, or "~i" when it has none.
func ref(s *sessions.Session, i int) string {
	if id := s.Entries[i].ID; id != "" {
		return id
	}
	return "~" + strconv.Itoa(i)
}

// resolve finds the entry a ref from a URL names, only through the index.
func resolve(s *sessions.Session, r string) (int, bool) {
	if n, found := strings.CutPrefix(r, "~"); found {
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(s.Entries) || s.Entries[i].ID != "" {
			return 0, false
		}
		return i, true
	}
	return s.Lookup(r)
}

// tree is a session laid out for one TreeState.
type tree struct {
	s       *sessions.Session
	lay     *pitree.Layout
	leaf    int // the leaf the layout treats as active (the session's, or the state's)
	leafRow int // the row of the leaf the tree shows: the leaf's, or its nearest visible ancestor's
	// resumeRow is the row of pi's own leaf (or its nearest visible ancestor)
	// when the page views another path, else -1: "← active" stays where pi resumes.
	resumeRow int
	target    int             // the selected entry, -1 for none: the row the page highlights (actions act on it)
	ledger    *ledger.Ledger  // what each branch cost
	note      string          // why the tree shows another entry than the one asked for ("" when it does not)
	open      map[string]bool // the noise runs drawn row by row, by their first row's ref
	opened    []string        // runs opened because the selected entry is inside one
}

// state is st with the runs the tree opened for the selected entry.
func (t *tree) state(st views.TreeState) views.TreeState {
	if len(t.opened) > 0 {
		st.Open = append(slices.Clone(st.Open), t.opened...)
		slices.Sort(st.Open)
		st.Open = slices.Compact(st.Open)
	}
	return st
}

// layout lays out s for st, through the cache. The caller holds the library's read lock.
func (srv *Server) layout(s *sessions.Session, r *sessions.Reader, st views.TreeState) (*tree, error) {
	// An entry the page names that is gone (pi migrated an old file in place
	// with new ids, or the file was rewritten) is no error: the page lands at
	// the session's leaf and says so.
	t := &tree{s: s, leaf: s.Leaf(), target: -1, open: make(map[string]bool, len(st.Open))}
	for _, r := range st.Open {
		t.open[r] = true
	}
	gone := ""
	if st.Leaf != "" {
		if i, ok := resolve(s, st.Leaf); ok {
			t.leaf = i
		} else {
			gone = st.Leaf
		}
	}
	t.target = t.leaf
	if st.Target != "" {
		if i, ok := resolve(s, st.Target); ok && gone == "" {
			t.target = i
		} else if !ok {
			gone = st.Target
		}
	}
	if gone != "" {
		t.note = "Entry " + gone + " is no longer in this session (the file was rewritten on disk): showing where pi resumes."
	}
	defer t.highlight()
	var err error
	if t.ledger, err = srv.ledger(s, r); err != nil {
		return nil, err
	}
	key := layoutKey{gen: s.Gen(), leaf: t.leaf, filter: st.Filter, search: st.Search, folds: strings.Join(st.Folds, ",")}
	if l := srv.layouts.get(key); l != nil {
		t.use(l)
		return t, nil
	}
	folded := make(map[string]bool, len(st.Folds))
	for _, id := range st.Folds {
		folded[id] = true
	}
	opt := pitree.Options{Leaf: t.leaf, Filter: pitree.Filter(st.Filter),
		Search: st.Search, Folded: folded, Home: srv.opt.Home}
	if st.Search != "" {
		opt.Index = srv.layouts.searchIndex(s.File)
	}
	l, err := pitree.New(s, r, opt)
	if err != nil {
		return nil, err
	}
	cost := library.TreeCost(s)
	if opt.Index != nil { // which the layout keeps too
		cost += srv.layouts.searched(s.File, opt.Index)
	}
	srv.layouts.put(key, l, cost)
	t.use(l)
	return t, nil
}

// highlight makes the target the entry of the row the page highlights: the
// target's own row, or when a filter or fold hides it (the session's last
// entry is often a label or a model change), its nearest visible ancestor's,
// so the conversation and the actions are about the row the user sees.
func (t *tree) highlight() {
	if t.lay == nil || t.target < 0 {
		return
	}
	k := t.lay.Find(t.target)
	if k < 0 {
		return
	}
	t.target = t.lay.Pos(k)
	// A selected entry inside a closed run of settings rows opens it.
	if run, ok := t.closedRun(k); ok && run.Start != k {
		head := ref(t.s, t.lay.Pos(run.Start))
		t.open[head] = true
		t.opened = append(t.opened, head)
	}
}

// use sets the tree's layout and finds the row to mark "← active": the
// leaf's, or when a filter or fold hides it, its nearest visible ancestor's.
func (t *tree) use(l *pitree.Layout) {
	t.lay, t.leafRow, t.resumeRow = l, -1, -1
	if l.Leaf() >= 0 {
		t.leafRow = l.Find(l.Leaf())
	}
	if pl := t.s.Leaf(); t.leaf != pl && pl >= 0 {
		t.resumeRow = l.Find(pl)
	}
}

// rowEntry is the entry of row k, or def when k is -1 (no row shows it).
func (t *tree) rowEntry(k, def int) int {
	if k < 0 {
		return def
	}
	return t.lay.Pos(k)
}

// Noise runs (pitree.Run): a run of settings rows is drawn as its first
// row, which says "× 1,204 thinking-level changes", unless the page opened
// it (TreeState.Open names its first row's entry). A page never splits a
// closed run: it starts at a run's first row and goes on past its end, so
// the run is one row however the tree is paged.

// closedRun returns the closed run holding row k, if any.
func (t *tree) closedRun(k int) (pitree.Run, bool) {
	run, ok := t.lay.RunAt(k)
	if !ok || t.open[ref(t.s, t.lay.Pos(run.Start))] {
		return pitree.Run{}, false
	}
	return run, true
}

// drawn returns the row drawn for row k: k, or the first row of the closed run holding it.
func (t *tree) drawn(k int) int {
	if run, ok := t.closedRun(k); ok {
		return run.Start
	}
	return k
}

// next returns the row drawn after row k: past the end of a closed run.
func (t *tree) next(k int) int {
	if run, ok := t.closedRun(k); ok {
		return run.End
	}
	return k + 1
}

// span returns the row after n drawn rows from row start (itself drawn).
func (t *tree) span(start, n int) int {
	k := start
	for ; n > 0 && k < t.lay.Len(); n-- {
		k = t.next(k)
	}
	return k
}

// spanBack returns the first of the n drawn rows before row end.
func (t *tree) spanBack(end, n int) int {
	k := end
	for ; n > 0 && k > 0; n-- {
		k = t.drawn(k - 1)
	}
	return k
}

// window returns the rows drawn in rows [start, end) as views, previews
// read through r: a closed run's first row stands for it. start is a drawn row.
func (t *tree) window(r *sessions.Reader, start, end int) ([]views.RowView, error) {
	var ks []int
	for k := start; k < end; k = t.next(k) {
		ks = append(ks, k)
	}
	return t.views(r, ks)
}

// views returns rows ks (drawn rows) as views, previews read through r.
func (t *tree) views(r *sessions.Reader, ks []int) ([]views.RowView, error) {
	out := make([]views.RowView, 0, len(ks))
	for a := 0; a < len(ks); {
		b := a + 1 // previews a run of consecutive rows at a time
		for b < len(ks) && ks[b] == ks[b-1]+1 {
			b++
		}
		rows, err := t.lay.Window(r, ks[a], ks[b-1]-ks[a]+1)
		if err != nil {
			return nil, err
		}
		for k := range rows {
			out = append(out, t.rowView(ks[a]+k, &rows[k]))
		}
		a = b
	}
	return out, nil
}

// around returns the window of rows showing the selected entry (or its nearest visible ancestor).
func (t *tree) around(r *sessions.Reader, sid string) (views.TreeWindow, error) {
	w := views.TreeWindow{Key: sid, Total: t.lay.Len(), Selected: -1}
	if w.Total == 0 {
		return w, nil
	}
	k := t.drawn(t.lay.Find(t.target))
	start := t.spanBack(k, rowsBefore)
	end := t.span(start, firstRows)
	rows, err := t.window(r, start, end)
	if err != nil {
		return w, err
	}
	w.Rows, w.First = rows, start
	w.Before, w.After = start > 0, end < w.Total
	w.Selected = t.lay.Pos(k)
	return w, nil
}

// rowView converts row k of the layout.
func (t *tree) rowView(k int, row *pitree.Row) views.RowView {
	s := t.s
	e := &s.Entries[row.Pos]
	v := views.RowView{Pos: row.Pos, Parent: -1, Kids: len(t.lay.Children(k)), Ref: ref(s, row.Pos),
		Active: row.Active, Leaf: k == t.leafRow, Viewing: t.leaf != t.s.Leaf(), Resume: k == t.resumeRow, Folded: row.Folded, Foldable: row.Foldable, Label: row.Label, Labeled: row.Labeled}
	if p := t.lay.Parent(k); p >= 0 {
		v.Parent = t.lay.Rows(p, 1)[0].Pos
	}
	if l := s.LabelEntry(e.ID); row.Labeled && l >= 0 && s.Entries[l].Time != sessions.NoTime {
		v.LabelAt = views.LabelTime(time.UnixMilli(s.Entries[l].Time), views.Now()) + " "
	}
	bare := *row
	bare.Active = false // the marker is drawn apart, to color it
	pre := bare.Prefix()
	for _, g := range []string{"⊟", "⊞"} {
		if a, b, found := strings.Cut(pre, g); found {
			v.Pre, v.Fold, v.Post = a, g, b
			break
		}
	}
	if v.Fold == "" {
		v.Pre = pre
	}
	v.Kind = rowKind(e)
	v.Lead, v.Text = splitLead(v.Kind, row.Preview)
	v.Hint = entryHint(s, row.Pos)
	if row.BranchPoint {
		v.Forks = len(s.Children(row.Pos))
		v.Hint += " · branch point: " + strconv.Itoa(v.Forks) + " branches"
	}
	var hint string
	if v.Spent, hint = spent(s, t.ledger, row.Pos, v.Parent); hint != "" {
		v.Hint += " · " + hint
	}
	if run, ok := t.lay.RunAt(k); ok && run.Start == k {
		v.NoiseRun, v.NoiseText, v.NoiseOpen = run.Len(), "× "+views.Count(run.Len())+" "+runWords(run), t.open[v.Ref]
	}
	return v
}

// runWords says what a run of settings rows holds.
func runWords(run pitree.Run) string {
	switch {
	case run.Thinking && run.Model:
		return "settings changes"
	case run.Model:
		return "model changes"
	}
	return "thinking-level changes"
}

// rowKind classifies an entry for the tree's colors.
func rowKind(e *sessions.Entry) string {
	switch e.Type {
	case sessions.TypeMessage:
		switch e.Role {
		case sessions.RoleUser:
			return "user"
		case sessions.RoleAssistant:
			if e.Flags.Has(sessions.FlagError) {
				return "error"
			}
			return "assistant"
		case sessions.RoleToolResult:
			return "tool"
		case sessions.RoleBash:
			return "bash"
		case sessions.RoleCustom, "hookMessage":
			return "custom"
		}
		return "setting"
	case sessions.TypeCustomMessage:
		return "custom"
	case sessions.TypeCompaction:
		return "compaction"
	case sessions.TypeBranchSummary:
		return "summary"
	}
	return "setting"
}

// splitLead splits pi's preview into its colored lead ("user: ") and the text.
func splitLead(kind, preview string) (string, string) {
	switch kind {
	case "user", "assistant", "error", "custom", "summary":
		if i := strings.Index(preview, ": "); i > 0 {
			return preview[:i+2], preview[i+2:]
		}
	}
	return "", preview
}

// entryHint is a row's tooltip: type (role), id and time.
func entryHint(s *sessions.Session, i int) string {
	e := &s.Entries[i]
	h := e.Type
	if e.Role != "" {
		h += " (" + e.Role + ")"
	}
	h += " · " + ref(s, i)
	if t := entryTime(e); !t.IsZero() {
		h += " · " + t.UTC().Format("2006-01-02 15:04:05Z")
	}
	return h
}

func entryTime(e *sessions.Entry) time.Time {
	if e.Time == sessions.NoTime {
		return time.Time{}
	}
	return time.UnixMilli(e.Time)
}

// layoutKey identifies a layout: the session's generation (which no other
// session state shares) and the tree's options.
type layoutKey struct {
	gen    uint64
	leaf   int
	filter string
	search string
	folds  string
}

// layoutCache keeps the most recently used layouts; a 100k-entry tree takes
// tens of milliseconds to lay out, and a page asks for it several times.
// Searches also keep the searched sessions' text in search, by session id,
// so that typing a search does not read the whole file on every keystroke.
// An index covers appended entries at the next search, and starts over by
// itself when its session was re-read (rewritten or replaced) or the id now
// names another file.
type layoutCache struct {
	*lru[layoutKey, *pitree.Layout]
	search  *lru[string, *pitree.SearchIndex]
	ledgers *lru[string, *ledger.Ledger] // by file: usage and subtree sums, extended as files grow
}

// searchedSessions is how many sessions keep a search index: each costs
// about 110 bytes per entry (11 MB for 100k entries), and
// searchBudget how many bytes they may (an index holds its session's
// texts, lower-cased).
const (
	searchedSessions = 3
	searchBudget     = 32 << 20
)

// What the layouts and ledgers kept may take. A layout keeps its
// session's tree alive, and costs what the library estimates of the tree
// (library.TreeCost; a 20k-entry layout measured 270 bytes an entry with
// its tree, TestCachesKeepToBudget), a ledger 160 bytes an entry (134
// measured). Without a bound in bytes, 16 layouts of 100k-entry sessions
// would keep about 430 MB.
const (
	layoutBudget      = 64 << 20
	ledgerBudget      = 32 << 20
	ledgerEntryBytes  = 160
	cacheSessionBytes = 4096 // besides the entries
)

func newLayoutCache(n int, layouts, ledgers int64) *layoutCache {
	return &layoutCache{newLRU[layoutKey, *pitree.Layout](n, layouts), newLRU[string, *pitree.SearchIndex](searchedSessions, searchBudget),
		newLRU[string, *ledger.Ledger](n, ledgers)}
}

// ledgerCost estimates what the ledger of s takes.
func ledgerCost(s *sessions.Session) int64 {
	return cacheSessionBytes + ledgerEntryBytes*int64(len(s.Entries))
}

// searchIndex returns the search index of a session's file, made empty on
// first use.
func (c *layoutCache) searchIndex(file string) *pitree.SearchIndex {
	return c.search.getOrPut(file, func() *pitree.SearchIndex { return &pitree.SearchIndex{} })
}

// searched counts the bytes of a session's search index once a search
// filled it, and returns them.
func (c *layoutCache) searched(file string, x *pitree.SearchIndex) int64 {
	n := cacheSessionBytes + x.Size()
	c.search.put(file, x, n)
	return n
}
