package web

// Full-text search (the /search page, the command palette, /api/search)
// and indexing progress, through the catalog.

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/search"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// indexingHeader names the header that says piweb is still indexing
// (files done/total): answers hold only what it has indexed so far.
const indexingHeader = "X-Piweb-Indexing"

// indexing reports whether the library is still being filled.
func (s *Server) indexing() bool { return s.cat != nil && s.cat.Indexing() }

// markIndexing sets the indexing header on an answer while indexing goes on.
func (s *Server) markIndexing(c echo.Context) {
	if s.cat == nil {
		return
	}
	p := s.cat.Progress()
	if p.Indexing {
		c.Response().Header().Set(indexingHeader, fmt.Sprintf("%d/%d files", p.FilesDone, p.FilesTotal))
	}
}

// errStillIndexing answers a request for a session piweb has not indexed yet.
func (s *Server) errStillIndexing(err error) *pageError {
	p := s.cat.Progress()
	return &pageError{status: http.StatusServiceUnavailable, title: "Still indexing", err: err,
		msg: fmt.Sprintf("piweb is still reading your sessions (%d of %d files) and has not reached this one yet; try again in a moment.",
			p.FilesDone, p.FilesTotal)}
}

// progressView is the catalog's progress for a page, nil when all is done.
func (s *Server) progressView(poll string, search bool) *views.ProgressView {
	if s.cat == nil {
		return nil
	}
	p := s.cat.Progress()
	if !p.Indexing && (!search || !p.Searching) {
		return nil
	}
	return &views.ProgressView{Indexing: p.Indexing, FilesDone: p.FilesDone, FilesTotal: p.FilesTotal,
		BytesDone: p.BytesDone, BytesTotal: p.BytesTotal, Rate: int64(p.Rate),
		Searching: search && p.Searching, SearchDone: p.SearchDone, SearchTotal: p.SearchTotal, Poll: poll}
}

// indexProgress renders the progress bar alone, for its own refresh
// (?for=search also follows the search index). When indexing is over it
// tells the page (HX-Trigger: piweb-indexed), which reloads its list.
func (s *Server) indexProgress(c echo.Context) error {
	forSearch := c.QueryParam("for") == "search"
	poll := "/index/progress"
	if forSearch {
		poll += "?for=search"
	}
	v := s.progressView(poll, forSearch)
	if v == nil {
		c.Response().Header().Set("HX-Trigger", "piweb-indexed")
		return respond(c, views.IndexProgress(views.ProgressView{}))
	}
	return respond(c, views.IndexProgress(*v))
}

// apiIndex answers GET /api/index: indexing progress.
func (s *Server) apiIndex(c echo.Context) error {
	if s.cat == nil {
		return c.JSON(http.StatusOK, catalog.Progress{})
	}
	return c.JSON(http.StatusOK, s.cat.Progress())
}

// searchArgs reads q, limit and cursor.
func searchArgs(c echo.Context, defLimit int) (q *search.Query, limit int, cursor string, err error) {
	limit = defLimit
	if l := c.QueryParam("limit"); l != "" {
		n, perr := strconv.Atoi(l)
		if perr != nil || n < 1 || n > 200 {
			return nil, 0, "", errBadRequest("limit must be a number from 1 to 200.", perr)
		}
		limit = n
	}
	q, err = search.Parse(c.QueryParam("q"))
	if err != nil {
		var se *search.Error
		if errors.As(err, &se) {
			return nil, 0, "", errBadRequest(queryProblem(se), err)
		}
		return nil, 0, "", errBadRequest("The query cannot be read.", err)
	}
	return q, limit, c.QueryParam("cursor"), nil
}

