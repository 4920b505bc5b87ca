package catalog

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/piweb/piweb/search"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
)

// Places of an entry relative to its session's active path (pi's leaf).
const (
	PlacePath      = "path"      // on the path pi resumes
	PlaceOffPath   = "offpath"   // on an abandoned branch
	PlaceCompacted = "compacted" // on the path, but before its last compaction's first kept entry: the model no longer sees it
)

// Hit is one searchable piece of an entry that matches a query.
type Hit struct {
	Key       string         `json:"key"`
	SessionID string         `json:"sessionId"`
	EntryID   string         `json:"entryId"`
	Type      string         `json:"type"`
	Role      string         `json:"role"`
	OnPath    bool           `json:"onPath"`
	Place     string         `json:"place"`
	Snippet   string         `json:"snippet"`
	Ranges    []search.Range `json:"ranges"`
	Timestamp *time.Time     `json:"timestamp"`
	Project   string         `json:"project"` // the project folder under the root
	Cwd       string         `json:"cwd"`     // the session's working directory
	Session   string         `json:"session"` // the session's name, or its first message
	Label     string         `json:"label,omitempty"`
	Score     float64        `json:"-"`
}

// Result is one page of hits.
type Result struct {
	Hits []Hit   `json:"hits"`
	Next *string `json:"next"`
	// Partial: the search index is still being built (or the scan hit its
	// bounds): more may match than these.
	Partial bool `json:"partial"`
	Scanned bool `json:"scanned"` // found by reading entries, newest first, not ranked
}

// ErrCursor is returned for a cursor that does not belong to the query.
var ErrCursor = store.ErrCursor

// Search returns a page of q's hits, best first (newest first among
// equals); cursor is "" or the previous page's Next.
func (c *Catalog) Search(ctx context.Context, q *search.Query, limit int, cursor string) (Result, error) {
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 200)
	if len(q.Labels) > 0 {
		return c.labeled(ctx, q, limit, cursor) // labels are few: straight to them
	}
	select {
	case <-c.searched:
	default:
		if c.st == nil {
			break
		}
		res, err := c.indexed(ctx, q, limit, cursor)
		res.Partial = true
		return res, err
	}
	if c.st == nil {
		return c.scan(ctx, q, limit, cursor)
	}
	return c.indexed(ctx, q, limit, cursor)
}

// indexed searches through the store's word index.
func (c *Catalog) indexed(ctx context.Context, q *search.Query, limit int, cursor string) (Result, error) {
	o := store.SearchOptions{Limit: limit, Cursor: cursor, Budget: 150 * time.Millisecond, SnippetWidth: 120} // a re: that must read many texts answers with what it found, and a Next
	rs := c.newRun()
	defer rs.close()
	infos := map[docRef]*hitInfo{}
	info := func(h *store.Hit) *hitInfo {
		k := docRef{h.File, h.Position}
		if in, ok := infos[k]; ok {
			return in
		}
		in := rs.entryInfo(h.File, h.Position, h.EntryID)
		infos[k] = in
		return in
	}
	o.Keep = func(h *store.Hit) bool {
		in := info(h)
		return in != nil && keep(q, in)
	}
	o.Text = func(h *store.Hit) (string, error) {
		if info(h) == nil {
			return "", errGone
		}
		return rs.text(h.File, h.Position, h.EntryID, h.Part)
	}
	page, err := c.st.Search(ctx, q, o)
	if err != nil {
		if errors.Is(err, store.ErrCorrupt) {
			c.storeFailed(err)
			return c.scan(ctx, q, limit, "")
		}
		if errors.Is(err, store.ErrClosed) { // a Reset under way
			return c.scan(ctx, q, limit, "")
		}
		return Result{}, err
	}
	res := Result{Hits: make([]Hit, 0, len(page.Hits)), Scanned: page.Scanned}
	for i := range page.Hits {
		h := &page.Hits[i]
		in := info(h)
		if in == nil {
			continue
		}
		res.Hits = append(res.Hits, in.hit(h.EntryID, h.Type, h.Role, h.Snippet, h.Ranges, h.Time, h.Score))
	}
	if page.Next != "" {
		res.Next = &page.Next
	}
	return res, nil
}

// docRef names an entry: its file and position.
type docRef struct {
	file string
	pos  int
}

// searchRun is the state of one search: each session's facts and open
// file, looked up once however many of its entries are candidates.
type searchRun struct {
	c     *Catalog
	sess  map[string]*sessInfo
	files map[string]*os.File
}

// sessInfo is what every hit of one session shares.
type sessInfo struct {
	key, id, project, cwd, title string
}

func (c *Catalog) newRun() *searchRun {
	return &searchRun{c: c, sess: map[string]*sessInfo{}, files: map[string]*os.File{}}
}

func (rs *searchRun) close() {
	for _, f := range rs.files {
		if f != nil {
			f.Close()
		}
	}
}

