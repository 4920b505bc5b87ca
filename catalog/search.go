package catalog

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/piweb/piweb/internal/js"
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
	// Copies are the same entry in the sessions forked from this one (pi
	// copies the path to a fork's entry with the ids and times kept): one
	// hit says where else it is.
	Copies []Copy `json:"copies,omitempty"`
}

// Copy is an entry's copy in a fork.
type Copy struct {
	Key       string `json:"key"`
	SessionID string `json:"sessionId"`
	Session   string `json:"session"`
	Place     string `json:"place"`
}

// Result is one page of hits.
type Result struct {
	Hits []Hit `json:"hits"`
	// Next is the cursor of the next page, when there may be more hits
	// than this page holds.
	Next *string `json:"next"`
	// Partial: the store does not hold every session as it is yet (its
	// first build, or saves pending): more may match than a search finds.
	Partial bool `json:"partial"`
	Scanned bool `json:"scanned"` // found by reading the files, newest first, not through the store
}

// ErrCursor is returned for a cursor that does not belong to the query.
var ErrCursor = errors.New("invalid cursor: start the search again")

// storeWait is how long a search waits for the store (a server that does
// not answer) before it scans the files instead.
const storeWait = 3 * time.Second

// Search returns a page of q's hits, newest first; cursor is "" or the
// previous page's Next.
func (c *Catalog) Search(ctx context.Context, q *search.Query, limit int, cursor string) (Result, error) {
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 200)
	if len(q.Labels) > 0 {
		return c.labeled(ctx, q, limit, cursor)
	}
	if c.st == nil || strings.HasPrefix(cursor, "scan:") {
		return c.scan(ctx, q, limit, cursor)
	}
	sctx, cancel := context.WithTimeout(ctx, storeWait)
	res, err := c.indexed(sctx, q, limit, cursor)
	cancel()
	if errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrClosed) ||
		errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		c.storeFailed(err)
		return c.scan(ctx, q, limit, "") // the files themselves, until the store works
	}
	res.Partial = res.Partial || c.searching()
	return res, err
}

// indexed searches through the store's full-text index: candidates come
// newest first, each checked on its entry's real text.
func (c *Catalog) indexed(ctx context.Context, q *search.Query, limit int, cursor string) (Result, error) {
	var below int64
	if cursor != "" {
		v, ok := strings.CutPrefix(cursor, "i:")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil || n <= 0 {
			return Result{}, ErrCursor
		}
		below = n
	}
	sq := store.Query{Needles: q.Needles(), Roles: q.Roles, NotRoles: q.NotRoles,
		Projects: ascii(q.Projects), NotProjects: ascii(q.NotProjects), Any: true,
		OffPath: q.Path == search.OffPath, OnPath: q.Path == search.OnPath}
	if !q.After.IsZero() {
		sq.After = q.After.UnixMilli()
	}
	if !q.Before.IsZero() {
		sq.Before = q.Before.UnixMilli()
	}
	rs := c.newRun(ctx)
	defer rs.close()
	rs.rc = newRawCheck(sq.Needles)
	res := Result{Hits: []Hit{}}
	// A query whose candidates mostly fail the check on the real text
	// answers in time with what it found, and a Next.
	deadline := time.Now().Add(c.opt.PageTime)
	// Batches of candidates: a page's worth and a quarter, then as many as
	// the hits still wanted need at the rate found so far, and a quarter
	// again; 1024 at most, since a rate read from a hit or two overshoots,
	// and what a batch holds past the page's last hit is the store's work
	// lost.
	batch, checked := limit+limit/4+1, 0
	for {
		sq.Below, sq.Limit = below, batch
		cands, err := c.st.Search(ctx, sq)
		c.counts.candidates.Add(int64(len(cands)))
		if err != nil {
			return res, err
		}
		for k := range cands {
			cd := &cands[k]
			below = cd.ID
			if h, ok := rs.check(q, cd); ok {
				res.Hits = append(res.Hits, h)
			}
			if len(res.Hits) == limit || c.opt.PageTime > 0 && time.Now().After(deadline) {
				if len(res.Hits) < limit || k < len(cands)-1 || len(cands) == batch {
					next := "i:" + strconv.FormatInt(below, 10)
					res.Next = &next
				}
				res.Partial = rs.partial
				return res, nil
			}
		}
		if len(cands) < batch {
			res.Partial = rs.partial
			return res, nil
		}
		checked += len(cands)
		grow := 4 * batch
		if n := len(res.Hits); n > 0 {
			grow = (limit - n) * checked / n * 5 / 4
		}
		batch = min(max(grow, batch), 1024)
	}
}

