package web

import (
	"cmp"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/ledger"
	"github.com/piweb/piweb/pitree"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// Conversation pages: at most this many entries, or about this many bytes of lines.
const (
	pageEntries = 100
	pageBytes   = 2 << 20
)

// entry renders the conversation (or the model context) at entry ?e=, or an
// earlier page of it with ?before=.
func (s *Server) entry(c echo.Context) error {
	id := sessionKey(c)
	st, err := treeState(c)
	if err != nil {
		return err
	}
	e := c.QueryParam("e")
	if e == "" {
		return errBadRequest("Which entry? The address names none.", nil)
	}
	at := pageAt{before: -1, from: -1, down: c.QueryParam("dir") == "down", along: -1}
	for name, dst := range map[string]*int{"before": &at.before, "from": &at.from} {
		if b := c.QueryParam(name); b != "" {
			if *dst, err = strconv.Atoi(b); err != nil || *dst < 0 {
				return errBadRequest("Bad page position.", err)
			}
		}
	}
	if d := c.QueryParam("depth"); d != "" && at.from < 0 { // the jump form's 1-based depth
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 {
			return errBadRequest("The depth is a number from 1 (the root) to the path's length.", err)
		}
		at.from = n - 1
	}
	if at.before >= 0 && at.from >= 0 {
		return errBadRequest("A page starts at a depth (from) or ends before an entry (before), not both.", nil)
	}
	selectDepth := c.QueryParam("select") == "1" && c.QueryParam("depth") != "" // the depth box: select the entry there
	var v views.PathView
	err = s.view(id, func(ss *sessions.Session, r *sessions.Reader) error {
		target, ok := resolve(ss, e)
		note := ""
		if !ok {
			if at.page() {
				return errStale() // another page of an entry that is gone
			}
			// The page's rows are older than the file (pi migrated it with new
			// ids): show where pi resumes, and have the page reload its rows.
			st.Target, st.Leaf = e, ""
			t, err := s.layout(ss, r, st)
			if err != nil {
				return err
			}
			target, note = t.target, t.note
		}
		if selectDepth && ok {
			// The depth box: the entry at that depth is selected, and the
			// conversation reads on along the path it was on.
			path := ss.Path(target)
			at.from = min(at.from, max(len(path)-1, 0))
			at.along, target = target, path[at.from]
		}
		v, err = s.pathView(id, ss, r, st, target, c.QueryParam("view"), at)
		v.Note = note
		return err
	})
	if err != nil {
		return err
	}
	if v.Page {
		return respond(c, views.PathItems(v))
	}
	return respond(c, views.Conversation(v))
}

// pageAt says which page of a path to show: the last (all -1), the one
// ending before entry `before`, or the one starting at depth `from` (with
// down, a continuation below the page shown, without its earlier button).
// With along >= 0 the selected entry is the one at depth from of along's
// path, and the page (a whole conversation, header and all) reads on
// along that longer path: the depth box.
type pageAt struct {
	before, from int
	down         bool
	along        int
}

// lastPage is the page a path opens on: its end.
var lastPage = pageAt{before: -1, from: -1, along: -1}

// page reports whether the answer is a page of items alone.
func (p pageAt) page() bool { return p.before >= 0 || p.from >= 0 && p.along < 0 }

// pathView builds the conversation along the root-to-target path (or the
// model context at target), at the page at names.
func (s *Server) pathView(id string, ss *sessions.Session, r *sessions.Reader, st views.TreeState, target int, tab string, at pageAt) (views.PathView, error) {
	before := at.before
	b := &builder{md: s.md, s: ss, key: id, home: s.opt.Home, clip: true}
	path := ss.Path(target)
	read := path // the path the conversation reads along: the target's, or a longer one through it (the depth box)
	if at.along >= 0 {
		read = ss.Path(at.along)
	}
	v := views.PathView{Key: id, Target: b.info(target), Tab: views.TabConversation, Depth: len(path), PathLen: len(read), Page: at.page(), State: st}
	if tab == views.TabContext || tab == views.TabFiles {
		v.Tab = tab
	}
	var changes *ledger.Changes
	if !v.Page { // an earlier page shows no header
		var err error
		if v.Model, v.Thinking, err = pathSettings(ss, r, path); err != nil {
			return v, err
		}
		l, err := s.ledger(ss, r)
		if err != nil {
			return v, err
		}
		v.Path = totalsView(l.Sum(ss, path))
		v.Files = len(l.Files(path))
		if tab == views.TabFiles {
			if changes, err = ledger.ChangesOf(r, path); err != nil {
				return v, err
			}
		}
		v.CompareURL = views.SessionURL(id) + "/compare?a=" + url.QueryEscape(v.Target.Ref)
	}
	link := st
	link.Target = v.Target.Ref
	v.LinkURL = views.StateURL(id, link)
	v.JumpURL = views.EntryURL(id, ref(ss, read[len(read)-1]), views.TabConversation, -1, st) + "&select=1"
	link.Leaf = v.Target.Ref
	v.LeafURL = views.StateURL(id, link)
	if l, ok := resolve(ss, st.Leaf); ok && st.Leaf != "" && l != ss.Leaf() {
		// The note names rows the tree shows: the viewed leaf, or where pi
		// resumes, may be an entry the filter hides (a label, a model change).
		t, err := s.layout(ss, r, st)
		if err != nil {
			return v, err
		}
		v.Viewing = ref(ss, t.rowEntry(t.leafRow, l))
		back := st
		back.Leaf, back.Target = "", ""
		if pl := ss.Leaf(); pl >= 0 {
			v.ResumeRef = ref(ss, t.rowEntry(t.resumeRow, pl))
			back.Target = v.ResumeRef
		}
		v.ResumeURL = views.StateURL(id, back)
	}
	if !v.Page {
		a := s.actionsView(id, ss, r, target)
		v.Actions = &a
	}
	var err error
	switch {
	case v.Tab == views.TabFiles && changes != nil:
		fv := filesView(id, ss, changes)
		fv.PatchURL = views.SessionURL(id) + "/patch?leaf=" + url.QueryEscape(v.Target.Ref)
		v.FilesView = &fv
	case v.Tab == views.TabContext:
		err = b.contextPage(&v, r, target, before)
	case at.from >= 0:
		err = b.pathFrom(&v, r, read, target, at)
	default:
		err = b.pathPage(&v, r, path, target, before)
	}
	for k := range v.Items {
		v.Items[k].Link = views.SessionURL(id) + "?target=" + url.QueryEscape(v.Items[k].Entry.Ref)
	}
	return v, err
}

// pathSettings walks a path for the model and thinking level in force at
// its end (what the path cost is the ledger's: Ledger.Sum).
func pathSettings(ss *sessions.Session, r *sessions.Reader, path []int) (model, thinking string, err error) {
	thinking = "off"
	lastThinking := -1
	for _, i := range path {
		e := &ss.Entries[i]
		if m := e.Model(); m != "" {
			model = m
		}
		if e.Type == sessions.TypeThinking {
			lastThinking = i
		}
	}
	if lastThinking >= 0 {
		b, err := r.Body(lastThinking)
		if err != nil {
			return "", "", err
		}
		thinking = cmp.Or(b.Level, "off")
	}
	return model, thinking, nil
}

// pageStart steps back from end over at most pageEntries items of about pageBytes.
func pageStart(end int, size func(k int) int) int {
	start, n := end, 0
	for start > 0 && end-start < pageEntries && n < pageBytes {
		start--
		n += size(start)
	}
	return start
}

// pathPage fills v with the page of the path ending before `before` (or at the target).
func (b *builder) pathPage(v *views.PathView, r *sessions.Reader, path []int, target, before int) error {
	ss := b.s
	end := len(path)
	if before >= 0 {
		end = -1
		for k, i := range path {
			if i == before {
				end = k
				break
			}
		}
		if end < 0 {
			return errStale()
		}
	}
	runs := noiseRuns(ss, path, target)
	start := pathStart(end, runs, func(k int) int { return ss.Entries[path[k]].Len })
	// Start a page at a tool call, not between a call and its results.
	for limit := 0; start > 0 && limit < 1000 && isToolResult(&ss.Entries[path[start]]); limit++ {
		start--
	}
	items, err := b.pathRunItems(r, path, start, end, runs)
	if err != nil {
		return err
	}
	markTargets(items, target)
	v.Items = items
	v.Earlier = start
	if start > 0 {
		v.EarlierURL = views.EntryURL(v.Key, v.Target.Ref, v.Tab, path[start], v.State)
	}
	return nil
}

// pathRun is a run of settings entries along a path, path[a:b]: at least
// pitree.MinRun model or thinking-level changes in a row, none labeled, a
// branch point or the selected entry. The conversation shows it as one
// line, as the tree does.
type pathRun struct {
	a, b            int
	thinking, model bool
}

// noiseRuns finds the runs of settings entries along path, in one pass.
func noiseRuns(ss *sessions.Session, path []int, target int) []pathRun {
	var runs []pathRun
	kind := func(i int) (thinking, model bool) {
		if i == target || ss.LabelOn(i) >= 0 || len(ss.Children(i)) > 1 {
			return false, false
		}
		return pitree.Setting(&ss.Entries[i])
	}
	for k := 0; k < len(path); {
		t, m := kind(path[k])
		if !t && !m {
			k++
			continue
		}
		run := pathRun{a: k, thinking: t, model: m}
		j := k + 1
		for ; j < len(path); j++ {
			t, m := kind(path[j])
			if !t && !m {
				break
			}
			run.thinking, run.model = run.thinking || t, run.model || m
		}
		if run.b = j; j-k >= pitree.MinRun {
			runs = append(runs, run)
		}
		k = j
	}
	return runs
}

// runAt returns the run holding path index k, if any.
func runAt(runs []pathRun, k int) (pathRun, bool) {
	i := sort.Search(len(runs), func(i int) bool { return runs[i].b > k })
	if i < len(runs) && runs[i].a <= k {
		return runs[i], true
	}
	return pathRun{}, false
}

// pathStart steps back from path index end over at most pageEntries items
// of about pageBytes, a run of settings entries counting as one small item.
func pathStart(end int, runs []pathRun, size func(k int) int) int {
	start, n := end, 0
	for items := 0; start > 0 && items < pageEntries && n < pageBytes; items++ {
		if run, ok := runAt(runs, start-1); ok {
			start = run.a
			continue
		}
		start--
		n += size(start)
	}
	return start
}

// runShown is how many entries of a run of settings entries its line shows when opened.
const runShown = 50

// pathRunItems builds the items of path[start:end], each run of settings
// entries (clipped to the page) as one item holding its first entries.
func (b *builder) pathRunItems(r *sessions.Reader, path []int, start, end int, runs []pathRun) ([]views.Item, error) {
	type part struct {
		a, b int // path[a:b]
		run  *pathRun
	}
	var parts []part
	var single []int
	for k := start; k < end; {
		if run, ok := runAt(runs, k); ok && min(run.b, end)-k >= pitree.MinRun {
			run.a, run.b = k, min(run.b, end)
			parts = append(parts, part{run.a, run.b, &run})
			k = run.b
			continue
		}
		if len(parts) == 0 || parts[len(parts)-1].run != nil {
			parts = append(parts, part{a: k, b: k})
		}
		parts[len(parts)-1].b = k + 1
		single = append(single, path[k])
		k++
	}
	// Tool calls pair with their results across the page, runs aside.
	bodies, err := readBodies(r, single)
	if err != nil {
		return nil, err
	}
	byPos := make(map[int]*sessions.Body, len(single))
	for k, i := range single {
		byPos[i] = bodies[k]
	}
	results := collectResults(single, messagesOf(bodies))
	var items []views.Item
	for _, p := range parts {
		if p.run == nil {
			for _, i := range path[p.a:p.b] {
				if body := byPos[i]; !shownWithCall(results, i, body.Msg) {
					items = append(items, b.entryItem(body, results))
				}
			}
			continue
		}
		n := p.b - p.a
		it := views.Item{Kind: "noise", Entry: b.info(path[p.a]), Note: "× " + views.Count(n) + " " + runWords(pitree.Run{Thinking: p.run.thinking, Model: p.run.model})}
		shown, err := readBodies(r, path[p.a:p.a+min(n, runShown)])
		if err != nil {
			return nil, err
		}
		for _, body := range shown {
			it.Members = append(it.Members, b.entryItem(body, nil))
		}
		if last, err := r.Body(path[p.b-1]); err == nil {
			it.Meta = "the last: " + b.entryItem(last, nil).Note
		}
		it.More = n - len(it.Members)
		items = append(items, it)
	}
	return items, nil
}

// pathItems builds the conversation items of the entries at positions
// page, tool results shown with their calls (those of the page).
func (b *builder) pathItems(r *sessions.Reader, page []int) ([]views.Item, error) {
	bodies, err := readBodies(r, page)
	if err != nil {
		return nil, err
	}
	results := collectResults(page, messagesOf(bodies))
	var items []views.Item
	for k, i := range page {
		if !shownWithCall(results, i, bodies[k].Msg) {
			items = append(items, b.entryItem(bodies[k], results))
		}
	}
	return items, nil
}

// pathFrom fills v with the page of the path that starts at depth at.from:
// about one page of entries forward, never ending between a tool call and
// its results, with a button for the page below and, unless it continues a
// page shown (at.down), one for the page above.
func (b *builder) pathFrom(v *views.PathView, r *sessions.Reader, path []int, target int, at pageAt) error {
	ss := b.s
	start := min(at.from, max(len(path)-1, 0))
	runs := noiseRuns(ss, path, target)
	end, n := start, 0
	for items := 0; end < len(path) && items < pageEntries && n < pageBytes; items++ {
		if run, ok := runAt(runs, end); ok {
			end = run.b // a run of settings entries is one line, however long
			continue
		}
		n += ss.Entries[path[end]].Len
		end++
	}
	for limit := 0; end < len(path) && limit < 1000 && isToolResult(&ss.Entries[path[end]]); limit++ {
		end++
	}
	items, err := b.pathRunItems(r, path, start, end, runs)
	if err != nil {
		return err
	}
	markTargets(items, target)
	v.Items, v.Earlier = items, start
	if start > 0 && !at.down {
		v.EarlierURL = views.EntryURL(v.Key, v.Target.Ref, v.Tab, path[start], v.State)
	}
	if end < len(path) {
		v.Later = len(path) - end
		v.LaterURL = views.EntryURL(v.Key, ref(ss, path[len(path)-1]), v.Tab, -1, v.State) + "&from=" + strconv.Itoa(end) + "&dir=down"
	}
	return nil
}

// markTargets marks the item of the selected entry, a tool result paired with its call included.
func markTargets(items []views.Item, target int) {
	for k := range items {
		items[k].Target = items[k].Entry.Pos == target
		markResultTarget(&items[k], target)
	}
}

// markResultTarget marks a paired tool result that is the selected entry.
func markResultTarget(it *views.Item, target int) {
	for _, bl := range it.Blocks {
		if bl.Call != nil && bl.Call.Result != nil && bl.Call.Result.Entry.Pos == target {
			bl.Call.Result.Target = true
		}
	}
}

// readBodies reads and decodes the entries at positions page.
func readBodies(r *sessions.Reader, page []int) ([]*sessions.Body, error) {
	r = r.Gathered(page) // the page's lines at once, not one system call each
	defer r.Close()
	out := make([]*sessions.Body, len(page))
	for k, i := range page {
		b, err := r.Body(i)
		if err != nil {
			return nil, err
		}
		out[k] = b
	}
	return out, nil
}

// messagesOf returns the message of each body (nil for entries of other types).
func messagesOf(bodies []*sessions.Body) []*sessions.Message {
	out := make([]*sessions.Message, len(bodies))
	for k, b := range bodies {
		if b.Entry.Type == sessions.TypeMessage {
			out[k] = b.Msg
		}
	}
	return out
}

// collectResults indexes the tool results among msgs (nil for other
// entries) by call id, for pairing with their calls.
func collectResults(pos []int, msgs []*sessions.Message) map[string]*pendingResult {
	results := map[string]*pendingResult{}
	for k, m := range msgs {
		if m == nil || m.Role != sessions.RoleToolResult {
			continue
		}
		if cid := m.ToolCallID; cid != "" && results[cid] == nil {
			results[cid] = &pendingResult{pos: pos[k], msg: m}
		}
	}
	return results
}

// shownWithCall reports whether msg, at entry pos, was shown inside its tool call.
func shownWithCall(results map[string]*pendingResult, pos int, msg *sessions.Message) bool {
	if msg == nil || msg.Role != sessions.RoleToolResult {
		return false
	}
	r := results[msg.ToolCallID]
	return r != nil && r.used && r.pos == pos
}

func isToolResult(e *sessions.Entry) bool {
	return e.Type == sessions.TypeMessage && e.Role == sessions.RoleToolResult
}

// contextPage fills v with a page of the model context at target (pi's projection).
func (b *builder) contextPage(v *views.PathView, r *sessions.Reader, target, before int) error {
	ss := b.s
	p, err := r.Project(target)
	if err != nil {
		return err
	}
	v.Messages = len(p.Messages)
	end := len(p.Entries)
	if before >= 0 {
		end = -1
		for k, pe := range p.Entries {
			if pe.Pos == before {
				end = k
				break
			}
		}
		if end < 0 {
			return errStale()
		}
	}
	start := pageStart(end, func(k int) int {
		n := 0
		for _, m := range p.Entries[k].Messages {
			n += len(m)
		}
		return n
	})
	var pos []int
	var msgs []*sessions.Message
	var kept, edited []bool
	for _, pe := range p.Entries[start:end] {
		if len(pe.Messages) == 0 && pe.Edited {
			pos, msgs, kept, edited = append(pos, pe.Pos), append(msgs, nil), append(kept, pe.Kept), append(edited, true)
		}
		for _, m := range pe.Messages {
			pos, msgs, kept, edited = append(pos, pe.Pos), append(msgs, sessions.DecodeMessage(m)), append(kept, pe.Kept), append(edited, pe.Edited)
		}
	}
	results := collectResults(pos, msgs)
	shown := map[int]int{} // items of each entry so far: a compaction gives two
	for k, i := range pos {
		it := views.Item{Entry: b.info(i), Kept: kept[k], Edited: edited[k], Target: i == target, Sub: shown[i]}
		if it.Sub > 0 || ss.Entries[i].Type == sessions.TypeCompaction && msgs[k] != nil && msgs[k].Role == sessions.RoleSystem {
			it.Target = false
		}
		if ss.Entries[i].Type == sessions.TypeCompaction && msgs[k] != nil && msgs[k].Role == sessions.RoleSystem {
			it.From = "compaction " + it.Entry.Ref // the system prompt the compaction keeps is not an entry of its own
		}
		switch {
		case msgs[k] == nil:
			it.Kind, it.Note = "setting", "dropped from the context by a context edit"
		case shownWithCall(results, i, msgs[k]):
			continue
		default:
			before := b.cut
			it = b.messageItem(it, msgs[k], results)
			it.Clip = b.clipped(i, before)
		}
		markResultTarget(&it, target)
		shown[i]++
		v.Items = append(v.Items, it)
	}
	v.Earlier = start
	if start > 0 {
		v.EarlierURL = views.EntryURL(v.Key, v.Target.Ref, v.Tab, p.Entries[start].Pos, v.State)
	}
	return nil
}

// copyText answers GET /s/:key/copy?e=REF with what pi's /tree copies for the
// entry (ctrl+x) as plain text, or 204 when pi would have nothing to copy.
func (s *Server) copyText(c echo.Context) error {
	return s.plainEntry(c, (*sessions.Reader).CopyText)
}

// plainEntry answers with the plain text that text makes of entry ?e= of
// session :key, or 204 when it has none.
func (s *Server) plainEntry(c echo.Context, text func(*sessions.Reader, int) (string, bool, error)) error {
	id, e := sessionKey(c), c.QueryParam("e")
	var out string
	var ok bool
	err := s.view(id, func(ss *sessions.Session, r *sessions.Reader) error {
		i, found := resolve(ss, e)
		if !found {
			return errNoEntry(id, e)
		}
		var err error
		out, ok, err = text(r, i)
		return err
	})
	if err != nil {
		return err
	}
	if !ok {
		return c.NoContent(http.StatusNoContent)
	}
	return c.String(http.StatusOK, out)
}
