package web

import (
	"cmp"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/ledger"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// ledger returns the session's ledger (usage and tool calls of every entry,
// subtree sums), made once per file and extended as the file grows. The
// caller holds the library's read lock.
func (srv *Server) ledger(s *sessions.Session, r *sessions.Reader) (*ledger.Ledger, error) {
	l := srv.layouts.ledgers.getOrPut(s.File, ledger.New)
	if err := l.Update(r); err != nil {
		return nil, err
	}
	srv.layouts.ledgers.put(s.File, l, ledgerCost(s)) // its cost as it grew
	return l, nil
}

// leafParam resolves the entry a query parameter names; "" is the session's leaf.
func leafParam(key string, s *sessions.Session, ref string) (int, error) {
	if ref == "" {
		return s.Leaf(), nil
	}
	i, ok := resolve(s, ref)
	if !ok {
		return 0, errNoEntry(key, ref)
	}
	return i, nil
}

// apiStats answers GET /api/sessions/:key/stats[?leaf=ID]: the file's totals
// (what pi's /session shows), the path's to leaf, the abandoned rest, and
// the file's by model.
func (srv *Server) apiStats(c echo.Context) error {
	key := sessionKey(c)
	var st ledger.Stats
	err := srv.view(key, func(ss *sessions.Session, r *sessions.Reader) error {
		leaf, err := leafParam(key, ss, c.QueryParam("leaf"))
		if err != nil {
			return err
		}
		l, err := srv.ledger(ss, r)
		if err != nil {
			return err
		}
		st = l.Stats(ss, leaf)
		return nil
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

// fileJSON is one file of GET /api/sessions/:key/files.
type fileJSON struct {
	Path    string              `json:"path"`
	Added   int                 `json:"added"`
	Removed int                 `json:"removed"`
	Changes []ledger.FileChange `json:"changes"`
}

// changesAt reads the file changes along the path to the request's ?leaf
// (pi's leaf when absent), and returns that leaf.
func changesAt(c echo.Context, key string, ss *sessions.Session, r *sessions.Reader) (leaf int, ch *ledger.Changes, err error) {
	if leaf, err = leafParam(key, ss, c.QueryParam("leaf")); err != nil {
		return 0, nil, err
	}
	ch, err = ledger.ChangesOf(r, ss.Path(leaf))
	return leaf, ch, err
}

// apiFiles answers GET /api/sessions/:key/files?leaf=ID: the files pi's
// edit and write tools changed along the path, with each change's patch.
func (srv *Server) apiFiles(c echo.Context) error {
	key := sessionKey(c)
	out := []fileJSON{}
	err := srv.view(key, func(ss *sessions.Session, r *sessions.Reader) error {
		_, ch, err := changesAt(c, key, ss, r)
		if err != nil {
			return err
		}
		for _, f := range ch.Files {
			out = append(out, fileJSON{f.Path, f.Added, f.Removed, f.Changes})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// sideJSON is one side of GET /api/sessions/:key/compare.
type sideJSON struct {
	Entries []string      `json:"entries"`
	Stats   ledger.Totals `json:"stats"`
	Files   []string      `json:"files"`
}

// compareJSON is the answer of GET /api/sessions/:key/compare.
type compareJSON struct {
	Ancestor *string  `json:"ancestor"`
	A        sideJSON `json:"a"`
	B        sideJSON `json:"b"`
}

// apiCompare answers GET /api/sessions/:key/compare?a=ID&b=ID: the two
// entries' deepest common ancestor and each side from there.
func (srv *Server) apiCompare(c echo.Context) error {
	key := sessionKey(c)
	var out compareJSON
	err := srv.view(key, func(ss *sessions.Session, r *sessions.Reader) error {
		cm, err := srv.compare(key, ss, r, c.QueryParam("a"), c.QueryParam("b"))
		if err != nil {
			return err
		}
		if cm.fork.Ancestor >= 0 {
			id := ref(ss, cm.fork.Ancestor)
			out.Ancestor = &id
		}
		out.A, out.B = cm.side(ss, 0), cm.side(ss, 1)
		return nil
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// comparison is two entries' fork with each side's totals and changes.
type comparison struct {
	a, b    int
	fork    ledger.Parting
	totals  [2]ledger.Totals
	changes [2]*ledger.Changes
}

// compare resolves refs a and b and sums each side from their fork.
func (srv *Server) compare(key string, ss *sessions.Session, r *sessions.Reader, a, b string) (*comparison, error) {
	if a == "" || b == "" {
		return nil, errBadRequest(`Compare needs two entries: "a" and "b" (entry ids).`, nil)
	}
	var cm comparison
	var ok bool
	if cm.a, ok = resolve(ss, a); !ok {
		return nil, errNoEntry(key, a)
	}
	if cm.b, ok = resolve(ss, b); !ok {
		return nil, errNoEntry(key, b)
	}
	cm.fork = ledger.Compare(ss, cm.a, cm.b)
	l, err := srv.ledger(ss, r)
	if err != nil {
		return nil, err
	}
	for k, side := range [2][]int{cm.fork.A, cm.fork.B} {
		cm.totals[k] = l.Sum(ss, side)
		if cm.changes[k], err = ledger.ChangesOf(r, side); err != nil {
			return nil, err
		}
	}
	return &cm, nil
}

// side is one side of a comparison as JSON.
func (cmp *comparison) side(ss *sessions.Session, k int) sideJSON {
	pos := cmp.fork.A
	if k == 1 {
		pos = cmp.fork.B
	}
	out := sideJSON{Entries: make([]string, len(pos)), Stats: cmp.totals[k], Files: cmp.changes[k].Paths()}
	for i, p := range pos {
		out.Entries[i] = ref(ss, p)
	}
	return out
}

// patchFile answers GET /s/:key/patch?leaf=ID: the net unified patch of the
// files changed along the path, as a download.
func (srv *Server) patchFile(c echo.Context) error {
	key := sessionKey(c)
	var body, name string
	err := srv.view(key, func(ss *sessions.Session, r *sessions.Reader) error {
		leaf, ch, err := changesAt(c, key, ss, r)
		if err != nil {
			return err
		}
		body = ch.Patch()
		name = safeFileName(strings.TrimSuffix(path.Base(ss.File), ".jsonl")+"-"+ref(ss, leaf)) + ".patch"
		return nil
	})
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	return c.Blob(http.StatusOK, "text/x-diff; charset=utf-8", []byte(body))
}

// safeFileName keeps letters, digits, '-', '_' and '.' of a name.
func safeFileName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// totalsView turns totals into the view's.
func totalsView(t ledger.Totals) views.Totals {
	return views.Totals{Entries: t.Entries, User: t.UserMessages, Assistant: t.AssistantMessages, ToolCalls: t.ToolCalls,
		ToolResults: t.ToolResults, Compactions: t.Compactions, Summaries: t.BranchSummaries, Errors: t.Errors,
		Input: t.Input, Output: t.Output, CacheRead: t.CacheRead, CacheWrite: t.CacheWrite, Tokens: t.Total, Cost: t.Cost}
}

// filesView lists the changed files of a path for the files panel.
func filesView(key string, ss *sessions.Session, ch *ledger.Changes) views.FilesView {
	var v views.FilesView
	for _, f := range ch.Files {
		v.Files = append(v.Files, fileView(key, ss, f, ""))
	}
	for _, b := range ch.Bash {
		r := ref(ss, b.Pos)
		v.Bash = append(v.Bash, views.CommandView{Pos: b.Pos, Ref: r, URL: views.SessionURL(key) + "?target=" + url.QueryEscape(r),
			Command: oneLine(b.Command, 200)})
	}
	return v
}

// fileView is one changed file for the view.
func fileView(key string, ss *sessions.Session, f *ledger.FileChanges, side string) views.FileView {
	fv := views.FileView{Path: f.Path, Added: f.Added, Removed: f.Removed, Side: side}
	for _, c := range f.Changes {
		r := ref(ss, c.Pos)
		fv.Changes = append(fv.Changes, views.ChangeView{Pos: c.Pos, Ref: r, URL: views.SessionURL(key) + "?target=" + url.QueryEscape(r),
			Tool: c.Tool, Created: c.Created, Added: c.Added, Removed: c.Removed, Patch: c.Patch})
	}
	return fv
}

// statsHeader fills the header's statistics from the session's ledger.
func (srv *Server) statsHeader(st *views.SessionStats, ss *sessions.Session, r *sessions.Reader) error {
	l, err := srv.ledger(ss, r)
	if err != nil {
		return err
	}
	all := l.Stats(ss, ss.Leaf())
	st.File, st.Abandoned = totalsView(all.File), totalsView(all.Abandoned)
	st.ByModel = st.ByModel[:0]
	for name, t := range all.ByModel {
		if t.Cost > 0 || t.Total > 0 || t.AssistantMessages > 0 {
			st.ByModel = append(st.ByModel, views.ModelUse{Name: name, Assistant: t.AssistantMessages, Tokens: t.Total, Cost: t.Cost})
		}
	}
	slices.SortFunc(st.ByModel, func(a, b views.ModelUse) int {
		return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(b.Tokens, a.Tokens), strings.Compare(a.Name, b.Name))
	})
	return nil
}

// spent is what one attempt of a branch point cost, for the first row the
// tree shows of it: the row whose visible parent (at vp) is a branch point.
// The attempt is the branch point's child that leads to the row (filters
// may hide entries between them, such as a label). "" elsewhere.
func spent(ss *sessions.Session, l *ledger.Ledger, i, vp int) (text, hint string) {
	if l == nil || vp < 0 || len(ss.Children(vp)) < 2 {
		return "", ""
	}
	c := i
	for c >= 0 && ss.Parent(c) != vp {
		c = ss.Parent(c)
	}
	if c < 0 {
		return "", ""
	}
	sub := l.Subtree(c)
	if sub.Tokens == 0 && sub.Cost == 0 {
		return "", ""
	}
	return views.Cost(sub.Cost) + " · " + views.Tokens(int64(sub.Tokens)),
		"this branch: " + views.Plural(int(sub.Entries), "entry", "entries") + ", " + views.Num(sub.Tokens) + " tokens, " + views.Cost(sub.Cost)
}