// session returns the facts of file's session, nil when it is gone.
func (rs *searchRun) session(file string) *sessInfo {
	if si, ok := rs.sess[file]; ok {
		return si
	}
	var si *sessInfo
	if key, ok := rs.c.lib.Key(file); ok {
		rs.c.lib.ViewFile(file, func(s *sessions.Session) error {
			m := s.Meta()
			si = &sessInfo{key: key, id: s.Header.ID, project: m.Project, cwd: m.Cwd, title: oneLine(cmp.Or(m.Name, m.FirstMessage), 120)}
			return nil
		})
	}
	rs.sess[file] = si
	return si
}

// entryInfo returns what file's session says of the entry at pos, or nil
// when the file no longer holds that entry there.
func (rs *searchRun) entryInfo(file string, pos int, id string) *hitInfo {
	si := rs.session(file)
	if si == nil {
		return nil
	}
	var in *hitInfo
	rs.c.lib.ViewFile(file, func(s *sessions.Session) error {
		if pos < 0 || pos >= len(s.Entries) || s.Entries[pos].ID != id {
			return nil
		}
		in = &hitInfo{key: si.key, sessionID: si.id, project: si.project, cwd: si.cwd, title: si.title,
			place: rs.c.places.place(s, pos), label: s.LabelOf(pos)}
		return nil
	})
	return in
}

// text returns the text of part of the entry at pos of file, checking the
// entry is still the one indexed.
func (rs *searchRun) text(file string, pos int, id string, part int) (string, error) {
	e, checkID, ok := rs.c.lib.EntryOf(file, pos, id)
	if !ok {
		return "", errGone
	}
	f, seen := rs.files[file]
	if !seen {
		var err error
		if f, err = rs.c.lib.OpenRead(file); err != nil {
			f = nil
		}
		rs.files[file] = f
	}
	if f == nil {
		return "", errGone
	}
	line, err := sessions.ReadLine(f, &e, checkID)
	if err != nil {
		return "", err
	}
	p, ok := pieceText(&e, line, part)
	if !ok {
		return "", errGone
	}
	return p.text, nil
}

var errGone = errors.New("the entry is no longer in the file")

// keep applies the filters only the session knows: is:, label:.
func keep(q *search.Query, in *hitInfo) bool {
	switch q.Path {
	case search.OffPath:
		if in.place != PlaceOffPath {
			return false
		}
	case search.OnPath:
		if in.place == PlaceOffPath {
			return false
		}
	}
	return q.AllowLabel(in.label)
}

// hitInfo is what a hit's session says of its entry.
type hitInfo struct {
	key, sessionID, project, cwd, title string
	place, label                        string
}

func (in *hitInfo) hit(entryID, typ, role, snippet string, ranges []search.Range, ms int64, score float64) Hit {
	h := Hit{Key: in.key, SessionID: in.sessionID, EntryID: entryID, Type: typ, Role: role, Place: in.place,
		OnPath: in.place != PlaceOffPath, Snippet: snippet, Ranges: ranges, Project: in.project, Cwd: in.cwd, Session: in.title,
		Label: in.label, Score: score}
	if ranges == nil {
		h.Ranges = []search.Range{}
	}
	if ms != 0 {
		t := time.UnixMilli(ms).UTC()
		h.Timestamp = &t
	}
	return h
}

// placeCache keeps each session's places by generation: one walk of the
// path per change, not per hit.
type placeCache struct {
	mu sync.Mutex
	m  map[*sessions.Session]*places
}

type places struct {
	gen uint64
	p   []uint8 // 0 off path, 1 on path, 2 compacted away
}

// place returns where entry i of s is; s is read-locked by the caller.
func (pc *placeCache) place(s *sessions.Session, i int) string {
	pc.mu.Lock()
	if pc.m == nil || len(pc.m) > 256 {
		pc.m = map[*sessions.Session]*places{}
	}
	ps := pc.m[s]
	pc.mu.Unlock()
	if ps == nil || ps.gen != s.Gen() || len(ps.p) != len(s.Entries) {
		ps = &places{gen: s.Gen(), p: Places(s)}
		pc.mu.Lock()
		pc.m[s] = ps
		pc.mu.Unlock()
	}
	switch ps.p[i] {
	case 1:
		return PlacePath
	case 2:
		return PlaceCompacted
	}
	return PlaceOffPath
}

// Places marks every entry of s: 0 off the active path, 1 on it, 2 on it
// but compacted away (before the first kept entry of the path's last
// compaction). Linear in the entries.
func Places(s *sessions.Session) []uint8 {
	out := make([]uint8, len(s.Entries))
	path := s.Path(s.Leaf())
	for _, i := range path {
		out[i] = 1
	}
	for k := len(path) - 1; k >= 0; k-- {
		e := &s.Entries[path[k]]
		if e.Type != sessions.TypeCompaction || e.FirstKept() == "" {
			continue
		}
		kept := -1
		if j, ok := s.Lookup(e.FirstKept()); ok {
			for m := 0; m < k; m++ {
				if path[m] == j {
					kept = m
					break
				}
			}
		}
		if kept < 0 {
			kept = k // the kept entry is not on the path: all before the compaction
		}
		for m := 0; m < kept; m++ {
			out[path[m]] = 2
		}
		break
	}
	return out
}

