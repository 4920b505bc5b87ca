package web

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/a-h/templ"

	"github.com/piweb/piweb/pitree"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/share"
	"github.com/piweb/piweb/views"
)

// sidebarRows caps the tree beside a whole-session export; the
// conversation below it still holds every entry.
const sidebarRows = 20000

// exportSessionHTML writes the whole session b (every entry, redacted as
// asked) as one offline page: pi's tree as a sidebar of links, and every
// branch's entries in the tree's order, each run after a branch point
// saying which entry it continues. The page is drawn from file, the
// session's lines as WholeTo wrote them, which it removes: it holds their
// index, the reading order and the sidebar's rows, and draws the entries a
// page at a time (page entries), never all of them.
func (s *Server) exportSessionHTML(ctx context.Context, v views.ExportView, b *share.Layout, file string, red share.Redact, page int, w io.Writer) error {
	defer os.Remove(file)
	bs, err := sessions.Load(file) // drawn from the redacted lines only
	if err != nil {
		return err
	}
	r, err := bs.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	leaf := bs.Leaf()
	onPath := pathMarks(bs, leaf)
	order := readingOrder(bs, onPath)

	// The sidebar: pi's /tree, every row a link.
	tree, total, err := s.shareTree(bs, r, leaf, nil) // every entry is drawn
	if err != nil {
		return err
	}

	m := bs.Meta()
	v.Whole, v.Name, v.Leaf, v.Models, v.Exported, v.Entries = true, b.Name, b.Leaf, m.Models, views.Now(), len(bs.Entries)
	v.Messages, v.Tokens, v.Cost, v.Tree, v.Branches, v.LeafPos = m.Messages, m.Tokens, m.Cost, tree, m.Leaves, leaf
	if total > len(tree) {
		v.TreeCut = fmt.Sprintf("The tree shows its first %d rows of %d.", len(tree), total)
	}
	bld := &builder{md: exportMarkdown(), s: bs, home: s.opt.Home}
	v.Body = templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return writeRuns(ctx, w, bld, r, order, onPath, page)
	})
	return renderExportTo(ctx, v, red, w)
}

// shareTree lays out pi's tree of bs (the session or the branch a share
// shows) for the share's sidebar: the rows of pi's "all" filter (each
// other filter shows some of them, in the same order), at most
// sidebarRows, each with the filters that show it, its prefix under each
// that draws it with other gutters than the default, and the filters under
// which it is the row of pi's leaf. With shown, only the rows of entries
// it marks (those the page draws) are kept. total is how many rows "all" has.
func (s *Server) shareTree(bs *sessions.Session, r *sessions.Reader, leaf int, shown []bool) (tree []views.ExportRow, total int, err error) {
	lay := func(f pitree.Filter) (*pitree.Layout, error) {
		return pitree.New(bs, r, pitree.Options{Leaf: leaf, Home: s.opt.Home, Filter: f})
	}
	all, err := lay(pitree.FilterAll)
	if err != nil {
		return nil, 0, err
	}
	rows, err := all.Window(r, 0, min(all.Len(), sidebarRows))
	if err != nil {
		return nil, 0, err
	}
	const (
		noRow    = -1 // an entry "all" does not show
		past     = -2 // an entry after the rows drawn
		notDrawn = -3 // an entry the page does not draw
	)
	at := make([]int32, len(bs.Entries)) // an entry's row
	for i := range at {
		at[i] = noRow
	}
	for i := len(rows); i < all.Len(); i++ {
		at[all.Pos(i)] = past
	}
	for _, row := range rows {
		if shown != nil && !shown[row.Pos] {
			at[row.Pos] = notDrawn
		}
	}
	if shown != nil {
		kept := rows[:0]
		for _, row := range rows {
			if shown[row.Pos] {
				kept = append(kept, row)
			}
		}
		rows = kept
	}
	tree = make([]views.ExportRow, len(rows))
	const none = "\x00"
	pre := make([][]string, len(rows)) // each row's prefix under each filter of views.ShareFilters (none where it is not shown)
	for k := range rows {
		row := &rows[k]
		at[row.Pos] = int32(k)
		kind := rowKind(&bs.Entries[row.Pos])
		lead, text := splitLead(kind, row.Preview)
		tree[k] = views.ExportRow{Pos: row.Pos, Kind: kind, Lead: lead, Text: text,
			Label: row.Label, Labeled: row.Labeled, Active: row.Active}
		pre[k] = make([]string, len(views.ShareFilters))
		for fi := range pre[k] {
			pre[k][fi] = none
		}
	}
	for fi, f := range views.ShareFilters {
		l := all
		if f.Name != string(pitree.FilterAll) {
			if l, err = lay(pitree.Filter(f.Name)); err != nil {
				return nil, 0, err
			}
		}
		leafRow := -1
		if leaf >= 0 {
			leafRow = l.Find(leaf)
		}
		// The filter's rows are "all"'s in the same order: past the last
		// row drawn, none is.
	rows:
		for start := 0; start < l.Len(); start += 1000 {
			for i, row := range l.Rows(start, 1000) {
				k := at[row.Pos]
				if k == past {
					break rows
				}
				if k < 0 {
					continue // not drawn (or, should a filter show more than "all", not a row)
				}
				tree[k].In = strings.TrimSpace(tree[k].In + " " + f.Key)
				pre[k][fi] = row.Prefix()
				if start+i == leafRow {
					tree[k].LeafIn = strings.TrimSpace(tree[k].LeafIn + " " + f.Key)
					tree[k].Leaf = tree[k].Leaf || f.Key == "d"
				}
			}
		}
	}
	for k := range tree {
		drawn := pre[k][0] // the default's, or "all"'s for a row it hides
		if drawn == none {
			drawn = pre[k][len(pre[k])-1]
		}
		tree[k].Prefix = drawn
		for fi, f := range views.ShareFilters {
			if p := pre[k][fi]; p != none && p != drawn {
				tree[k].Alt = append(tree[k].Alt, views.AltPrefix{Filter: f.Key, Prefix: p})
			}
		}
	}
	total = all.Len()
	if shown != nil {
		total = 0
		for i := range all.Len() {
			if shown[all.Pos(i)] {
				total++
			}
		}
	}
	return tree, total, nil
}