// queryProblem is a query error as the user reads it.
func queryProblem(se *search.Error) string {
	msg := se.Error()
	if len(msg) > 0 {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return msg + "."
}

// runSearch searches through the catalog; bad cursors are the caller's fault.
func (s *Server) runSearch(c echo.Context, q *search.Query, limit int, cursor string) (catalog.Result, error) {
	if s.cat == nil {
		return catalog.Result{}, &pageError{status: http.StatusServiceUnavailable, title: "No search",
			msg: "Search is not available on this server."}
	}
	res, err := s.cat.Search(c.Request().Context(), q, limit, cursor)
	if errors.Is(err, catalog.ErrCursor) {
		return res, errBadRequest("The cursor does not belong to this query: start again from the first page.", err)
	}
	return res, err
}

// searchAnswer is the body of GET /api/search.
type searchAnswer struct {
	Hits    []catalog.Hit `json:"hits"`
	Next    *string       `json:"next"`
	Partial bool          `json:"partial"`
}

// apiSearch answers GET /api/search?q=QUERY[&limit=N&cursor=C].
func (s *Server) apiSearch(c echo.Context) error {
	q, limit, cursor, err := searchArgs(c, 20)
	if err != nil {
		return err
	}
	res, err := s.runSearch(c, q, limit, cursor)
	if err != nil {
		return err
	}
	s.markIndexing(c)
	if res.Partial {
		c.Response().Header().Set("X-Piweb-Partial", "1")
	}
	if res.Hits == nil {
		res.Hits = []catalog.Hit{}
	}
	return c.JSON(http.StatusOK, searchAnswer{Hits: res.Hits, Next: res.Next, Partial: res.Partial})
}

// searchPage renders /search?q=: hits grouped by session, paged.
func (s *Server) searchPage(c echo.Context) error {
	v := views.SearchView{Query: strings.TrimSpace(c.QueryParam("q")), Demo: s.opt.Demo,
		Progress: s.progressView("/index/progress?for=search", true)}
	if v.Query != "" {
		q, limit, cursor, err := searchArgs(c, 50)
		var pe *pageError
		switch {
		case errors.As(err, &pe) && pe.status == http.StatusBadRequest:
			v.Error = pe.msg
		case err != nil:
			return err
		default:
			res, err := s.runSearch(c, q, limit, cursor)
			if errors.As(err, &pe) && pe.status == http.StatusBadRequest {
				v.Error = pe.msg
			} else if err != nil {
				return err
			}
			s.fillSearch(&v, res, hitWords(q))
		}
	}
	if isHTMX(c) {
		return respond(c, views.SearchResults(v))
	}
	return respond(c, views.SearchPage(v))
}

// fillSearch groups hits by session, in the order of their best hit; each
// hit's link carries words, for the session page to find them.
func (s *Server) fillSearch(v *views.SearchView, res catalog.Result, words string) {
	index := map[string]int{}
	for _, h := range res.Hits {
		k, ok := index[h.Key]
		if !ok {
			k = len(v.Groups)
			index[h.Key] = k
			v.Groups = append(v.Groups, views.SearchGroup{Key: h.Key, URL: views.SessionURL(h.Key), Title: oneLine(plainPreview(h.Session), 120), Project: cmp.Or(h.Cwd, h.Project)})
		}
		v.Groups[k].Hits = append(v.Groups[k].Hits, hitView(h, words))
		v.Hits++
	}
	v.Partial, v.Scanned = res.Partial, res.Scanned
	if res.Next != nil {
		v.Next = "/search" + views.Query("q", v.Query, "cursor", *res.Next)
	}
}

// hitURL opens a hit: its session with the entry selected and the query's
// words as the tree's search (q), which the page also highlights.
func hitURL(h catalog.Hit, words string) string {
	u := views.SessionURL(h.Key) + "?"
	if words != "" {
		u += "q=" + url.QueryEscape(words) + "&"
	}
	return u + "target=" + url.QueryEscape(h.EntryID)
}

// hitWords are the words and phrases a query looks for, as pi's tree search
// takes them (space-separated, all required); its filters, regular
// expressions and negated words are left out.
func hitWords(q *search.Query) string {
	var words []string
	for _, t := range q.Text {
		if t.Kind == search.Word || t.Kind == search.Phrase {
			words = append(words, strings.Fields(t.Value)...)
		}
	}
	return strings.Join(words, " ")
}

func hitView(h catalog.Hit, words string) views.SearchHitView {
	v := views.SearchHitView{URL: hitURL(h, words), EntryID: h.EntryID, Kind: hitKind(h), Place: h.Place,
		Snippet: segments(h.Snippet, h.Ranges), Label: h.Label}
	if h.Timestamp != nil {
		v.When = *h.Timestamp
	}
	return v
}

// hitKind names what a hit is, for its line.
func hitKind(h catalog.Hit) string {
	switch h.Type {
	case "text":
		return h.Role
	case "toolCall":
		return "tool call"
	case "toolResult":
		return "tool output"
	case "branchSummary", "compactionSummary", "compaction":
		return "summary"
	case "custom":
		return "custom message"
	case "name":
		return "session name"
	}
	return h.Type
}

// segments cuts a snippet at its highlighted ranges, without the markdown
// syntax a reader does not see (a hit's text is often a message's markdown).
func segments(snippet string, ranges []search.Range) []views.Seg {
	var out []views.Seg
	add := func(text string, mark bool) {
		if text = stripEmphasis(text); text != "" {
			out = append(out, views.Seg{Text: text, Mark: mark})
		}
	}
	at := 0
	for _, r := range ranges {
		if r.Start < at || r.End > len(snippet) || r.Start >= r.End {
			continue
		}
		if r.Start > at {
			add(snippet[at:r.Start], false)
		}
		add(snippet[r.Start:r.End], true)
		at = r.End
	}
	if at < len(snippet) {
		add(snippet[at:], false)
	}
	return out
}

// stripEmphasis drops markdown's emphasis and code marks from a piece of
// text: runs of two or more "*" or "_" and backticks. Single "*" and "_"
// stay: they are as often globs, products and snake_case as emphasis.
func stripEmphasis(s string) string {
	if !strings.ContainsAny(s, "*_`") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '`':
			i++
			continue
		case '*', '_':
			j := i
			for j < len(s) && s[j] == c {
				j++
			}
			if j-i >= 2 {
				i = j
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// paletteMax is how many lines each section of the palette shows.
const paletteMax = 6

// palette answers the command palette: sessions (name, first message,
// folder, id), labels and entries matching what was typed.
func (s *Server) palette(c echo.Context) error {
	raw := strings.TrimSpace(c.QueryParam("q"))
	v := views.PaletteView{Query: raw}
	if raw == "" || len(raw) > search.MaxQuery {
		return respond(c, views.PaletteResults(v))
	}
	v.All = "/search" + views.Query("q", raw)
	p := listParams{q: raw}
	metas := s.lib.List()
	for i := range metas {
		if len(v.Sessions) == paletteMax {
			break
		}
		if m := &metas[i]; p.matches(m) {
			v.Sessions = append(v.Sessions, views.PaletteItem{URL: views.SessionURL(m.Key),
				Title: titleOf(m.Name, m.FirstMessage, 100), Sub: cmp.Or(m.Cwd, m.Project)})
		}
	}
	if s.cat != nil {
		labels, err := s.cat.Labels(c.Request().Context(), strings.Fields(strings.ToLower(raw)), paletteMax)
		if err != nil {
			return err
		}
		for _, l := range labels {
			if m, ok := s.cat.Library().MetaOf(l.Path); ok {
				v.Labels = append(v.Labels, views.PaletteItem{URL: views.SessionURL(m.Key) + "?target=" + url.QueryEscape(l.EntryID),
					Title: l.Text, Sub: titleOf(m.Name, m.FirstMessage, 60)})
			}
		}
	}
	q, err := search.Parse(raw)
	if err != nil {
		var se *search.Error
		if errors.As(err, &se) {
			v.Error = queryProblem(se)
		}
		return respond(c, views.PaletteResults(v))
	}
	if s.cat != nil {
		res, err := s.cat.Search(c.Request().Context(), q, paletteMax, "")
		if err != nil {
			return err
		}
		for _, h := range res.Hits {
			v.Entries = append(v.Entries, views.PaletteItem{URL: hitURL(h, hitWords(q)), Title: hitKind(h) + " · " + oneLine(plainPreview(h.Session), 50),
				Place: h.Place, Seg: segments(h.Snippet, h.Ranges)})
		}
	}
	return respond(c, views.PaletteResults(v))
}

// targetNote says where a selected entry lies when it is not on the
// active path or was compacted away ("" otherwise).
func targetNote(ss *sessions.Session, target int) string {
	if target < 0 || target >= len(ss.Entries) {
		return ""
	}
	switch ss.Places()[target] {
	case 0:
		return "Off-path: the selected entry is on an abandoned branch, not on the path pi resumes."
	case 2:
		return "Compacted away: the selected entry is on the path pi resumes, but before its last compaction; the model sees only the summary."
	}
	return ""
}
