package store

import (
	"context"
	"database/sql"
	"math"
	"strings"
	"unicode/utf8"
)

// Query asks for candidate documents, newest (highest id) first.
type Query struct {
	// Needles are normalized literals (search.Query.Needles) every text
	// must hold; the engine's index narrows by those of three characters
	// or more, the caller checks the rest on the real text.
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
// document whose text holds all of q's needles of three characters or
// more (found by the engine's full-text index) and passes its filters.
// Shorter needles, negations and regular expressions are the caller's to
// check on the real text.
func (s *DB) Search(ctx context.Context, q Query) ([]Candidate, error) {
	where, args := []string{}, []any{}
	if !q.Any {
		where = append(where, "f.machine = ?")
		args = append(args, q.Machine)
	}
	if len(q.Roles) > 0 {
		where = append(where, "d.role IN ("+marks(len(q.Roles))+")")
		for _, r := range q.Roles {
			args = append(args, r)
		}
	}
	if len(q.NotRoles) > 0 {
		where = append(where, "d.role NOT IN ("+marks(len(q.NotRoles))+")")
		for _, r := range q.NotRoles {
			args = append(args, r)
		}
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
	if q.After != 0 {
		where = append(where, "d.ts >= ?")
		args = append(args, q.After)
	}
	if q.Before != 0 {
		where = append(where, "d.ts < ?")
		args = append(args, q.Before)
	}
	from, order := "docs d JOIN files f ON f.id = d.file_id", "d.id"
	needles := indexable(q.Needles)
	switch {
	case len(needles) == 0:
	case s.engine == SQLite:
		from, order = "doc_text t JOIN docs d ON d.id = t.rowid JOIN files f ON f.id = d.file_id", "t.rowid" // FTS5 walks its rowids newest first
		where = append(where, "doc_text MATCH ?")
		args = append(args, ftsMatch(needles))
	default:
		from = "doc_text t JOIN docs d ON d.id = t.id JOIN files f ON f.id = d.file_id"
		for _, n := range needles {
			where = append(where, "t.text LIKE ? ESCAPE '\\'")
			args = append(args, "%"+likeEscape(n)+"%")
		}
	}
	// query is the search for ids in [lo, hi).
	query := func(lo, hi int64, limit int) (string, []any) {
		w := append([]string{order + " < ?"}, where...)
		a := append([]any{hi}, args...)
		if lo > 0 {
			w = append(w, order+" >= ?")
			a = append(a, lo)
		}
		return `SELECT d.id, d.file_id, d.off, d.len, d.pos, d.part, d.entry_id, d.type, d.role, d.ts, f.path, f.machine
			FROM ` + from + ` WHERE ` + strings.Join(w, " AND ") + ` ORDER BY ` + order + ` DESC LIMIT ?`, append(a, limit)
	}
	limit := max(q.Limit, 1)
	hi := q.Below
	if hi <= 0 {
		hi = math.MaxInt64
	}
	var out []Candidate
	err := s.use(ctx, func(db *sql.DB) error {
		out = out[:0]
		if s.engine == SQLite || len(needles) == 0 {
			qs, a := query(0, hi, limit)
			return scanCandidates(db.QueryContext(ctx, s.q(qs), a...))(&out)
		}
		// PostgreSQL's planner cannot tell how common a substring is: for
		// a common one it would read every row the trigram index gives
		// before sorting them. So the newest documents are searched first,
		// in a window of ids that doubles until the batch is full or the
		// oldest is reached: each step reads at most its window.
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		var top int64
		if err := conn.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM docs`).Scan(&top); err != nil {
			return err
		}
		hi = min(hi, top+1)
		for window := int64(20000); hi > 1 && len(out) < limit; window *= 2 {
			lo := max(1, hi-window)
			qs, a := query(lo, hi, limit-len(out))
			if err := scanCandidates(conn.QueryContext(ctx, s.q(qs), a...))(&out); err != nil {
				return err
			}
			hi = lo
		}
		return nil
	})
	return out, err
}

// scanCandidates appends the rows of a candidates query to out.
func scanCandidates(rows *sql.Rows, err error) func(out *[]Candidate) error {
	return func(out *[]Candidate) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c Candidate
			if err := rows.Scan(&c.ID, &c.FileID, &c.Off, &c.Len, &c.Pos, &c.Part, &c.EntryID, &c.Type, &c.Role,
				&c.Time, &c.Path, &c.Machine); err != nil {
				return err
			}
			*out = append(*out, c)
		}
		return rows.Err()
	}
}

// Copies returns the documents of the entry with id, part and time in
// every file of every machine (a fork's copies of an entry), by number.
func (s *DB) Copies(ctx context.Context, entryID string, part int, ts int64) ([]Candidate, error) {
	var out []Candidate
	err := s.use(ctx, func(db *sql.DB) error {
		out = out[:0]
		return scanCandidates(db.QueryContext(ctx, s.q(`SELECT d.id, d.file_id, d.off, d.len, d.pos, d.part, d.entry_id,
			d.type, d.role, d.ts, f.path, f.machine FROM docs d JOIN files f ON f.id = d.file_id
			WHERE d.entry_id = ? AND d.part = ? AND d.ts = ? ORDER BY d.id`), entryID, part, ts))(&out)
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

// marks is n placeholders separated by commas.
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }
