package store

import (
	"cmp"
	"context"
	"database/sql"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Query asks for candidate documents, newest (highest id) first.
type Query struct {
	// Needles are normalized literals (search.Query.Needles) every text
	// must hold; the engine's index narrows by those of three characters
	// or more (PostgreSQL: by their words of three or more, see
	// pgNeedles), the caller checks the rest on the real text.
	Needles []string
	Roles   []string // any of these roles (none: any)
	// NotRoles are roles to leave out.
	NotRoles []string
	// After and Before bound the entry's time, Unix ms (0: unbounded).
	After, Before int64
	// Below gives only documents numbered below it (a cursor; 0: from the newest).
	Below int64
	// Projects are substrings of the file's project folder name, lower
	// case, any of which must occur (none: any project); NotProjects none
	// of which may. ASCII ones only: others are the caller's to check.
	Projects, NotProjects []string
	// OffPath gives only documents of entries off their file's active
	// path (Save.Places), OnPath only those on it: as the store last
	// saw the file (the caller checks the tree it holds).
	OffPath, OnPath bool
	// Machine is whose files (see File.Machine); Any for every machine's.
	Machine string
	Any     bool
	// Limit is how many candidates one batch holds.
	Limit int
}

// Candidate is a document Search found, with its file.
type Candidate struct {
	Doc
	Path    string
	Machine string
}

// Search returns a batch of candidates for q, newest first: every
// document whose text holds all of q's needles the engine's full-text
// index narrows by (see Query.Needles) and passes its filters. The other
// needles, negations and regular expressions are the caller's to check
// on the real text.
func (s *DB) Search(ctx context.Context, q Query) ([]Candidate, error) {
	// The filters on files first: a project's searches also use them
	// alone (see windows).
	where, args := []string{}, []any{}
	if !q.Any {
		where = append(where, "f.machine = ?")
		args = append(args, q.Machine)
	}
	if len(q.Projects) > 0 {
		var or []string
		for _, p := range q.Projects {
			or = append(or, "lower(f.project) LIKE ? ESCAPE '\\'")
			args = append(args, "%"+likeEscape(p)+"%")
		}
		where = append(where, "("+strings.Join(or, " OR ")+")")
	}
	for _, p := range q.NotProjects {
		where = append(where, "lower(f.project) NOT LIKE ? ESCAPE '\\'")
		args = append(args, "%"+likeEscape(p)+"%")
	}
	var files *fileFilter
	if len(q.Projects) > 0 {
		files = &fileFilter{strings.Join(where, " AND "), slices.Clone(args)}
	}
	if len(q.Roles) > 0 {
		where = append(where, "d.role IN ("+Marks(len(q.Roles))+")")
		for _, r := range q.Roles {
			args = append(args, r)
		}
	}
	if len(q.NotRoles) > 0 {
		where = append(where, "d.role NOT IN ("+Marks(len(q.NotRoles))+")")
		for _, r := range q.NotRoles {
			args = append(args, r)
		}
	}
	if q.OffPath {
		where = append(where, "d.offpath = 1")
	} else if q.OnPath {
		where = append(where, "d.offpath = 0")
	}
	if q.After != 0 {
		where = append(where, "d.ts >= ?")
		args = append(args, q.After)
	}
	if q.Before != 0 {
		where = append(where, "d.ts < ?")
		args = append(args, q.Before)
	}
	needles := indexable(q.Needles)
	if s.engine == Postgres {
		needles = pgNeedles(q.Needles)
	}
	// query is the search for ids in w: where the needles are, by the
	// engine's index, or (PostgreSQL, w.scan) by reading each text of w.
	query := func(w window, limit int) (string, []any) {
		from, key := "docs d JOIN files f ON f.id = d.file_id", "d.id"
		cond, a := []string{}, []any{}
		switch {
		case len(needles) == 0:
		case s.engine == SQLite:
			from, key = "doc_text t JOIN docs d ON d.id = t.rowid JOIN files f ON f.id = d.file_id", "t.rowid" // FTS5 walks its rowids newest first
			cond, a = append(cond, "doc_text MATCH ?"), append(a, ftsMatch(needles))
		case w.scan:
			// The documents newest first, until the batch is full, each
			// run's words read through its key (OFFSET 0 keeps the planner
			// from making the EXISTS a join, which would sort every
			// document of the window first).
			held, ha := pgConds("t.", needles, false)
			cond, a = append(cond, "EXISTS (SELECT 1 FROM texts t WHERE t.hi = d.id + d.run AND "+strings.Join(held, " AND ")+" OFFSET 0)"), ha
		default:
			// Every run the trigram index gives, then its docs by their
			// key's range (OFFSET 0: not a join the planner would guess
			// at), sorted.
			from = "texts t CROSS JOIN LATERAL (SELECT * FROM docs d WHERE d.id BETWEEN t.lo AND t.hi AND d.id + d.run = t.hi OFFSET 0) d" +
				" JOIN files f ON f.id = d.file_id"
			cond, a = pgConds("t.", needles, true)
			cond, a = textBounds("t.", w, cond, a)
		}
		bound := []string{key}
		if w.scan && key != "d.id" {
			bound = append(bound, "d.id") // either side of the join may lead
		}
		for _, k := range bound {
			cond, a = append(cond, k+" < ?"), append(a, w.hi)
			if w.lo > 0 {
				cond, a = append(cond, k+" >= ?"), append(a, w.lo)
			}
		}
		return `SELECT ` + candidateColumns + ` FROM ` + from + ` WHERE ` + strings.Join(append(cond, where...), " AND ") + ` ORDER BY ` + key + ` DESC LIMIT ?`,
			append(append(a, args...), limit)
	}
	limit := max(q.Limit, 1)
	hi := q.Below
	if hi <= 0 {
		hi = math.MaxInt64
	}
	var out []Candidate
	err := s.Use(ctx, func(db *sql.DB) error {
		out = out[:0]
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		ws := windows{s: s, ctx: ctx, conn: conn, hi: hi, offPath: q.OffPath, files: files, needles: needles, filtered: len(where) > 0}
		for len(out) < limit {
			w, err := ws.next()
			if err != nil || w.hi <= w.lo {
				return err
			}
			qs, a := query(w, limit-len(out))
			if s.engine == Postgres {
				// Planned for these values, not once for any: a plan for any
				// needle reads every text of the range.
				a = append([]any{pgx.QueryExecModeExec}, a...)
			}
			n := len(out)
			if err := rowsOf(scanCandidate, func(c Candidate) { out = append(out, c) })(conn.QueryContext(ctx, s.Rebind(qs), a...)); err != nil {
				return err
			}
			ws.found = len(out) > n
		}
		return nil
	})
	return out, err
}

// window is a range of ids [lo, hi) to search; scan: by reading its
// texts rather than through the trigram index (PostgreSQL).
type window struct {
	lo, hi int64
	scan   bool
}

// Bounds of the windows (see windows).
const (
	scanFirst = 1024    // rows of PostgreSQL's first window
	fewOff    = 1 << 15 // off-path documents few enough to search by their runs
	probeRows = 4096    // texts holding the needles SQLite walks before it asks where off-path documents are
	offRun    = 256     // how far apart two off-path documents, or two files' ranges, may be numbered and still be searched in one window
)

// windows gives the ranges of ids to search below hi, newest first, until
// an empty one. A window of SQLite searches through its full-text index,
// which walks its ids newest first and stops when the batch is full:
//   - without needles, or with no filter but on the path: one window,
//     every id below hi;
//   - off-path, or in projects, with needles: the newest probeRows texts
//     that hold them (all of them when there are no more: the needles
//     are rare); then only the ranges of the projects' files' ids, or
//     runs of off-path documents' ids, so that a search among few such
//     documents does not walk every text holding common needles (FTS5
//     cannot seek to them one by one: a seek costs a window's setup).
//
// PostgreSQL's planner cannot tell how common a substring is: for a
// common one it would check every row the trigram index gives, then sort
// them. So the newest texts are read first, in windows of rows that
// double; once a window holds none of the needles (they are rare), the
// trigram index answers for the rest. Off-path searches among few
// off-path documents read only their runs; a project's searches read only
// its files' ranges, newest first.
type windows struct {
	s       *DB
	ctx     context.Context
	conn    *sql.Conn
	hi      int64
	offPath bool
	files   *fileFilter // the projects' files (whose ranges are searched)
	needles []string
	// filtered: the query has filters besides its needles; found: the
	// last window gave candidates.
	filtered, found bool

	started, index, done bool
	last                 window // the last window read
	size                 int64
	runs                 bool     // the rest is runs of off-path documents, or spans
	spans                []window // the projects' files' ranges not yet searched, newest first
	ids                  []int64  // off-path ids fetched, newest first, not yet searched
	more                 bool     // there may be more than ids
}

func (ws *windows) next() (window, error) {
	first := !ws.started
	ws.started = true
	switch {
	case ws.done:
		return window{}, nil
	case ws.runs && ws.files != nil:
		return ws.span()
	case ws.runs:
		return ws.run()
	case len(ws.needles) == 0 || ws.s.engine == SQLite && !ws.offPath && ws.files == nil:
		ws.done = true
		return window{hi: ws.hi}, nil
	case ws.s.engine == SQLite:
		// the probe, then runs
		var n, lo int64
		err := ws.conn.QueryRowContext(ws.ctx, `SELECT count(*), coalesce(min(rowid), 0) FROM (SELECT rowid FROM doc_text
			WHERE doc_text MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?)`, ftsMatch(ws.needles), ws.hi, probeRows).Scan(&n, &lo)
		if err != nil || n < probeRows {
			ws.done = true
			return window{hi: ws.hi}, err
		}
		w := window{lo: lo, hi: ws.hi}
		ws.hi, ws.runs, ws.more = lo, true, true
		if ws.files != nil {
			return w, ws.findSpans()
		}
		return w, nil
	case ws.files != nil: // PostgreSQL: only the projects' files' ranges, read
		ws.runs = true
		if err := ws.findSpans(); err != nil {
			return window{}, err
		}
		return ws.span()
	case first:
		var top int64
		if err := ws.conn.QueryRowContext(ws.ctx, `SELECT coalesce(max(id), 0) FROM docs`).Scan(&top); err != nil {
			return window{}, err
		}
		ws.hi, ws.size = min(ws.hi, top+1), scanFirst
	case ws.index:
		ws.done = true
		return window{}, nil
	}
	if ws.last.hi > 0 && !ws.found {
		if ws.offPath {
			var n int64
			if err := ws.conn.QueryRowContext(ws.ctx, `SELECT count(*) FROM (SELECT 1 FROM docs WHERE offpath = 1 AND id < $1 LIMIT $2) x`,
				ws.hi, fewOff).Scan(&n); err != nil {
				return window{}, err
			}
			if n < fewOff {
				ws.runs, ws.more = true, true
				return ws.run()
			}
		}
		rare := !ws.filtered
		if ws.filtered { // was it the filters? The texts of the window are at hand.
			held, err := ws.holds(ws.last)
			if err != nil {
				return window{}, err
			}
			rare = !held
		}
		if rare {
			ws.index = true
			return window{hi: ws.hi}, nil
		}
	}
	ws.last = window{lo: max(1, ws.hi-ws.size), hi: ws.hi, scan: true}
	ws.hi, ws.size = ws.last.lo, 2*ws.size
	return ws.last, nil
}

// fileFilter is a condition on files (alias f) and its arguments.
type fileFilter struct {
	where string
	args  []any
}

// findSpans reads the ranges of ids below ws.hi of the files ws.files
// picks, each a file's first to last document (as its row says, when its
// checksum holds; a damaged row's are read from its documents), and
// merges them newest first.
func (ws *windows) findSpans() error {
	var spans []window
	add := func(lo, hi int64) {
		if hi > 0 && lo < ws.hi {
			spans = append(spans, window{lo: lo, hi: min(hi+1, ws.hi), scan: true})
		}
	}
	var damaged []int64
	err := rowsOf(scanFile, func(r fileRow) {
		if !r.ok {
			damaged = append(damaged, r.ID)
			return
		}
		add(r.lo, r.hi)
	})(ws.conn.QueryContext(ws.ctx, ws.s.Rebind(`SELECT `+fileColumns+` FROM files f WHERE `+ws.files.where), ws.files.args...))
	if err != nil {
		return err
	}
	for _, id := range damaged {
		lo, hi, err := ws.s.docSpan(ws.ctx, ws.conn, id)
		if err != nil {
			return err
		}
		add(lo, hi)
	}
	slices.SortFunc(spans, func(a, b window) int { return cmp.Compare(b.hi, a.hi) })
	for _, w := range spans {
		if k := len(ws.spans) - 1; k >= 0 && w.hi >= ws.spans[k].lo-offRun {
			ws.spans[k].lo = min(ws.spans[k].lo, w.lo)
			continue
		}
		ws.spans = append(ws.spans, w)
	}
	return nil
}

// span returns the next range of the projects' files' ids. On
// PostgreSQL, once a range held no candidate and none of its texts holds
// the needles (they are rare), the trigram index answers for the rest.
func (ws *windows) span() (window, error) {
	if ws.s.engine == Postgres && ws.last.hi > 0 && !ws.found {
		held, err := ws.holds(ws.last)
		if err != nil || !held {
			ws.done = true
			return window{hi: ws.last.lo}, err
		}
	}
	if len(ws.spans) == 0 {
		return window{}, nil
	}
	ws.last, ws.spans = ws.spans[0], ws.spans[1:]
	return ws.last, nil
}

// holds reports whether a run of texts about w holds the needles
// (PostgreSQL), whatever the filters.
func (ws *windows) holds(w window) (bool, error) {
	cond, args := pgConds("", ws.needles, false)
	cond, args = textBounds("", w, cond, args)
	var held bool
	err := ws.conn.QueryRowContext(ws.ctx, ws.s.Rebind(`SELECT EXISTS (SELECT 1 FROM texts WHERE `+strings.Join(cond, " AND ")+`)`), args...).Scan(&held)
	return held, err
}

// textBounds adds to cond the bounds of the runs of texts that hold docs
// numbered within w: their last number at or past w.lo and below w.hi
// and textSpan (no run is wider), their first below w.hi.
func textBounds(prefix string, w window, cond []string, args []any) ([]string, []any) {
	if w.lo > 0 {
		cond, args = append(cond, prefix+"hi >= ?"), append(args, w.lo)
	}
	if w.hi < math.MaxInt64-textSpan {
		cond, args = append(cond, prefix+"hi < ?", prefix+"lo < ?"), append(args, w.hi+textSpan, w.hi)
	}
	return cond, args
}

// run returns the window of the next run of off-path documents.
func (ws *windows) run() (window, error) {
	if len(ws.ids) == 0 && ws.more {
		ids, err := scanIDs(ws.conn.QueryContext(ws.ctx, ws.s.Rebind(`SELECT id FROM docs WHERE offpath = 1 AND id < ? ORDER BY id DESC LIMIT 1024`), ws.hi))
		if err != nil {
			return window{}, err
		}
		ws.ids, ws.more = ids, len(ids) == 1024
	}
	if len(ws.ids) == 0 {
		return window{}, nil
	}
	k := 1
	for k < len(ws.ids) && ws.ids[k-1]-ws.ids[k] <= offRun {
		k++
	}
	w := window{lo: ws.ids[k-1], hi: ws.ids[0] + 1, scan: true}
	ws.hi, ws.ids = w.lo, ws.ids[k:]
	return w, nil
}

// candidateColumns are the columns scanCandidate reads (docs d, files f).
const candidateColumns = `d.id, d.file_id, d.off, d.len, d.pos, d.part, d.entry_id, d.role, d.ts, f.path, f.machine`

// scanCandidate reads a row of candidateColumns.
func scanCandidate(sc scanner) (c Candidate, err error) {
	err = sc.Scan(&c.ID, &c.FileID, &c.Off, &c.Len, &c.Pos, &c.Part, &c.EntryID, &c.Role, &c.Time, &c.Path, &c.Machine)
	return c, err
}

// Copies returns the documents of the entry with id, part and time in
// every file of every machine (a fork's copies of an entry), by number.
func (s *DB) Copies(ctx context.Context, entryID string, part int, ts int64) ([]Candidate, error) {
	var out []Candidate
	err := s.Use(ctx, func(db *sql.DB) error {
		out = out[:0]
		return rowsOf(scanCandidate, func(c Candidate) { out = append(out, c) })(db.QueryContext(ctx, s.Rebind(`SELECT `+candidateColumns+`
			FROM docs d JOIN files f ON f.id = d.file_id WHERE d.entry_id = ? AND d.part = ? AND d.ts = ? ORDER BY d.id`), entryID, part, ts))
	})
	return out, err
}

// indexable returns the needles the engine's trigram index can narrow by:
// three characters or more.
func indexable(needles []string) []string {
	var out []string
	for _, n := range needles {
		if utf8.RuneCountInString(n) >= 3 {
			out = append(out, n)
		}
	}
	return out
}

// pgNeedles returns the words of needles (their runs between spaces)
// that PostgreSQL's trigram index of the texts' words narrows by (see
// addWords), each once. A phrase narrows by its words alone: the store
// keeps no texts, and the caller checks it on the entry's text.
func pgNeedles(needles []string) []string {
	var words []string
	for _, n := range needles {
		for w := range strings.SplitSeq(n, " ") {
			if utf8.RuneCountInString(w) >= 3 && !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	return words
}

// pgConds returns PostgreSQL's conditions (with their arguments) that a
// run's words hold each of words, through the trigram index (like)
// or read one by one. A word, without spaces, is in the text exactly
// when it is within one of its words. Columns are named after prefix.
func pgConds(prefix string, words []string, like bool) ([]string, []any) {
	var cond []string
	var args []any
	for _, w := range words {
		if like {
			cond, args = append(cond, prefix+"words LIKE ? ESCAPE '\\'"), append(args, "%"+likeEscape(w)+"%")
		} else {
			cond, args = append(cond, "strpos("+prefix+"words, ?) > 0"), append(args, w)
		}
	}
	return cond, args
}

// maxTrigrams bounds the trigrams one needle adds to an FTS5 query: a few
// spread along a long needle narrow as well as all of them.
const maxTrigrams = 12

// ftsMatch is an FTS5 query for texts holding every needle: each needle's
// trigrams (detail=none keeps no positions, so no phrases), all ANDed.
func ftsMatch(needles []string) string {
	seen := map[string]bool{}
	var terms []string
	for _, n := range needles {
		rs := []rune(n)
		count := len(rs) - 2
		step := 1
		if count > maxTrigrams {
			step = (count + maxTrigrams - 1) / maxTrigrams
		}
		for i := 0; i < count; i += step {
			addTrigram(string(rs[i:i+3]), seen, &terms)
		}
		addTrigram(string(rs[count-1:]), seen, &terms) // the end of the needle always
	}
	return strings.Join(terms, " AND ")
}

func addTrigram(t string, seen map[string]bool, terms *[]string) {
	if seen[t] {
		return
	}
	seen[t] = true
	*terms = append(*terms, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`)
}

// Marks returns n placeholders separated by commas.
func Marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }
