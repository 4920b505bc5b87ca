package web

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// list renders the sessions page, or just the list for an htmx search, or
// the next window of it (offset=N). Many clients ask for the same list: it
// is drawn once per state of the library (its version, which changes
// before any change is published, so a page told of a change gets the new
// list), query and half minute (for its "5 min ago" times), by one request
// while the others asking for it meanwhile wait (listPages).
func (s *Server) list(c echo.Context) error {
	p := s.listQuery(c)
	s.markIndexing(c)
	metas, version := s.lib.Listed()
	progress := s.progressView("/index/progress", false)
	key := listKey{version: version, q: p.q, sort: p.sort, machine: p.machine, offset: p.offset, htmx: isHTMX(c),
		indexing: progress != nil, when: views.Now().Unix() / 30}
	page, err := s.lists.get(key, progress == nil, func() (*drawnList, error) {
		v := s.listView(p, metas)
		var comp templ.Component
		switch {
		case p.offset > 0:
			comp = views.SessionsMore(v)
		case key.htmx:
			comp = views.SessionList(v)
		default:
			v.Progress = progress
			comp = views.ListPage(v)
		}
		var b bytes.Buffer
		if err := comp.Render(context.WithoutCancel(c.Request().Context()), &b); err != nil {
			return nil, err
		}
		page := &drawnList{html: b.Bytes()}
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression) // once per state: worth the best
		zw.Write(page.html)
		zw.Close()
		page.gzip = z.Bytes()
		return page, nil
	})
	if err != nil {
		return err
	}
	return writeHTML(c, page)
}

// errDrawFailed is the error of a list whose drawing panicked, for the
// requests that waited for it.
var errDrawFailed = errors.New("the sessions list could not be drawn")

// drawnList is a drawn sessions list, as it is and compressed: the list
// compresses itself once (the gzip middleware skips it), so many clients
// asking at once cost neither a render nor a compressor each.
type drawnList struct {
	html, gzip []byte
}

// listKey names a drawn sessions list.
type listKey struct {
	version          uint64 // the library's state (Library.Listed)
	q, sort, machine string
	offset           int
	htmx             bool
	indexing         bool  // drawn with the progress bar (never kept)
	when             int64 // the half minute it was drawn in
}

// writeHTML sends a drawn list, compressed for a client that takes gzip.
func writeHTML(c echo.Context, page *drawnList) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	h.Add("Vary", "HX-Request, Accept-Encoding")
	h.Set("Cache-Control", "no-store")
	body := page.html
	if strings.Contains(c.Request().Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = page.gzip
	}
	c.Response().WriteHeader(http.StatusOK)
	_, err := c.Response().Write(body)
	return err
}

// listParams are the sessions page's search and sort.
type listParams struct {
	q      string
	sort   string
	offset int // the first session of the window shown (the page shows listWindow at a time)
	// machine is the machine filtered by, on a team server ("" for all);
	// machineOf names the machine of a session file there (nil elsewhere).
	machine   string
	machineOf func(file string) string
}

// listWindow is how many sessions the sessions page shows at once; the rest
// come a window at a time as the page scrolls ("Show more").
const listWindow = 200

func (s *Server) listQuery(c echo.Context) listParams {
	p := listParams{q: strings.TrimSpace(c.QueryParam("q")), sort: c.QueryParam("sort")}
	if s.opt.Machine != nil {
		p.machineOf, p.machine = s.opt.Machine, c.QueryParam("machine")
	}
	if o, err := strconv.Atoi(c.QueryParam("offset")); err == nil && o > 0 {
		p.offset = o
	}
	if len(p.q) > 200 {
		p.q = p.q[:200]
	}
	switch p.sort {
	case views.SortName, views.SortFirst, views.SortFamilies:
	default:
		p.sort = views.SortActivity
	}
	return p
}

