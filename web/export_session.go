package web

import (
	"context"
	"fmt"

	"github.com/piweb/piweb/pitree"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// sidebarRows caps the tree beside a whole-session export; the
// conversation below it still holds every entry.
const sidebarRows = 20000

// exportSessionHTML renders the whole session b (every entry, redacted as
// asked) as one offline page: pi's tree as a sidebar of links, and every
// branch's entries in the tree's order, each run after a branch point
// saying which entry it continues.
func (s *Server) exportSessionHTML(ctx context.Context, ss *sessions.Session, b *sessions.Branch, red sessions.Redact) ([]byte, error) {
	bs, err := b.Session() // drawn from the redacted lines only
	if err != nil {
		return nil, err
	}
	r, err := bs.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	leaf := bs.Leaf()
	var onPath map[int]bool
	if leaf >= 0 {
		onPath = bs.OnPath(leaf)
	}

	order := readingOrder(bs, onPath)
	bld := &builder{md: exportMarkdown(), s: bs, home: s.opt.Home}
	var runs []views.ExportRun
	var run []int
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		items, err := bld.pathItems(r, run)
		if err != nil {
			return err
		}
		for k := range items {
			items[k].Export = true
		}
		x := views.ExportRun{Items: items, From: -1}
		if p := bs.Parent(run[0]); p >= 0 {
			x.From, x.FromRef = p, ref(bs, p)
		}
		x.OnPath = onPath[run[0]]
		runs = append(runs, x)
		run = run[:0]
		return nil
	}
	for _, i := range order {
		if len(run) > 0 && bs.Parent(i) != run[len(run)-1] {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		run = append(run, i)
	}
	if err := flush(); err != nil {
		return nil, err
	}

	// The sidebar: pi's /tree with its default filter, every row a link.
	side, err := pitree.New(bs, r, pitree.Options{Leaf: leaf, Home: s.opt.Home})
	if err != nil {
		return nil, err
	}
	rows, err := side.Window(r, 0, min(side.Len(), sidebarRows))
	if err != nil {
		return nil, err
	}
	leafRow := -1 // pi's leaf's row, or its nearest visible ancestor's
	if leaf >= 0 {
		leafRow = side.Find(leaf)
	}
	tree := make([]views.ExportRow, len(rows))
	for k := range rows {
		row := &rows[k]
		e := &bs.Entries[row.Pos]
		kind := rowKind(e)
		lead, text := splitLead(kind, row.Preview)
		tree[k] = views.ExportRow{Pos: row.Pos, Prefix: row.Prefix(), Kind: kind, Lead: lead, Text: text,
			Label: row.Label, Labeled: row.Labeled, Active: row.Active, Leaf: k == leafRow}
	}

	m := bs.Meta()
	v := views.ExportView{Whole: true, Name: b.Name, SessionID: ss.Header.ID, Cwd: ss.Header.Cwd, Leaf: b.Leaf,
		Models: m.Models, Created: ss.Meta().Created, Exported: views.Now(), Entries: len(bs.Entries),
		Messages: m.Messages, Tokens: m.Tokens, Cost: m.Cost, Runs: runs, Tree: tree, Branches: m.Leaves, LeafPos: leaf}
	if side.Len() > len(rows) {
		v.TreeCut = fmt.Sprintf("The tree shows its first %d rows of %d.", len(rows), side.Len())
	}
	v.Title = oneLine(exportTitle(ss, b, red), 120)
	return renderExport(ctx, v, red)
}

// readingOrder lists every entry for reading the whole tree: depth first
// from each root, the child towards pi's leaf before the others, so the
// path pi resumes reads as one run and each abandoned branch follows as a
// run of its own; entries no root reaches (a cycle) come last, in file order.
func readingOrder(s *sessions.Session, onPath map[int]bool) []int {
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