// writeRuns writes the entries of the session in order (readingOrder) as
// runs, each of entries each the child of the one before, page entries at
// a time. A tool call shows its result wherever in its run the result is,
// as when a run is drawn at once: the first result with the call's id
// after it, which is then not shown again on its own.
func writeRuns(ctx context.Context, w io.Writer, bld *builder, r *sessions.Reader, order []int, onPath []bool, page int) error {
	bs := bld.s
	if len(order) == 0 {
		return views.ExportEmptySession().Render(ctx, w)
	}
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && bs.Parent(order[end]) == order[end-1] {
			end++
		}
		run := order[start:end]
		x := views.ExportRun{From: -1, OnPath: onPath[run[0]]}
		if p := bs.Parent(run[0]); p >= 0 {
			x.From, x.FromRef = p, ref(bs, p)
		}
		items := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
			return writeRun(ctx, w, bld, r, run, page)
		})
		if err := views.ExportRunView(x).Render(templ.WithChildren(ctx, items), w); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// writeRun writes the items of run, page entries at a time (more when tool
// results follow, so that a call's results are read with it).
func writeRun(ctx context.Context, w io.Writer, bld *builder, r *sessions.Reader, run []int, page int) error {
	bs := bld.s
	// The tool results of the run by call id, the first of each: what the
	// calls pair with. Read up front only when the run takes more than a page.
	var results map[string]*pendingResult
	if len(run) > page {
		results = map[string]*pendingResult{}
		for _, i := range run {
			if !isToolResult(&bs.Entries[i]) {
				continue
			}
			body, err := r.Body(i)
			if err != nil {
				return err
			}
			if m := body.Msg; m.Role == sessions.RoleToolResult && m.ToolCallID != "" && results[m.ToolCallID] == nil {
				results[m.ToolCallID] = &pendingResult{pos: i}
			}
		}
	}
	for start := 0; start < len(run); {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(start+page, len(run))
		for end < len(run) && isToolResult(&bs.Entries[run[end]]) {
			end++ // a call's results stay on its page
		}
		bodies, err := readBodies(r, run[start:end])
		if err != nil {
			return err
		}
		msgs := messagesOf(bodies)
		if results == nil {
			results = collectResults(run, msgs) // the run is this page
		} else if err := pendingMessages(r, results, run[start:end], msgs); err != nil {
			return err
		}
		for k, i := range run[start:end] {
			if shownWithCall(results, i, msgs[k]) {
				continue
			}
			it := bld.entryItem(bodies[k], results)
			it.Export = true
			if err := views.ItemView(it).Render(ctx, w); err != nil {
				return err
			}
		}
		for _, p := range results {
			p.msg = nil // read again if a later page needs it
		}
		start = end
	}
	return nil
}

// pendingMessages gives the results a page's calls may pair with their
// messages: from the page's own messages msgs (at positions pos), else
// read from r.
func pendingMessages(r *sessions.Reader, results map[string]*pendingResult, pos []int, msgs []*sessions.Message) error {
	for k, m := range msgs {
		if m != nil && m.Role == sessions.RoleToolResult {
			if p := results[m.ToolCallID]; p != nil && p.pos == pos[k] {
				p.msg = m
			}
		}
	}
	for _, m := range msgs {
		if m == nil || m.Role != sessions.RoleAssistant {
			continue
		}
		for _, bl := range m.Content.Blocks() {
			if bl.Type != sessions.BlockToolCall {
				continue
			}
			p := results[bl.ID]
			if p == nil || p.used || p.msg != nil {
				continue
			}
			body, err := r.Body(p.pos)
			if err != nil {
				return err
			}
			p.msg = body.Msg
		}
	}
	return nil
}

// pathMarks marks the entries on the path to leaf (none when it is -1):
// a flag an entry rather than a map, for a session of any length.
func pathMarks(s *sessions.Session, leaf int) []bool {
	on := make([]bool, len(s.Entries))
	if leaf >= 0 {
		for _, i := range s.Path(leaf) {
			on[i] = true
		}
	}
	return on
}

// readingOrder lists every entry for reading the whole tree: depth first
// from each root, the child towards pi's leaf before the others, so the
// path pi resumes reads as one run and each abandoned branch follows as a
// run of its own; entries no root reaches (a cycle) come last, in file order.
func readingOrder(s *sessions.Session, onPath []bool) []int {
	order := make([]int, 0, len(s.Entries))
	seen := make([]bool, len(s.Entries))
	var stack []int
	push := func(kids []int) {
		// Pushed in reverse, so they pop in file order, the one on the path first.
		for k := len(kids) - 1; k >= 0; k-- {
			if !onPath[kids[k]] {
				stack = append(stack, kids[k])
			}
		}
		for _, c := range kids {
			if onPath[c] {
				stack = append(stack, c)
			}
		}
	}
	push(s.Roots())
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[i] {
			continue
		}
		seen[i] = true
		order = append(order, i)
		push(s.Children(i))
	}
	for i := range seen {
		if !seen[i] {
			order = append(order, i)
		}
	}
	return order
}