// searchCounts are what searches did (for tests and benchmarks): the
// candidates the store gave, the lines read for them, their bytes, and
// the lines decoded (not turned away by their raw bytes).
type searchCounts struct{ candidates, lines, bytes, decoded atomic.Int64 }

// ascii keeps the strings the store can compare case-insensitively.
func ascii(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf }) {
			out = append(out, s)
		}
	}
	return out
}

// searchRun is the state of one search: each session's facts and open file,
// looked up once however many of its entries are candidates.
type searchRun struct {
	c       *Catalog
	ctx     context.Context
	sess    map[string]*sessInfo
	files   map[string]*os.File
	rc      *rawCheck // what candidates' lines must hold
	partial bool      // a candidate did not hold: the store is behind a file
	buf     []byte    // the last line read
}

// sessInfo is what every hit of one session shares.
type sessInfo struct {
	meta  sessions.Meta
	title string
}

func (c *Catalog) newRun(ctx context.Context) *searchRun {
	return &searchRun{c: c, ctx: ctx, sess: map[string]*sessInfo{}, files: map[string]*os.File{}}
}

func (rs *searchRun) close() {
	for _, f := range rs.files {
		if f != nil {
			f.Close()
		}
	}
}

// session returns the facts of path's session, nil when it is gone.
func (rs *searchRun) session(path string) *sessInfo {
	if si, ok := rs.sess[path]; ok {
		return si
	}
	var si *sessInfo
	if m, ok := rs.c.lib.MetaOf(path); ok {
		si = &sessInfo{meta: m, title: oneLine(cmp.Or(m.Name, m.FirstMessage), 120)}
	}
	rs.sess[path] = si
	return si
}

// line reads the line of a candidate's entry, checking it still is that
// entry's; nil when it is not (the file changed since it was indexed). A
// line rc says cannot match is not decoded: nil, and not gone.
func (rs *searchRun) line(cd *store.Candidate, version int, rc *rawCheck) (e *sessions.Entry, line []byte, gone bool) {
	if version < 2 {
		// Version 1 ids are piweb's, from the file's order: the tree tells.
		s, err := rs.c.lib.SessionOf(cd.Path)
		if err != nil || cd.Pos >= len(s.Entries) || s.Entries[cd.Pos].ID != cd.EntryID {
			return nil, nil, true
		}
		e := s.Entries[cd.Pos]
		if line, err = s.Raw(cd.Pos); err != nil {
			return nil, nil, true
		}
		if !rc.may(line) {
			return nil, nil, false
		}
		return &e, line, false
	}
	f, seen := rs.files[cd.Path]
	if !seen {
		var err error
		if f, err = rs.c.lib.OpenRead(cd.Path); err != nil {
			f = nil
		}
		rs.files[cd.Path] = f
	}
	if f == nil {
		return nil, nil, true
	}
	// The raw bytes, in a buffer the run reuses: most lines are turned
	// away by them (rawCheck reads only ASCII, which making the line valid
	// UTF-8 leaves as it is), and only those decoded are kept.
	raw, err := sessions.ReadRawLine(f, &sessions.Entry{Off: cd.Off, Len: cd.Len}, rs.buf)
	if err != nil {
		return nil, nil, true
	}
	rs.buf = raw[:0]
	rs.c.counts.lines.Add(1)
	rs.c.counts.bytes.Add(int64(len(raw)))
	if !rc.may(raw) && bytes.Contains(raw, []byte(cd.EntryID)) { // (a line without the id is decoded: is it still the entry's?)
		return nil, nil, false
	}
	line = js.ToValidUTF8(bytes.Clone(raw))
	rs.c.counts.decoded.Add(1)
	le, ok := sessions.LineEntry(line, version)
	if !ok || le.ID != cd.EntryID {
		return nil, nil, true
	}
	le.Off = cd.Off
	return &le, line, false
}