// listView builds the sessions page from the library. Every session
// counts in its project's totals and the order, but only the window's
// are made rows of the page.
func (s *Server) listView(p listParams, metas []sessions.Meta) views.ListView {
	byKey := make(map[string]*sessions.Meta, len(metas))
	for i := range metas {
		byKey[metas[i].Key] = &metas[i]
	}
	v := views.ListView{Query: p.q, Sort: p.sort, Total: len(metas), Demo: s.opt.Demo, Root: s.opt.Root, Machine: p.machine}
	for file, err := range s.lib.Problems() {
		v.Problems++
		if p.offset == 0 {
			v.Unreadable = append(v.Unreadable, views.Unreadable{File: relTo(s.opt.Root, file), Why: problemWhy(file, err)})
		}
	}
	slices.SortFunc(v.Unreadable, func(a, b views.Unreadable) int { return strings.Compare(a.File, b.File) })
	groups := map[string]*listGroup{}
	var order []*listGroup
	machines := map[string]bool{}
	for i := range metas {
		m := &metas[i]
		if p.machineOf != nil {
			machines[p.machineOf(m.File)] = true
		}
		if !p.matches(m) {
			continue
		}
		v.Shown++
		key := p.group(m)
		g, ok := groups[key]
		if !ok {
			g = &listGroup{head: views.ProjectGroup{DOMID: domID("p", key), Cwd: m.Cwd}}
			if p.machineOf != nil {
				g.head.Machine = p.machineOf(m.File)
			}
			groups[key] = g
			order = append(order, g)
		}
		g.rows = append(g.rows, listRow{m: m, sortKey: p.sortKey(m)})
		g.head.Tokens += m.Tokens
		g.head.Cost += m.Cost
	}
	if p.sort == views.SortFamilies {
		order = families(order, byKey)
	}
	for _, g := range order {
		if p.sort != views.SortFamilies {
			slices.SortStableFunc(g.rows, p.compare)
		}
	}
	// Projects: by their most recent session for the activity sort, by folder otherwise.
	slices.SortStableFunc(order, func(a, b *listGroup) int {
		if p.sort == views.SortActivity || p.sort == views.SortFamilies {
			return b.rows[0].m.Modified.Compare(a.rows[0].m.Modified)
		}
		return cmp.Or(cmp.Compare(a.head.Machine, b.head.Machine), cmp.Compare(a.head.Cwd, b.head.Cwd))
	})
	v.Machines = slices.Sorted(maps.Keys(machines))
	// The window: sessions [offset, offset+listWindow) in the order shown.
	// A group the window starts inside goes on from the window before.
	at, end := 0, p.offset+listWindow
	for _, g := range order {
		n := len(g.rows)
		lo, hi := max(p.offset-at, 0), min(end-at, n)
		at += n
		if lo >= hi {
			continue
		}
		w := g.head
		for _, r := range g.rows[lo:hi] {
			it := p.item(r.m, byKey)
			if p.sort == views.SortFamilies {
				it.Depth, it.ShowCwd = r.depth, true
			}
			w.Sessions = append(w.Sessions, it)
		}
		w.Count = n
		w.Continued = lo > 0
		v.Groups = append(v.Groups, w)
	}
	if end < v.Shown {
		v.More = v.Shown - end
		v.MoreURL = "/" + views.Query("q", p.q, "sort", p.sort, "machine", p.machine, "offset", strconv.Itoa(end))
	}
	return v
}

// listGroup is a group of the sessions page before it is drawn: its
// header and totals, and its sessions in order.
type listGroup struct {
	head views.ProjectGroup // without its sessions
	rows []listRow
}

// listRow is a session of the sessions page before it is drawn.
type listRow struct {
	m       *sessions.Meta
	sortKey string // what the name and first-message sorts compare
	depth   int    // in the families sort: forks down from its family's first session
}