// scanBudget bounds one page of a search without a store.
const (
	scanBudget = 2 * time.Second
	scanBytes  = 256 << 20
)

// scan searches without a store: sessions most recent first, each
// session's entries newest first, until the page is full, or its time or
// bytes run out (then Next goes on with the next session).
func (c *Catalog) scan(ctx context.Context, q *search.Query, limit int, cursor string) (Result, error) {
	start, skip := 0, 0
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return Result{}, ErrCursor
		}
		if _, err := fmt.Sscanf(string(b), "scan:%d:%d", &start, &skip); err != nil || start < 0 || skip < 0 {
			return Result{}, ErrCursor
		}
	}
	metas := c.lib.List()
	rs := c.newRun()
	defer rs.close()
	res := Result{Scanned: true, Hits: []Hit{}}
	deadline := time.Now().Add(scanBudget)
	var read int64
	next := func(k, skip int) {
		n := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "scan:%d:%d", k, skip))
		res.Next = &n
	}
	for k := start; k < len(metas); k++ {
		if len(res.Hits) >= limit || time.Now().After(deadline) || read > scanBytes {
			next(k, 0)
			res.Partial = true
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		m := &metas[k]
		if !q.AllowProject(m.Project) {
			continue
		}
		read += m.Size
		var found []Hit
		c.lib.ReadLines(m.File, 0, func(pos int, e *sessions.Entry, line []byte) error {
			if !q.AllowTime(entryTime(e)) {
				return nil
			}
			var in *hitInfo
			for _, p := range pieces(e, line) {
				if !q.AllowRole(p.role) {
					continue
				}
				snippet, ranges, ok, _ := q.Excerpt(p.text, 120)
				if !ok {
					continue
				}
				if in == nil {
					if in = rs.entryInfo(m.File, pos, e.ID); in == nil || !keep(q, in) {
						return nil
					}
				}
				found = append(found, in.hit(e.ID, p.typ, p.role, snippet, ranges, entryTime(e), 0))
			}
			return nil
		})
		slices.Reverse(found) // newest first
		if k == start {
			found = found[min(skip, len(found)):]
		}
		room := limit - len(res.Hits)
		if len(found) > room {
			res.Hits = append(res.Hits, found[:room]...)
			done := room
			if k == start {
				done += skip
			}
			next(k, done)
			return res, nil
		}
		res.Hits = append(res.Hits, found...)
	}
	return res, nil
}

// labeled searches the labeled entries only (a query with label:): they
// are few, so each is read and matched, newest first.
func (c *Catalog) labeled(ctx context.Context, q *search.Query, limit int, cursor string) (Result, error) {
	skip := 0
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return Result{}, ErrCursor
		}
		if _, err := fmt.Sscanf(string(b), "label:%d", &skip); err != nil || skip < 0 {
			return Result{}, ErrCursor
		}
	}
	type cand struct {
		file string
		pos  int
		id   string
		time int64
	}
	var cands []cand
	for _, m := range c.lib.List() {
		if !q.AllowProject(m.Project) {
			continue
		}
		c.lib.ViewFile(m.File, func(s *sessions.Session) error {
			for id, label := range s.Labels() {
				if !q.AllowLabel(label) {
					continue
				}
				if i, ok := s.Lookup(id); ok && q.AllowTime(entryTime(&s.Entries[i])) {
					cands = append(cands, cand{m.File, i, id, entryTime(&s.Entries[i])})
				}
			}
			return nil
		})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.time != b.time {
			return cmp.Compare(b.time, a.time)
		}
		return cmp.Compare(b.pos, a.pos)
	})
	rs := c.newRun()
	defer rs.close()
	res := Result{Hits: []Hit{}}
	for k := skip; k < len(cands); k++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if len(res.Hits) >= limit {
			n := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "label:%d", k))
			res.Next = &n
			break
		}
		cd := cands[k]
		in := rs.entryInfo(cd.file, cd.pos, cd.id)
		if in == nil || !keep(q, in) {
			continue
		}
		e, checkID, ok := c.lib.EntryOf(cd.file, cd.pos, cd.id)
		if !ok {
			continue
		}
		f, err := c.lib.OpenRead(cd.file)
		if err != nil {
			continue
		}
		line, err := sessions.ReadLine(f, &e, checkID)
		f.Close()
		if err != nil {
			continue
		}
		for _, p := range pieces(&e, line) {
			if !q.AllowRole(p.role) {
				continue
			}
			if snippet, ranges, ok, _ := q.Excerpt(p.text, 120); ok {
				res.Hits = append(res.Hits, in.hit(cd.id, p.typ, p.role, snippet, ranges, cd.time, 0))
				break // one hit per labeled entry
			}
		}
	}
	return res, nil
}

// oneLine flattens s to one line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
