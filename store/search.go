package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/piweb/piweb/search"
)

// Hit is one document that matches a query.
type Hit struct {
	File     string
	EntryID  string
	Position int
	Part     int
	Type     string
	Role     string
	Project  string
	Time     int64   // Unix milliseconds
	Score    float64 // relevance, higher is better (0 when the search had to scan)
	Snippet  string
	Ranges   []search.Range // in Snippet
}

// SearchOptions tunes a search. Text is required.
type SearchOptions struct {
	Limit  int    // hits per page: default 20, at most 500
	Cursor string // from the previous page's Next; "" for the first page

	// Text returns the text of the hit's document, as it was given to
	// AddDocs: the store keeps no text. An error skips the document.
	Text func(h *Hit) (string, error)
	// Keep, if set, is asked about each candidate before its text is read:
	// the filters only the caller can judge (is:offpath, label:) go here.
	Keep func(h *Hit) bool

	// MaxExamined bounds the documents one call reads the text of
	// (default 20,000), and Budget (if set) the time it spends: a query
	// that must read many texts (re: alone, a rare phrase of common words)
	// then returns what it found so far, possibly nothing, with a Next to
	// go on. A page with a Next and fewer than Limit hits is such a page.
	MaxExamined  int
	Budget       time.Duration
	SnippetWidth int // bytes of snippet around the first match: default 160
}

// Page is one page of hits.
type Page struct {
	Hits     []Hit
	Next     string // "" when there is nothing more
	Examined int    // documents whose text was read
	Scanned  bool   // the query could not use the index: hits are newest first, not ranked
}

// ErrCursor is returned for a cursor that is damaged or belongs to another query.
var ErrCursor = errors.New("the search cursor is not valid for this query: start again from the first page")

// window is how many of the newest candidates one ranking covers: Search
// ranks the newest window of matches, then the next older window, so that
// a query matching half the corpus stays fast.
var window = 8192 // a variable for tests

// cursor is where a search goes on.
type cursor struct {
	top int64 // exclusive upper bound of document ids still to look at
	off int   // ranked candidates of the window below top already done
}

func (c cursor) encode(qh uint32) string {
	b := binary.AppendUvarint([]byte{1}, uint64(qh))
	b = binary.AppendUvarint(b, uint64(c.top))
	b = binary.AppendUvarint(b, uint64(c.off))
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, qh uint32) (cursor, error) {
	if s == "" {
		return cursor{top: math.MaxInt64}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 4 || b[0] != 1 {
		return cursor{}, ErrCursor
	}
	b = b[1:]
	var v [3]uint64
	for i := range v {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return cursor{}, ErrCursor
		}
		v[i], b = x, b[n:]
	}
	if len(b) != 0 || uint32(v[0]) != qh || v[1] > math.MaxInt64 || v[2] > uint64(window) {
		return cursor{}, ErrCursor
	}
	return cursor{top: int64(v[1]), off: int(v[2])}, nil
}

func queryHash(q *search.Query) uint32 {
	h := fnv.New32a()
	h.Write([]byte(q.Raw))
	return h.Sum32()
}

// score is a document's relevance from its length level: bm25 for a
// document holding each query word once (the index keeps no counts) and
// as many distinct words as its level stands for. For an all-words query
// the words' weights are the same for every candidate, so only the length
// tells candidates apart.
func score(level int64) float64 {
	const k1, b, avg = 1.2, 0.75, 64.0
	dl := math.Exp2(float64(level) / 2)
	return (k1 + 1) / (1 + k1*(1-b+b*dl/avg))
}