// groupHeads sums up the sessions page's projects as they stand, for their
// headers: the group named group (see listParams.group; every project when
// group is nil), or in the families sort its one group.
func (s *Server) groupHeads(p listParams, group *string) []views.ProjectGroup {
	metas, _ := s.lib.Listed()
	byCwd := map[string]*views.ProjectGroup{}
	var order []*views.ProjectGroup
	for i := range metas {
		m := &metas[i]
		key := p.group(m)
		if p.sort == views.SortFamilies {
			key = ""
		} else if group != nil && key != *group {
			continue
		}
		if !p.matches(m) {
			continue
		}
		g := byCwd[key]
		if g == nil {
			g = &views.ProjectGroup{DOMID: domID("p", key), Cwd: m.Cwd}
			if p.machineOf != nil {
				g.Machine = p.machineOf(m.File)
			}
			if p.sort == views.SortFamilies {
				g.DOMID, g.Cwd = familiesID, familiesTitle
			}
			byCwd[key] = g
			order = append(order, g)
		}
		g.Count++
		g.Tokens += m.Tokens
		g.Cost += m.Cost
	}
	out := make([]views.ProjectGroup, len(order))
	for k, g := range order {
		out[k] = *g
	}
	return out
}

// The families sort's one group.
const (
	familiesID    = "families"
	familiesTitle = "every project, as families of forks"
)

// families regroups the sessions of all projects as one list of families:
// each session with no parent in the list, then the sessions forked from
// it, under it (forks of forks deeper), newest family first and newest fork
// first. Without recursion: forks can chain as far as users fork.
func families(groups []*listGroup, byKey map[string]*sessions.Meta) []*listGroup {
	var all []listRow
	for _, g := range groups {
		all = append(all, g.rows...)
	}
	idx := make(map[string]int, len(all))
	for i := range all {
		idx[all[i].m.Key] = i
	}
	kids := map[string][]int{}
	var roots []int
	for i := range all {
		if p := parentKey(all[i].m, byKey); p != "" && p != all[i].m.Key {
			if _, ok := idx[p]; ok {
				kids[p] = append(kids[p], i)
				continue
			}
		}
		roots = append(roots, i)
	}
	newest := func(a, b int) int { return all[b].m.Modified.Compare(all[a].m.Modified) }
	for _, k := range kids {
		slices.SortStableFunc(k, newest)
	}
	// A family is as recent as its newest member.
	latest := make(map[int]time.Time, len(roots))
	var members [][]int
	for _, r := range roots {
		var fam []int
		stack := []int{r}
		depth := map[int]int{r: 0}
		seen := map[int]bool{}
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[i] {
				continue // a fork cycle (hand-made parentSession links)
			}
			seen[i] = true
			all[i].depth = depth[i]
			fam = append(fam, i)
			if all[i].m.Modified.After(latest[r]) {
				latest[r] = all[i].m.Modified
			}
			k := kids[all[i].m.Key]
			for j := len(k) - 1; j >= 0; j-- {
				depth[k[j]] = depth[i] + 1
				stack = append(stack, k[j])
			}
		}
		members = append(members, fam)
	}
	slices.SortStableFunc(members, func(a, b []int) int { return latest[b[0]].Compare(latest[a[0]]) })
	g := &listGroup{head: views.ProjectGroup{DOMID: familiesID, Cwd: familiesTitle}}
	for _, fam := range members {
		for _, i := range fam {
			g.rows = append(g.rows, all[i])
			g.head.Tokens += all[i].m.Tokens
			g.head.Cost += all[i].m.Cost
		}
	}
	if len(g.rows) == 0 {
		return nil
	}
	return []*listGroup{g}
}

// matches reports whether every search token occurs in the session's name,
// first message, folder or id, ignoring case.
func (p listParams) matches(m *sessions.Meta) bool {
	if p.machine != "" && p.machineOf != nil && p.machineOf(m.File) != p.machine {
		return false
	}
	if p.q == "" {
		return true
	}
	hay := strings.ToLower(m.Name + "\n" + m.FirstMessage + "\n" + m.Cwd + "\n" + m.ID)
	for _, t := range strings.Fields(strings.ToLower(p.q)) {
		if !strings.Contains(hay, t) {
			return false
		}
	}
	return true
}