// check returns the hit a candidate makes: its entry still there, its
// text matching q, its place and label passing q's filters; a candidate
// copied into forks makes one hit, at the newest of its copies.
func (rs *searchRun) check(q *search.Query, cd *store.Candidate) (Hit, bool) {
	si := rs.session(cd.Path)
	if si == nil || !q.AllowProject(si.meta.Project) {
		return Hit{}, false
	}
	e, line, gone := rs.line(cd, si.meta.Version, rs.rc)
	if gone {
		rs.stale(cd.Path)
	}
	if e == nil {
		return Hit{}, false
	}
	p, ok := pieceText(e, line, cd.Part)
	if !ok {
		rs.stale(cd.Path)
		return Hit{}, false
	}
	snippet, ranges, ok, _ := q.Excerpt(p.text, 120)
	if !ok {
		return Hit{}, false
	}
	// The group is the hit of its newest copy (asked for here, of the
	// few candidates whose text matched, not of every one).
	copies, err := rs.c.st.Copies(rs.ctx, cd.EntryID, cd.Part, cd.Time)
	if err != nil {
		copies = nil
	}
	if newest := len(copies) - 1; newest > 0 && copies[newest].ID != cd.ID {
		if nsi := rs.session(copies[newest].Path); nsi != nil && q.AllowProject(nsi.meta.Project) {
			return Hit{}, false
		}
	}
	// The hit is the original's (the copy no other copy was forked from),
	// and names the others.
	orig, osi := cd, si
	paths := map[string]bool{}
	for _, o := range copies {
		paths[o.Path] = true
	}
	for k := range copies {
		if s := rs.session(copies[k].Path); s != nil && !paths[s.meta.ParentSession] {
			orig, osi = &copies[k], s
			break
		}
	}
	place, label := rs.facts(orig.FileID, orig.Path, orig.Pos, orig.EntryID)
	h := rs.hit(osi, cd.EntryID, p.typ, p.role, snippet, ranges, cd.Time, place, label)
	for k := range copies {
		o := &copies[k]
		if s := rs.session(o.Path); s != nil && s.meta.Key != h.Key {
			oplace, _ := rs.facts(o.FileID, o.Path, o.Pos, o.EntryID)
			h.Copies = append(h.Copies, Copy{Key: s.meta.Key, SessionID: s.meta.ID, Session: s.title, Place: oplace})
		}
	}
	return h, keep(q, place, label)
}

// stale notes that the store's texts of path are behind the file: the
// file is saved again, and this search is partial.
func (rs *searchRun) stale(path string) {
	rs.partial = true
	rs.c.saveAgain(path)
}

// saveAgain has the store's record of path made again from the file, read
// from the start (the store is behind it, or its rows are damaged).
func (c *Catalog) saveAgain(path string) {
	if c.st != nil {
		c.setState(path, nil)
		c.enqueue(path, true)
	}
}

// treeLabels returns the labels in force in s, the session at path.
func treeLabels(path string, s *sessions.Session) []store.FileLabel {
	var out []store.FileLabel
	for _, l := range labelsOf(s) {
		out = append(out, store.FileLabel{Path: path, Label: l})
	}
	return out
}

// hit makes a Hit of an entry of si's session.
func (rs *searchRun) hit(si *sessInfo, entryID, typ, role, snippet string, ranges []search.Range, ms int64, place, label string) Hit {
	h := Hit{Key: si.meta.Key, SessionID: si.meta.ID, EntryID: entryID, Type: typ, Role: role, Place: place,
		OnPath: place != PlaceOffPath, Snippet: snippet, Ranges: ranges, Project: si.meta.Project, Cwd: si.meta.Cwd,
		Session: si.title, Label: label}
	if ranges == nil {
		h.Ranges = []search.Range{}
	}
	if ms != 0 {
		t := time.UnixMilli(ms).UTC()
		h.Timestamp = &t
	}
	return h
}

// facts returns where entry pos of a file lies and its label, as the
// store holds them; from the file's tree when the store cannot say (id 0:
// no row, a label read from the tree; or its row is damaged: the file is
// saved again, which mends the row, and the search is partial).
func (rs *searchRun) facts(id int64, path string, pos int, entryID string) (place, label string) {
	var f store.Facts
	var err error
	if id != 0 {
		if f, err = rs.c.facts.get(rs.ctx, rs.c.st, id, path); f.Damaged {
			rs.stale(path)
		}
	}
	if id == 0 || err != nil || f.Damaged {
		if s, err := rs.c.lib.SessionOf(path); err == nil && pos < len(s.Entries) {
			return placeName(s.Places()[pos]), s.LabelOf(pos)
		}
	}
	return placeName(placeAt(f.Places, pos)), f.Labels[entryID]
}

// keep applies the filters only the session knows: is:, label:.
func keep(q *search.Query, place, label string) bool {
	switch q.Path {
	case search.OffPath:
		if place != PlaceOffPath {
			return false
		}
	case search.OnPath:
		if place == PlaceOffPath {
			return false
		}
	}
	return q.AllowLabel(label)
}

// placeName is the name of a place (see sessions.Session.Places).
func placeName(p uint8) string {
	switch p {
	case 1:
		return PlacePath
	case 2:
		return PlaceCompacted
	}
	return PlaceOffPath
}

// factCache keeps the store's facts of the files searches met, until the
// catalog saves those files again.
type factCache struct {
	mu  sync.Mutex
	m   map[int64]*cachedFacts
	gen uint64 // counts forgets: facts read before the last one are not kept
}

type cachedFacts struct {
	path string
	f    store.Facts
}

func (fc *factCache) get(ctx context.Context, st Store, id int64, path string) (store.Facts, error) {
	fc.mu.Lock()
	if cf, ok := fc.m[id]; ok {
		fc.mu.Unlock()
		return cf.f, nil
	}
	gen := fc.gen
	fc.mu.Unlock()
	f, err := st.Facts(ctx, id)
	if err != nil || f.Damaged {
		return f, err
	}
	fc.mu.Lock()
	if fc.gen != gen { // a save landed meanwhile: f may be older than it
		fc.mu.Unlock()
		return f, nil
	}
	if fc.m == nil || len(fc.m) > 1024 {
		fc.m = map[int64]*cachedFacts{}
	}
	fc.m[id] = &cachedFacts{path: path, f: f}
	fc.mu.Unlock()
	return f, nil
}

// forget drops the facts of paths.
func (fc *factCache) forget(paths ...string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.gen++
	if len(fc.m) == 0 {
		return
	}
	drop := make(map[string]bool, len(paths))
	for _, p := range paths {
		drop[p] = true
	}
	for id, cf := range fc.m {
		if drop[cf.path] {
			delete(fc.m, id)
		}
	}
}

func (fc *factCache) clear() {
	fc.mu.Lock()
	fc.m = nil
	fc.gen++
	fc.mu.Unlock()
}

// scanBudget bounds one page of a search without a store (unless
// Options.PageTime is negative).
const (
	scanBudget = 2 * time.Second
	scanBytes  = 256 << 20
)

// scan searches without the store: sessions most recent first, each
// session's entries newest first, until the page is full, or its time or
// bytes run out (then Next goes on with the next session).
func (c *Catalog) scan(ctx context.Context, q *search.Query, limit int, cursor string) (Result, error) {
	start, skip := 0, 0
	if cursor != "" {
		if _, err := fmt.Sscanf(cursor, "scan:%d:%d", &start, &skip); err != nil || start < 0 || skip < 0 {
			return Result{}, ErrCursor
		}
	}
	metas := c.lib.List()
	res := Result{Scanned: true, Hits: []Hit{}, Partial: c.Indexing()}
	deadline := time.Now().Add(scanBudget)
	var read int64
	next := func(k, skip int) {
		n := fmt.Sprintf("scan:%d:%d", k, skip)
		res.Next = &n
	}
	rs := c.newRun(ctx)
	defer rs.close()
	for k := start; k < len(metas); k++ {
		if len(res.Hits) >= limit || c.opt.PageTime > 0 && time.Now().After(deadline) || read > scanBytes {
			next(k, 0)
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
		s, err := c.lib.Session(m.Key)
		if err != nil {
			continue
		}
		si := &sessInfo{meta: *m, title: oneLine(cmp.Or(m.Name, m.FirstMessage), 120)}
		var places []uint8
		var found []Hit
		sessions.ReadLines(s, 0, func(pos int, e *sessions.Entry, line []byte) error {
			if !q.AllowTime(entryTime(e)) {
				return nil
			}
			for _, p := range pieces(e, line) {
				if !q.AllowRole(p.role) {
					continue
				}
				snippet, ranges, ok, _ := q.Excerpt(p.text, 120)
				if !ok {
					continue
				}
				if places == nil {
					places = s.Places()
				}
				place, label := placeName(places[pos]), s.LabelOf(pos)
				if !keep(q, place, label) {
					return nil
				}
				found = append(found, rs.hit(si, e.ID, p.typ, p.role, snippet, ranges, entryTime(e), place, label))
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
// are few, so each is read and matched, newest label first.
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
	labels, scanned, damaged, err := c.labels(ctx, ascii(q.Labels), 100000)
	if err != nil {
		return Result{}, err
	}
	rs := c.newRun(ctx)
	defer rs.close()
	res := Result{Hits: []Hit{}, Scanned: scanned, Partial: damaged || c.searching()}
	for k := skip; k < len(labels); k++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if len(res.Hits) >= limit {
			n := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "label:%d", k))
			res.Next = &n
			break
		}
		l := &labels[k]
		si := rs.session(l.Path)
		if si == nil || !q.AllowLabel(l.Text) || !q.AllowProject(si.meta.Project) {
			continue
		}
		cd := &store.Candidate{Doc: store.Doc{FileID: l.FileID, Off: l.Off, Len: l.Len, Pos: l.Pos, EntryID: l.EntryID}, Path: l.Path}
		e, line, _ := rs.line(cd, si.meta.Version, nil)
		if e == nil || !q.AllowTime(entryTime(e)) {
			continue
		}
		place, _ := rs.facts(l.FileID, l.Path, l.Pos, l.EntryID)
		if !keep(q, place, l.Text) {
			continue
		}
		for _, p := range pieces(e, line) {
			if !q.AllowRole(p.role) {
				continue
			}
			if snippet, ranges, ok, _ := q.Excerpt(p.text, 120); ok {
				res.Hits = append(res.Hits, rs.hit(si, l.EntryID, p.typ, p.role, snippet, ranges, entryTime(e), place, l.Text))
				break // one hit per labeled entry
			}
		}
	}
	return res, nil
}

// Labels returns the labels in force whose text holds every one of words
// (lower-cased), newest first, at most limit: from the store, or without
// one by reading every session.
func (c *Catalog) Labels(ctx context.Context, words []string, limit int) ([]store.FileLabel, error) {
	ls, _, _, err := c.labels(ctx, words, limit)
	return ls, err
}

// labels is Labels, whether the sessions were read for it, and whether
// the store had damaged label rows (read from the files instead).
func (c *Catalog) labels(ctx context.Context, words []string, limit int) (ls []store.FileLabel, scanned, damaged bool, err error) {
	byTime := func(a, b store.FileLabel) int { return cmp.Compare(b.Time, a.Time) }
	if c.st != nil {
		ls, bad, err := c.st.Labels(ctx, "")
		if err == nil {
			// A file whose label rows are damaged: its labels from its tree,
			// and the file saved again, which mends the rows.
			for _, p := range bad {
				c.saveAgain(p)
				if s, err := c.lib.SessionOf(p); err == nil {
					ls = append(ls, treeLabels(p, s)...)
				}
			}
			slices.SortStableFunc(ls, byTime)
			return filterLabels(ls, words, limit), false, len(bad) > 0, nil
		}
		if !errors.Is(err, store.ErrUnavailable) && !errors.Is(err, store.ErrCorrupt) && !errors.Is(err, store.ErrClosed) {
			return nil, false, false, err
		}
	}
	var out []store.FileLabel
	for _, m := range c.lib.List() {
		if err := ctx.Err(); err != nil {
			return nil, true, false, err
		}
		s, err := c.lib.Session(m.Key)
		if err != nil {
			continue
		}
		out = append(out, treeLabels(m.File, s)...)
	}
	slices.SortFunc(out, byTime)
	return filterLabels(out, words, limit), true, false, nil
}

// filterLabels keeps the labels holding every word (case ignored), at most limit.
func filterLabels(ls []store.FileLabel, words []string, limit int) []store.FileLabel {
	out := ls[:0]
	for _, l := range ls {
		low := strings.ToLower(l.Text)
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(low, strings.ToLower(w)) }) {
			out = append(out, l)
		}
	}
	return out[:min(len(out), limit)]
}

// oneLine flattens s to one line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