// Search returns a page of the documents that match q, best first (see
// the package doc for the ranking). Each hit passed q's role:, project:,
// after: and before: filters, o.Keep, and q.Excerpt on its real text,
// which gives its snippet. Next pages follow with o.Cursor = Page.Next;
// documents added meanwhile do not move the pages already seen.
func (s *Store) Search(ctx context.Context, q *search.Query, o SearchOptions) (Page, error) {
	if o.Text == nil {
		return Page{}, errors.New("store.Search: SearchOptions.Text is required")
	}
	if o.Limit <= 0 {
		o.Limit = 20
	}
	o.Limit = min(o.Limit, 500)
	if o.MaxExamined <= 0 {
		o.MaxExamined = 20000
	}
	qh := queryHash(q)
	cur, err := decodeCursor(o.Cursor, qh)
	if err != nil {
		return Page{}, err
	}
	db, release, err := s.acquire()
	if err != nil {
		return Page{}, err
	}
	defer release()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Page{}, wrap(err)
	}
	defer tx.Rollback()
	// Names afresh: another process may have added projects.
	names, err := readNames(tx)
	if err != nil {
		return Page{}, wrap(err)
	}
	tlo, thi := int64(math.MinInt64), int64(math.MaxInt64)
	if !q.After.IsZero() {
		tlo = q.After.UnixMilli()
	}
	if !q.Before.IsZero() {
		thi = q.Before.UnixMilli()
	}
	groups, none := filterWords(q, names)
	if none {
		return Page{}, nil // no role or project the filters allow
	}
	segs, err := segments(tx)
	if err != nil {
		return Page{}, wrap(err)
	}
	ids, indexed, err := candidates(tx, segs, q, groups)
	if err != nil {
		return Page{}, wrap(err)
	}
	r := &run{s: s, tx: tx, q: q, o: o, names: names, qh: qh, segs: segs}
	if o.Budget > 0 {
		r.deadline = time.Now().Add(o.Budget)
	}
	if !indexed {
		err = r.scan(ctx, cur.top, tlo, thi)
	} else {
		err = r.ranked(ctx, ids, cur.top, cur.off)
	}
	if err != nil {
		return Page{}, wrap(err)
	}
	return r.page, nil
}

// wordGroup is a set of filter words: a document must hold one of them
// (or, with exclude, none of them).
type wordGroup struct {
	words   []string
	exclude bool
}

// filterWords returns the word groups of q's role:, project: and after:
// filters; none reports a filter that no document can pass. A filter with
// only negations (-project:x) excludes the few words it names rather than
// admitting the many others.
func filterWords(q *search.Query, names map[int64]nameInfo) (groups []wordGroup, none bool) {
	pick := func(kind int, allow func(string) bool, word func(string) string, onlyNot bool) bool {
		var in, out []string
		for _, n := range names {
			if n.kinds&kind == 0 {
				continue
			}
			if allow(n.name) {
				in = append(in, word(n.name))
			} else {
				out = append(out, word(n.name))
			}
		}
		if len(in) == 0 {
			return false
		}
		if onlyNot {
			if len(out) > 0 {
				slices.Sort(out)
				groups = append(groups, wordGroup{words: out, exclude: true})
			}
			return true
		}
		slices.Sort(in)
		groups = append(groups, wordGroup{words: in})
		return true
	}
	if len(q.Roles)+len(q.NotRoles) > 0 && !pick(kindRole, q.AllowRole, roleWord, len(q.Roles) == 0) ||
		len(q.Projects)+len(q.NotProjects) > 0 && !pick(kindProject, q.AllowProject, projectWord, len(q.Projects) == 0) {
		return nil, true
	}
	if ms := months(q); len(ms) > 0 {
		groups = append(groups, wordGroup{words: ms})
	}
	return groups, false
}

// maxMonths is the longest after:/before: range narrowed by month words.
const maxMonths = 36

// months returns the month words that cover after: to before:, or nil
// when there is no start or the range is too long to be worth it.
func months(q *search.Query) []string {
	if q.After.IsZero() {
		return nil // an open start: every month before would be listed
	}
	from, to := q.After.UTC(), q.Before.UTC()
	if q.Before.IsZero() {
		to = time.Now().UTC().AddDate(1, 0, 0) // documents dated ahead, within reason
	}
	var out []string
	for m := time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC); !m.After(to); m = m.AddDate(0, 1, 0) {
		if len(out) == maxMonths {
			return nil
		}
		out = append(out, monthWord(m.Year()*100+int(m.Month())))
	}
	return out
}

// maxGroupWords is the most words of a filter group candidates unites
// once the query's own words have narrowed the candidates.
const maxGroupWords = 4

// candidates returns the ids of the documents the word index finds for q,
// ascending; ok is false when the index cannot narrow them (scan instead).
func candidates(tx *sql.Tx, segs []int64, q *search.Query, groups []wordGroup) (ids []int64, ok bool, err error) {
	and := func(list []int64) {
		if !ok {
			ids, ok = list, true
		} else {
			ids = intersect(ids, list)
		}
	}
	all, not := q.IndexTerms()
	for _, t := range all {
		list, err := lookup(tx, segs, t.Text, t.Prefix)
		if errors.Is(err, errTooBroad) {
			continue // Match decides
		}
		if err != nil {
			return nil, false, err
		}
		if and(list); len(ids) == 0 {
			return nil, true, nil
		}
	}
	groupIDs := func(g wordGroup) ([]int64, error) {
		var lists [][]int64
		for _, w := range g.words {
			list, err := lookup(tx, segs, w, false)
			if err != nil {
				return nil, err
			}
			lists = append(lists, list)
		}
		return union(lists), nil
	}
	for _, g := range groups {
		if g.exclude || ok && len(g.words) > maxGroupWords {
			// A group of many words (a project: or after: that admits most
			// projects or months) costs more to unite than it narrows:
			// check applies the filter to each candidate anyway.
			continue
		}
		list, err := groupIDs(g)
		if err != nil {
			return nil, false, err
		}
		if and(list); len(ids) == 0 {
			return nil, true, nil
		}
	}
	if !ok {
		return nil, false, nil
	}
	for _, g := range groups {
		if !g.exclude {
			continue
		}
		list, err := groupIDs(g)
		if err != nil {
			return nil, false, err
		}
		ids = subtract(ids, list)
	}
	for _, t := range not {
		list, err := lookup(tx, segs, t.Text, t.Prefix)
		if errors.Is(err, errTooBroad) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		ids = subtract(ids, list)
	}
	return ids, true, nil
}