// sortKey is what the chosen sort compares of a session besides its
// time: its title (the row's) or first message, in lower case.
func (p listParams) sortKey(m *sessions.Meta) string {
	switch p.sort {
	case views.SortName:
		if m.Name != "" {
			return strings.ToLower(m.Name)
		}
		return strings.ToLower(oneLine(plainPreview(m.FirstMessage), 300))
	case views.SortFirst:
		return strings.ToLower(oneLine(plainPreview(m.FirstMessage), 300))
	}
	return ""
}

// compare orders two sessions of a project by the chosen sort, most recent first on ties.
func (p listParams) compare(a, b listRow) int {
	if c := cmp.Compare(a.sortKey, b.sortKey); c != 0 {
		return c
	}
	return b.m.Modified.Compare(a.m.Modified)
}

// group names the group of the sessions page a session is in: its
// project (working directory), on a team server with its machine.
func (p listParams) group(m *sessions.Meta) string {
	if p.machineOf == nil {
		return m.Cwd
	}
	return p.machineOf(m.File) + "\x00" + m.Cwd
}

// item is sessionItem in the group p puts it in.
func (p listParams) item(m *sessions.Meta, byKey map[string]*sessions.Meta) views.SessionItem {
	it := sessionItem(m, byKey)
	if p.machineOf != nil {
		it.Machine = p.machineOf(m.File)
		it.GroupID = domID("p", p.group(m))
	}
	return it
}

// sessionItem converts a session's Meta for the list; byKey resolves fork parents.
func sessionItem(m *sessions.Meta, byKey map[string]*sessions.Meta) views.SessionItem {
	it := views.SessionItem{
		ID: m.ID, Key: m.Key, CopyOf: m.CopyOf, File: m.File, DOMID: domID("s", m.Key), GroupID: domID("p", m.Cwd), Name: m.Name, FirstMessage: oneLine(plainPreview(m.FirstMessage), 300),
		Cwd: m.Cwd, Created: m.Created, Modified: m.Modified, Entries: m.Entries, Messages: m.Messages,
		Branches: m.Branches, Leaves: m.Leaves, Tokens: m.Tokens, Cost: m.Cost, Models: m.Models,
		Diagnostics: m.Diagnostics, Version: m.Version,
	}
	if m.ParentSession != "" {
		if pk := parentKey(m, byKey); pk != "" {
			pm := byKey[pk]
			it.ParentKey = pm.Key
			it.ParentTitle = titleOf(pm.Name, pm.FirstMessage, 80)
		} else {
			it.ParentFile = m.ParentSession
		}
	}
	return it
}

// parentKey is the key of the session m was forked from, when byKey holds it.
func parentKey(m *sessions.Meta, byKey map[string]*sessions.Meta) string {
	if m.ParentSession == "" || m.ParentKey == "" {
		return ""
	}
	if _, ok := byKey[m.ParentKey]; !ok {
		return ""
	}
	return m.ParentKey
}

// domID makes an HTML id from any string: a prefix and a hash.
func domID(prefix, s string) string {
	h := sha256.Sum256([]byte(s))
	return prefix + hex.EncodeToString(h[:6])
}

// titleOf is a session's title as links and headers show it: its name, or
// its first message without markdown syntax, on one line of at most n runes.
func titleOf(name, first string, n int) string {
	if name != "" {
		return oneLine(name, n)
	}
	return oneLine(plainPreview(first), n)
}

// oneLine collapses whitespace and cuts s to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// relTo returns file relative to root when it lies below it.
func relTo(root, file string) string {
	if r, err := filepath.Rel(root, file); err == nil && root != "" && !strings.HasPrefix(r, "..") {
		return r
	}
	return file
}

// problemWhy is why a file is not a readable session, for people: the
// error without the file's path, which is shown beside it.
func problemWhy(file string, err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, file+": ")
	msg = strings.ReplaceAll(msg, "open "+file+": ", "")
	return msg
}