// run is one Search call.
type run struct {
	s     *Store
	tx    *sql.Tx
	q     *search.Query
	o     SearchOptions
	names map[int64]nameInfo
	segs  []int64
	qh    uint32
	page  Page

	deadline time.Time
}

// full reports whether the page must end here: it holds Limit hits, or
// its reading budget is spent.
func (r *run) full() bool {
	return len(r.page.Hits) == r.o.Limit || r.page.Examined >= r.o.MaxExamined ||
		!r.deadline.IsZero() && r.page.Examined > 0 && time.Now().After(r.deadline)
}

// rankChunk is how many ranked candidates one query of their rows covers.
const rankChunk = 64

// candidate is a document id and its length level.
type candidate struct {
	id    int64
	level uint8
}

// ranked pages through the candidates below top, window by window: each
// window is ranked with the levels the segments keep, then its documents'
// rows are read a chunk at a time, so a page reads about as many rows as
// it shows.
func (r *run) ranked(ctx context.Context, ids []int64, top int64, off int) error {
	lvs, err := r.s.levelsOf(r.tx, r.segs)
	if err != nil {
		return err
	}
	// The row holding each id: one ending at most runDocs-1 ids after it.
	st, err := r.tx.PrepareContext(ctx, `SELECT j.value, r.hi, r.lo, r.fid, r.data FROM json_each(?) j CROSS JOIN docruns r
		WHERE r.hi >= j.value AND r.hi < j.value + ? AND r.lo <= j.value`)
	if err != nil {
		return err
	}
	defer st.Close()
	metas := make(map[int64]docMeta, rankChunk)
	var list []byte
	for {
		end, _ := slices.BinarySearch(ids, top)
		ids = ids[:end]
		if len(ids) == 0 {
			return nil
		}
		win := ids[max(0, len(ids)-window):]
		cands := make([]candidate, len(win))
		for i, id := range win {
			cands[i] = candidate{id: id, level: 1<<lenBits - 1}
			for _, l := range lvs {
				if lv, ok := l.level(id); ok {
					cands[i].level = lv
					break
				}
			}
		}
		// Shorter first (a lower level), then newer (a higher id).
		slices.SortFunc(cands, func(a, b candidate) int {
			if a.level != b.level {
				return int(a.level) - int(b.level)
			}
			return cmp.Compare(b.id, a.id)
		})
		for i := off; i < len(cands); i += rankChunk {
			chunk := cands[i:min(len(cands), i+rankChunk)]
			list = append(list[:0], '[')
			for k, c := range chunk {
				if k > 0 {
					list = append(list, ',')
				}
				list = strconv.AppendInt(list, c.id, 10)
			}
			list = append(list, ']')
			rows, err := st.QueryContext(ctx, string(list), runDocs)
			if err != nil {
				return err
			}
			clear(metas)
			for rows.Next() {
				var id, lo, hi, fid int64
				var data sql.RawBytes // decoded before the next row
				if err := rows.Scan(&id, &hi, &lo, &fid, &data); err != nil {
					rows.Close()
					return err
				}
				rd := newRunReader(lo, hi, fid, data)
				m, err := rd.find(id)
				if err != nil {
					rows.Close()
					return err
				}
				metas[id] = m
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for k, c := range chunk {
				if r.full() {
					r.page.Next = cursor{top: top, off: i + k}.encode(r.qh)
					return nil
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if m, ok := metas[c.id]; ok { // else deleted since it was indexed
					if err := r.check(&m, score(int64(c.level))); err != nil {
						return err
					}
				}
			}
		}
		top, off = win[0], 0
		if end, _ := slices.BinarySearch(ids, top); end == 0 {
			return nil
		}
		if r.full() {
			r.page.Next = cursor{top: top}.encode(r.qh)
			return nil
		}
	}
}

// levelsOf returns the levels of segments segs, from the cache or tx.
func (s *Store) levelsOf(tx *sql.Tx, segs []int64) ([]*segLevels, error) {
	out := make([]*segLevels, len(segs))
	s.lmu.Lock()
	if s.levels == nil || len(s.levels) > 2*len(segs)+16 {
		// Merged segments are gone for good: keep only the current ones.
		old := s.levels
		s.levels = map[int64]*segLevels{}
		for _, id := range segs {
			if l, ok := old[id]; ok {
				s.levels[id] = l
			}
		}
	}
	for i, id := range segs {
		out[i] = s.levels[id]
	}
	s.lmu.Unlock()
	for i, id := range segs {
		if out[i] != nil {
			continue
		}
		var b []byte
		if err := tx.QueryRow(`SELECT levels FROM segs WHERE id=?`, id).Scan(&b); err != nil {
			return nil, err
		}
		l, err := decodeLevels(b)
		if err != nil {
			return nil, err
		}
		out[i] = l
		s.lmu.Lock()
		s.levels[id] = l
		s.lmu.Unlock()
	}
	return out, nil
}

// scanRuns is how many rows of documents a scan reads at a time.
const scanRuns = 4

// scan walks documents newest first below hi, reading at most
// 50 × MaxExamined of them (filters that pass few documents stop there too).
func (r *run) scan(ctx context.Context, hi, tlo, thi int64) error {
	r.page.Scanned = true
	// The rows holding ids below hi: those ending below it, and the one
	// holding hi-1 (the first ending at or above hi, if it starts below).
	st, err := r.tx.PrepareContext(ctx, `SELECT hi, lo, fid, data FROM docruns
		WHERE hi <= coalesce((SELECT min(hi) FROM docruns WHERE hi >= ?1), ?1) AND lo < ?1 AND thi >= ?2 AND tlo < ?3
		ORDER BY hi DESC LIMIT ?4`)
	if err != nil {
		return err
	}
	defer st.Close()
	visited := 0
	var ms []docMeta
	for {
		rows, err := st.QueryContext(ctx, hi, tlo, thi, scanRuns)
		if err != nil {
			return err
		}
		ms = ms[:0]
		n, low := 0, int64(0)
		for rows.Next() {
			var rlo, rhi, fid int64
			var data sql.RawBytes // decoded before the next row
			if err := rows.Scan(&rhi, &rlo, &fid, &data); err != nil {
				rows.Close()
				return err
			}
			n, low = n+1, rlo
			start := len(ms)
			rd := newRunReader(rlo, rhi, fid, data)
			for rd.next() {
				if rd.m.id < hi && rd.m.time >= tlo && rd.m.time < thi {
					ms = append(ms, rd.meta())
				}
			}
			if rd.err != nil {
				rows.Close()
				return rd.err
			}
			slices.Reverse(ms[start:])
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i := range ms {
			if r.full() || visited >= 50*r.o.MaxExamined {
				r.page.Next = cursor{top: hi}.encode(r.qh)
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			visited++
			if err := r.check(&ms[i], 0); err != nil {
				return err
			}
			hi = ms[i].id
		}
		if n < scanRuns {
			return nil
		}
		hi = low
	}
}

// check runs the filters, Keep and Match on a document and adds it as a hit.
func (r *run) check(m *docMeta, score float64) error {
	h := Hit{Time: m.time, Score: score, Position: m.pos, Part: m.part, EntryID: m.entry,
		Type: r.name(m.typ), Role: r.name(m.role), Project: r.name(m.proj)}
	if !r.q.AllowRole(h.Role) || !r.q.AllowProject(h.Project) || !r.q.AllowTime(h.Time) {
		return nil
	}
	var err error
	if h.File, err = r.s.pathOf(r.tx, m.fid); err != nil {
		return err
	}
	if r.o.Keep != nil && !r.o.Keep(&h) {
		return nil
	}
	r.page.Examined++
	text, err := r.o.Text(&h)
	if err != nil {
		return nil // the file changed or went away: no stale hit
	}
	snippet, ranges, ok, _ := r.q.Excerpt(text, r.o.SnippetWidth)
	if !ok {
		return nil
	}
	h.Snippet, h.Ranges = snippet, ranges
	r.page.Hits = append(r.page.Hits, h)
	return nil
}

func (r *run) name(id int64) string {
	if n, ok := r.names[id]; ok {
		return n.name
	}
	var n string
	if err := r.tx.QueryRow(`SELECT name FROM names WHERE id=?`, id).Scan(&n); err != nil {
		return fmt.Sprintf("?%d", id)
	}
	return n
}
