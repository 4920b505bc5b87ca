package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc64"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"time"
)

// Stamp identifies the bytes of a session file that were read: its size
// (up to the end of its last complete line) and modification time, and
// hashes of its first and last bytes, so that a file rewritten rather
// than appended to is told apart (see the catalog).
type Stamp struct {
	Size    int64
	ModTime int64 // ns
	Head    int64 // hash of the first bytes
	Tail    int64 // hash of the last bytes before Size
}

// stampSpan is how many of a file's first and last bytes a stamp hashes.
const stampSpan = 4096

// StampAt returns the stamp of the first size bytes of r, modified at mod.
func StampAt(r io.ReaderAt, size int64, mod time.Time) (Stamp, error) {
	st := Stamp{Size: size, ModTime: mod.UnixNano()}
	var err error
	if st.Head, err = hashAt(r, 0, min(stampSpan, size)); err != nil {
		return st, err
	}
	st.Tail, err = hashAt(r, max(0, size-stampSpan), min(stampSpan, size))
	return st, err
}

// hashAt hashes n bytes of r from off.
func hashAt(r io.ReaderAt, off, n int64) (int64, error) {
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, off); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return 0, err
	}
	h := fnv.New64a()
	h.Write(buf)
	return int64(h.Sum64() >> 1), nil
}

// File is what the store keeps of one session file.
type File struct {
	ID      int64
	Machine string // "" for this machine's files
	Path    string
	Stamp   Stamp
	// Docs is how many of the file's entries, from the first, have their
	// searchable texts stored.
	Docs      int
	SessionID string
	Parent    string // the header's parentSession
	Project   string
	Modified  int64  // last activity, Unix ms
	Meta      []byte // the file's row of the sessions list (the caller's JSON)
	Problem   string // why the file is not a session ("" when it is)
}

// summer returns functions that add numbers and strings to a row's
// checksum, and the checksum so far (it fits every engine's BIGINT).
func summer() (num func(int64), str func(string), sum func() int64) {
	h := crc64.New(crc64.MakeTable(crc64.ECMA))
	var b [8]byte
	num = func(v int64) { binary.LittleEndian.PutUint64(b[:], uint64(v)); h.Write(b[:]) }
	str = func(s string) { num(int64(len(s))); h.Write([]byte(s)) }
	return num, str, func() int64 { return int64(h.Sum64() >> 1) }
}

// labelSum is the checksum of a label's row in file id's labels.
func labelSum(id int64, l *Label) int64 {
	num, str, sum := summer()
	num(id)
	str(l.EntryID)
	str(l.Text)
	num(l.Time)
	num(int64(l.Pos))
	num(l.Off)
	num(int64(l.Len))
	return sum()
}

// sum is the checksum of the row's columns (places and the span of its
// docs' numbers included), so that a damaged row is noticed and not trusted.
func (f *File) sum(places []byte, lo, hi int64) int64 {
	num, str, sum := summer()
	str(f.Machine)
	str(f.Path)
	num(f.Stamp.Size)
	num(f.Stamp.ModTime)
	num(f.Stamp.Head)
	num(f.Stamp.Tail)
	num(int64(f.Docs))
	str(f.SessionID)
	str(f.Parent)
	str(f.Project)
	num(f.Modified)
	str(string(f.Meta))
	str(string(places))
	str(f.Problem)
	num(lo)
	num(hi)
	return sum()
}

// fileColumns are the columns scanFile reads.
const fileColumns = `id, machine, path, size, mtime, head, tail, docs, session_id, parent, project, modified, meta, places,
	problem, lo, hi, checksum`

// fileRow is a row of fileColumns: the file, its places, the numbers of
// its first and last docs, and whether its checksum holds (else the row
// is damaged).
type fileRow struct {
	File
	places []byte
	lo, hi int64
	ok     bool
}

// scanner is a row to read: *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// scanFile reads a row of fileColumns.
func scanFile(sc scanner) (r fileRow, err error) {
	var meta string
	var sum int64
	f := &r.File
	if err := sc.Scan(&f.ID, &f.Machine, &f.Path, &f.Stamp.Size, &f.Stamp.ModTime, &f.Stamp.Head, &f.Stamp.Tail,
		&f.Docs, &f.SessionID, &f.Parent, &f.Project, &f.Modified, &meta, &r.places, &f.Problem, &r.lo, &r.hi, &sum); err != nil {
		return fileRow{}, err
	}
	f.Meta = []byte(meta)
	r.ok = f.sum(r.places, r.lo, r.hi) == sum
	return r, nil
}

// rowsOf returns a function that reads the rows of a query (what
// QueryContext returned) with scan, and calls fn with each.
func rowsOf[T any](scan func(scanner) (T, error), fn func(T)) func(*sql.Rows, error) error {
	return func(rows *sql.Rows, err error) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			fn(v)
		}
		return rows.Err()
	}
}

// docSpan returns the numbers of file id's first and last docs (0, 0:
// none), as the docs say: a damaged row's are not trusted.
func (s *DB) docSpan(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id int64) (lo, hi int64, err error) {
	err = q.QueryRowContext(ctx, s.Rebind(`SELECT coalesce(min(id), 0), coalesce(max(id), 0) FROM docs WHERE file_id = ?`), id).Scan(&lo, &hi)
	return lo, hi, err
}

// scanIDs returns the numbers a query of one BIGINT column gives.
func scanIDs(rows *sql.Rows, err error) (ids []int64, _ error) {
	scan := func(sc scanner) (id int64, err error) {
		err = sc.Scan(&id)
		return id, err
	}
	err = rowsOf(scan, func(id int64) { ids = append(ids, id) })(rows, err)
	return ids, err
}

// Files returns every file the store knows on machine (places aside),
// leaving out rows whose checksum does not hold (damaged: Damaged counts
// them); the caller reads those files again.
func (s *DB) Files(ctx context.Context, machine string) (files []File, damaged int, err error) {
	err = s.Use(ctx, func(db *sql.DB) error {
		files, damaged = nil, 0
		return rowsOf(scanFile, func(r fileRow) {
			if !r.ok {
				damaged++
				return
			}
			files = append(files, r.File)
		})(db.QueryContext(ctx, s.Rebind(`SELECT `+fileColumns+` FROM files WHERE machine = ?`), machine))
	})
	if err != nil {
		return nil, 0, err // never the rows read before the failure
	}
	return files, damaged, nil
}

// Facts are what a search hit's file says of its entries beyond their
// texts: where each lies relative to the path pi resumes (the caller's
// blob), and the labels in force by entry id.
type Facts struct {
	Places []byte
	Labels map[string]string
	// Damaged says the file's row does not hold together (its checksum):
	// none of its facts are known.
	Damaged bool
}

// Facts returns the facts of the file with id; none when the file is gone
// or its row is damaged (then Damaged).
func (s *DB) Facts(ctx context.Context, id int64) (Facts, error) {
	var out Facts
	err := s.Use(ctx, func(db *sql.DB) error {
		out = Facts{}
		r, err := scanFile(db.QueryRowContext(ctx, s.Rebind(`SELECT `+fileColumns+` FROM files WHERE id = ?`), id))
		if errors.Is(err, sql.ErrNoRows) || err == nil && !r.ok {
			out.Damaged = err == nil
			return nil
		}
		if err != nil {
			return err
		}
		out.Places = r.places
		return rowsOf(scanLabel, func(l labelRow) {
			if !l.ok {
				out = Facts{Damaged: true}
			}
			if !out.Damaged {
				if out.Labels == nil {
					out.Labels = map[string]string{}
				}
				out.Labels[l.EntryID] = l.Text
			}
		})(db.QueryContext(ctx, s.Rebind(`SELECT '', l.file_id, `+labelColumns+` FROM labels l WHERE l.file_id = ?`), id))
	})
	return out, err
}

// labelColumns are the columns of a label's row scanLabel reads, after
// its file's path and number.
const labelColumns = `l.entry_id, l.label, l.ts, l.pos, l.off, l.len, l.checksum`

// labelRow is a label's row, and whether its checksum holds.
type labelRow struct {
	FileLabel
	ok bool
}

// scanLabel reads a row of a file's path and number and labelColumns.
func scanLabel(sc scanner) (r labelRow, err error) {
	var sum int64
	l := &r.FileLabel
	if err = sc.Scan(&l.Path, &l.FileID, &l.EntryID, &l.Text, &l.Time, &l.Pos, &l.Off, &l.Len, &sum); err == nil {
		r.ok = labelSum(l.FileID, &l.Label) == sum
	}
	return r, err
}

// Doc is one searchable piece of an entry.
type Doc struct {
	ID      int64 // the store's number (Search gives it; ignored by Save)
	FileID  int64 // likewise
	Off     int64 // the entry's line: its byte offset and length
	Len     int
	Pos     int // the entry's position in the file
	Part    int // which piece of the entry
	EntryID string
	Role    string
	Time    int64  // the entry's time, Unix ms
	Text    string // normalized (search.Normalize), for the index; not read back
}

// Label is a label in force on an entry.
type Label struct {
	EntryID string
	Text    string
	Time    int64 // when it was set, Unix ms
	Pos     int   // the labeled entry's position
	Off     int64 // the labeled entry's line: its byte offset and length
	Len     int
}

// Save is one change to what the store knows of a file, written in one
// transaction: its record, and optionally its texts, labels and places.
type Save struct {
	File File
	// Reset drops the file's stored texts first (it was read again from the start).
	Reset bool
	// Docs are texts to add, in the order of their lines; those at or
	// before the last line whose texts the store holds are left out.
	Docs []Doc
	// Labels replaces the file's labels, unless nil.
	Labels []Label
	// Places replaces where the file's entries lie, unless nil: two bits
	// an entry, four to a byte, the first entry in the lowest bits; 0 is
	// off the path to the file's last entry.
	Places []byte
	// Extra is the Hook's part of the save (usage.Tables': the usage of
	// the file's new entries), unless nil.
	Extra any
}

// Hook keeps tables of another package current with the files' rows
// (usage.Tables): called in the transaction of every save, after every
// file's row is written and before the texts are indexed, and of every
// removal.
type Hook interface {
	Saved(ctx context.Context, db *DB, tx *sql.Tx, saved []Saved) error
	Removed(ctx context.Context, db *DB, tx *sql.Tx, ids []int64) error
}

// Saved is one file's save as written: its row's id, and its places
// before and after.
type Saved struct {
	*Save
	ID       int64
	Old, Now []byte
}

// SetHook sets the hook of the saves and removals from now on.
func (s *DB) SetHook(h Hook) { s.hook.Store(&h) }

// runHook calls fn with the hook, if one is set.
func (s *DB) runHook(fn func(h Hook) error) error {
	if h := s.hook.Load(); h != nil {
		return fn(*h)
	}
	return nil
}

// Save writes one file's change; nothing of it lands unless all of it does.
func (s *DB) Save(ctx context.Context, sv *Save) error {
	return s.SaveMany(ctx, []*Save{sv})
}

// SaveMany writes several files' changes in one transaction.
func (s *DB) SaveMany(ctx context.Context, saves []*Save) error {
	return s.Tx(ctx, func(tx *sql.Tx) error {
		var texts []docText
		saved := make([]Saved, 0, len(saves))
		for _, sv := range saves {
			done, err := s.save(ctx, tx, sv, &texts)
			if err != nil {
				return err
			}
			saved = append(saved, done)
		}
		// After every file's record (a batch may hold a fork and its
		// source), and before the texts, which go last (see addTexts).
		if err := s.runHook(func(h Hook) error { return h.Saved(ctx, s, tx, saved) }); err != nil {
			return err
		}
		return s.addTexts(ctx, tx, texts)
	})
}

// docText is a document's text to index, once its row is written.
type docText struct {
	id   int64
	text string
}

// addTexts indexes texts (SQLite), all in a row at the end of the
// transaction: FTS5 writes its pending index to disk at every statement
// that opens a savepoint (an INSERT … RETURNING does), so interleaving
// would make a segment a document.
func (s *DB) addTexts(ctx context.Context, tx *sql.Tx, texts []docText) error {
	if len(texts) == 0 {
		return nil
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO doc_text (rowid, text) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	for _, t := range texts {
		if _, err := ins.ExecContext(ctx, t.id, t.text); err != nil {
			return err
		}
	}
	return nil
}

// save writes one file's change in tx. Saves of one file take turns:
// its row stays locked until the commit (PostgreSQL: FOR UPDATE; SQLite
// has one writer), so each adds only the docs past the other's.
func (s *DB) save(ctx context.Context, tx *sql.Tx, sv *Save, texts *[]docText) (Saved, error) {
	lock := ""
	if s.engine == Postgres {
		sv, lock = pgText(sv), " FOR UPDATE"
	}
	f := &sv.File
	old, err := scanFile(tx.QueryRowContext(ctx, s.Rebind(`SELECT `+fileColumns+` FROM files WHERE machine = ? AND path = ?`+lock),
		f.Machine, f.Path))
	switch {
	case errors.Is(err, sql.ErrNoRows): // a row to number the docs by, written whole below
		old.ok = true
		err = tx.QueryRowContext(ctx, s.Rebind(`INSERT INTO files (machine, path, size, mtime, head, tail, docs, session_id,
			parent, project, modified, meta, problem, checksum) VALUES (?, ?, 0, 0, 0, 0, 0, '', '', '', 0, '', '', 0) RETURNING id`),
			f.Machine, f.Path).Scan(&old.ID)
	case err == nil && !old.ok: // damaged: where its docs are numbered is read from them
		old.lo, old.hi, err = s.docSpan(ctx, tx, old.ID)
	}
	if err != nil {
		return Saved{}, err
	}
	id, lo, hi, oldPlaces := old.ID, old.lo, old.hi, old.places
	places := sv.Places
	if places == nil {
		places = oldPlaces
	}
	if places == nil {
		places = []byte{}
	}
	f.ID = id
	job := Saved{Save: sv, ID: id, Old: oldPlaces, Now: places}
	if sv.Reset {
		if err := s.dropDocs(ctx, tx, id); err != nil {
			return job, err
		}
		lo, hi = 0, 0
	} else if err := s.flipDocs(ctx, tx, id, oldPlaces, places); err != nil {
		return job, err
	}
	if err := s.addDocs(ctx, tx, id, sv.Docs, places, texts, &lo, &hi); err != nil {
		return job, err
	}
	_, err = tx.ExecContext(ctx, s.Rebind(`UPDATE files SET size = ?, mtime = ?, head = ?, tail = ?, docs = ?, session_id = ?,
		parent = ?, project = ?, modified = ?, meta = ?, places = ?, problem = ?, lo = ?, hi = ?, checksum = ? WHERE id = ?`),
		f.Stamp.Size, f.Stamp.ModTime, f.Stamp.Head, f.Stamp.Tail, f.Docs, f.SessionID, f.Parent, f.Project, f.Modified,
		string(f.Meta), places, f.Problem, lo, hi, f.sum(places, lo, hi), id)
	if err != nil {
		return job, err
	}
	if sv.Labels != nil {
		if _, err := tx.ExecContext(ctx, s.Rebind(`DELETE FROM labels WHERE file_id = ?`), id); err != nil {
			return job, err
		}
		for _, l := range sv.Labels {
			if _, err := tx.ExecContext(ctx, s.Rebind(`INSERT INTO labels (file_id, entry_id, label, ts, pos, off, len, checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (file_id, entry_id) DO UPDATE SET label = excluded.label, ts = excluded.ts, pos = excluded.pos,
				off = excluded.off, len = excluded.len, checksum = excluded.checksum`),
				id, l.EntryID, l.Text, l.Time, l.Pos, l.Off, l.Len, labelSum(id, &l)); err != nil {
				return job, err
			}
		}
	}
	return job, nil
}

// pgText returns sv with every text valid for PostgreSQL, which refuses
// NUL characters and invalid UTF-8 in text columns (a session's strings
// may hold either).
func pgText(sv *Save) *Save {
	c := *sv
	t := PGText
	f := &c.File
	f.Machine, f.Path, f.SessionID, f.Parent, f.Project, f.Problem = t(f.Machine), t(f.Path), t(f.SessionID), t(f.Parent), t(f.Project), t(f.Problem)
	f.Meta = []byte(t(string(f.Meta)))
	c.Docs = make([]Doc, len(sv.Docs))
	for i, d := range sv.Docs {
		d.EntryID, d.Role, d.Text = t(d.EntryID), t(d.Role), t(d.Text)
		c.Docs[i] = d
	}
	if sv.Labels != nil {
		c.Labels = make([]Label, len(sv.Labels))
		for i, l := range sv.Labels {
			l.EntryID, l.Text = t(l.EntryID), t(l.Text)
			c.Labels[i] = l
		}
	}
	return &c
}

// flipDocs sets the offpath flags of file id's docs whose entries moved
// on or off the path between places old and now (a rewind): a doc's flag
// always follows its file's places.
func (s *DB) flipDocs(ctx context.Context, tx *sql.Tx, id int64, old, now []byte) error {
	var on, off []int64
	for b := range max(len(old), len(now)) {
		if b < len(old) && b < len(now) && old[b] == now[b] {
			continue
		}
		for p := 4 * b; p < 4*b+4; p++ {
			if was, is := OnPath(old, p), OnPath(now, p); was != is && is {
				on = append(on, int64(p))
			} else if was != is {
				off = append(off, int64(p))
			}
		}
	}
	in := "pos IN (SELECT value FROM json_each(?))"
	if s.engine == Postgres {
		in = "pos = ANY(?::int[])"
	}
	for flag, ps := range [][]int64{on, off} { // on the path: flag 0; off it: 1
		if len(ps) == 0 {
			continue
		}
		var list any = ps
		if s.engine == SQLite {
			b, _ := json.Marshal(ps)
			list = string(b)
		}
		if _, err := tx.ExecContext(ctx, s.Rebind(`UPDATE docs SET offpath = ? WHERE file_id = ? AND offpath <> ? AND `+in), flag, id, flag, list); err != nil {
			return err
		}
	}
	return nil
}

// addDocs inserts the docs of file id past the last one the store holds
// (another process may have saved the same lines first), numbered in the
// order of their lines, their offpath flags as places say, and adds their
// texts to texts (indexed last: see addTexts). lo and hi are the numbers
// of the file's first and last docs (0: none), kept current.
func (s *DB) addDocs(ctx context.Context, tx *sql.Tx, id int64, docs []Doc, places []byte, texts *[]docText, lo, hi *int64) error {
	if *hi > 0 && len(docs) > 0 {
		var last int64
		err := tx.QueryRowContext(ctx, s.Rebind(`SELECT off FROM docs WHERE id = ?`), *hi).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) { // (gone: the file's docs say)
			err = tx.QueryRowContext(ctx, s.Rebind(`SELECT coalesce(max(off), -1) FROM docs WHERE file_id = ?`), id).Scan(&last)
		}
		if err != nil {
			return err
		}
		for len(docs) > 0 && docs[0].Off <= last {
			docs = docs[1:]
		}
	}
	if len(docs) == 0 {
		return nil
	}
	added := func(first, last int64, err error) error { // a chunk's numbers
		if err == nil {
			*lo, *hi = cmp.Or(*lo, first), last
		}
		return err
	}
	if s.engine == SQLite {
		return added(s.addDocsBulk(ctx, tx, id, docs, places, texts))
	}
	for start, end := 0, 0; start < len(docs); start = end {
		size := 0
		for end = start; end < len(docs) && (end == start || size+len(docs[end].Text) <= pgChunk); end++ {
			size += len(docs[end].Text)
		}
		if err := added(s.addDocsPG(ctx, tx, id, docs[start:end], places)); err != nil {
			return err
		}
	}
	return nil
}

// bulkRows is how many docs one SQLite INSERT writes.
const bulkRows = 100

// addDocsBulk inserts docs of file id, bulkRows to a statement (SQLite),
// and returns the first and last numbers it gave them. The transaction
// holds SQLite's write lock: the docs are numbered here.
func (s *DB) addDocsBulk(ctx context.Context, tx *sql.Tx, id int64, docs []Doc, places []byte, texts *[]docText) (int64, int64, error) {
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM docs`).Scan(&next); err != nil {
		return 0, 0, err
	}
	insert := func(n int) string {
		return `INSERT INTO docs (id, file_id, off, len, pos, part, entry_id, role, ts, offpath) VALUES ` +
			strings.TrimSuffix(strings.Repeat("("+Marks(10)+"), ", n), ", ")
	}
	full, err := tx.PrepareContext(ctx, insert(bulkRows))
	if err != nil {
		return 0, 0, err
	}
	defer full.Close()
	args := make([]any, 0, 10*bulkRows)
	for start := 0; start < len(docs); start += bulkRows {
		chunk := docs[start:min(len(docs), start+bulkRows)]
		args = args[:0]
		for i := range chunk {
			d := &chunk[i]
			did := next + int64(start+i)
			args = append(args, did, id, d.Off, d.Len, d.Pos, d.Part, d.EntryID, d.Role, d.Time, offPath(places, d.Pos))
			*texts = append(*texts, docText{did, d.Text})
		}
		if len(chunk) == bulkRows {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, insert(len(chunk)), args...)
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return next, next + int64(len(docs)) - 1, nil
}

// pgChunk bounds the bytes of texts whose words one PostgreSQL statement
// of addDocsPG sends: pgx encodes a statement's arrays in one growing
// buffer, so a file of many megabytes of texts in one statement would
// hold several times them at once.
const pgChunk = 1 << 20

// addDocsPG is addDocs on PostgreSQL for up to pgChunk bytes of texts:
// it numbers the docs (in their order, though another process's may lie
// between them), cuts them into runs (see textRuns), and writes the docs'
// rows and the runs' words in arrays, a statement each. It returns the
// first and last numbers the docs were given.
func (s *DB) addDocsPG(ctx context.Context, tx *sql.Tx, id int64, docs []Doc, places []byte) (first, last int64, err error) {
	n := len(docs)
	ids, err := scanIDs(tx.QueryContext(ctx, `SELECT nextval(q.seq) FROM (SELECT pg_get_serial_sequence(quote_ident(current_schema()) || '.docs', 'id')::regclass
		AS seq) q, generate_series(1, $1) ORDER BY 1`, n))
	if err != nil {
		return 0, 0, err
	}
	if len(ids) != n {
		return 0, 0, fmt.Errorf("index store: %d docs numbered of %d", len(ids), n)
	}
	los, his, words, runs := textRuns(docs, ids)
	offs, tss, lens, poss, parts, offpaths := make([]int64, n), make([]int64, n), make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	eids, roles := make([]string, n), make([]string, n)
	for i := range docs {
		d := &docs[i]
		offs[i], tss[i], lens[i], poss[i], parts[i], offpaths[i] = d.Off, d.Time, int32(d.Len), int32(d.Pos), int32(d.Part), int32(offPath(places, d.Pos))
		eids[i], roles[i] = d.EntryID, d.Role
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO docs (id, file_id, off, ts, len, pos, part, offpath, run, entry_id, role)
		SELECT id, $1, off, ts, len, pos, part, offpath, run, entry_id, role FROM unnest($2::bigint[], $3::bigint[], $4::bigint[],
		$5::int[], $6::int[], $7::int[], $8::int[], $9::int[], $10::text[], $11::text[])
		AS u (id, off, ts, len, pos, part, offpath, run, entry_id, role)`,
		id, ids, offs, tss, lens, poss, parts, offpaths, runs, eids, roles)
	if err == nil {
		_, err = tx.ExecContext(ctx, `INSERT INTO texts (hi, lo, words) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[])`,
			his, los, words)
	}
	return ids[0], ids[n-1], err
}

// Runs of docs whose words one row of texts holds (PostgreSQL): at most
// textDocs docs, numbered within textSpan of each other, and a doc joins
// a run only while its words are under textWords bytes. A run's words
// narrow its docs as each doc's would, and short texts (most of a
// session's entries) take far less room together than a row each: a
// conversation repeats its words. Long texts gain little from sharing a
// row, and would make more candidates: they keep runs of their own. A
// search reads a candidate run's docs, and the caller checks each on its
// text.
const (
	textDocs  = 8
	textSpan  = 64
	textWords = 512
)

// textRuns cuts docs, numbered ids (ascending: in their order, though
// another process's may lie between them), into runs, and returns each
// run's first and last numbers and its distinct words, and each doc's
// run: how far its run's last number is past its own.
func textRuns(docs []Doc, ids []int64) (los, his []int64, words []string, runs []int32) {
	seen := map[string]struct{}{}
	var b strings.Builder
	runs = make([]int32, len(docs))
	for start, end := 0, 0; start < len(docs); start = end {
		clear(seen)
		b.Reset()
		for end = start; end < len(docs) && (end == start || end-start < textDocs && ids[end]-ids[start] < textSpan && b.Len() < textWords); end++ {
			addWords(&b, docs[end].Text, seen)
		}
		for k := start; k < end; k++ {
			runs[k] = int32(ids[end-1] - ids[k])
		}
		los, his, words = append(los, ids[start]), append(his, ids[end-1]), append(words, b.String())
	}
	return los, his, words, runs
}

// addWords writes to b the words of a normalized text (its runs between
// spaces) not yet in seen, each once, in order, separated by spaces: what
// PostgreSQL's trigram index covers of a text. The same trigrams as the
// text's, in a fraction of the characters (texts repeat their words): the
// index takes a fraction of the time to build.
func addWords(b *strings.Builder, text string, seen map[string]struct{}) {
	for w := range strings.SplitSeq(text, " ") {
		if _, dup := seen[w]; dup || w == "" {
			continue
		}
		seen[w] = struct{}{}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
}

// TextIndex, on PostgreSQL, drops the trigram index of a store that holds
// no texts (on false), so that a first build adds them unindexed, or
// makes it once they are in (on true), over them all at once: less work
// than keeping it as they come, and smaller. Having made it, it analyzes
// the tables the build filled, so that the planner knows their sizes
// before the first searches. SQLite: nothing.
func (s *DB) TextIndex(ctx context.Context, on bool) error {
	if s.engine == SQLite {
		return nil
	}
	q := textIndex
	if !on {
		q = `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM texts) THEN DROP INDEX IF EXISTS texts_trgm; END IF; END $$`
	}
	made := false
	err := s.Tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT to_regclass('texts_trgm') IS NULL`).Scan(&made)
		if err == nil {
			_, err = tx.ExecContext(ctx, trgmPath)
		}
		if err == nil {
			_, err = tx.ExecContext(ctx, q)
		}
		return err
	})
	if err != nil || !on || !made {
		return err
	}
	return s.Use(ctx, func(db *sql.DB) error {
		_, err := db.ExecContext(ctx, `ANALYZE docs, texts, files, labels`)
		return err
	})
}

// dropDocs deletes the docs of file id, and their texts.
func (s *DB) dropDocs(ctx context.Context, tx *sql.Tx, id int64) error {
	texts := `DELETE FROM doc_text WHERE rowid IN (SELECT id FROM docs WHERE file_id = ?)`
	if s.engine == Postgres {
		texts = `DELETE FROM texts WHERE hi IN (SELECT id + run FROM docs WHERE file_id = $1)`
	}
	if _, err := tx.ExecContext(ctx, texts, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, s.Rebind(`DELETE FROM docs WHERE file_id = ?`), id)
	return err
}

// Remove forgets the files at paths on machine.
func (s *DB) Remove(ctx context.Context, machine string, paths ...string) error {
	if len(paths) == 0 {
		return nil
	}
	return s.Tx(ctx, func(tx *sql.Tx) error {
		var ids []int64
		for _, p := range paths {
			var id int64
			err := tx.QueryRowContext(ctx, s.Rebind(`SELECT id FROM files WHERE machine = ? AND path = ?`), machine, p).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			if err := s.dropDocs(ctx, tx, id); err != nil {
				return err
			}
			for _, q := range []string{`DELETE FROM labels WHERE file_id = ?`, `DELETE FROM files WHERE id = ?`} {
				if _, err := tx.ExecContext(ctx, s.Rebind(q), id); err != nil {
					return err
				}
			}
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			return nil
		}
		return s.runHook(func(h Hook) error { return h.Removed(ctx, s, tx, ids) })
	})
}

// Labels returns the labels in force on machine, with their files, newest
// first; and the files whose label rows do not hold together (their
// checksums: none of their labels is given; the caller reads those files
// again). Labels are few: every row is read, to find the damaged ones.
func (s *DB) Labels(ctx context.Context, machine string) (out []FileLabel, damaged []string, err error) {
	err = s.Use(ctx, func(db *sql.DB) error {
		out, damaged = nil, nil
		bad := map[string]bool{}
		var all []FileLabel
		err := rowsOf(scanLabel, func(l labelRow) {
			if !l.ok && !bad[l.Path] {
				bad[l.Path] = true
				damaged = append(damaged, l.Path)
			}
			all = append(all, l.FileLabel)
		})(db.QueryContext(ctx, s.Rebind(`SELECT f.path, l.file_id, `+labelColumns+` FROM labels l
			JOIN files f ON f.id = l.file_id WHERE f.machine = ? ORDER BY l.ts DESC`), machine))
		out = slices.DeleteFunc(all, func(l FileLabel) bool { return bad[l.Path] })
		return err
	})
	return out, damaged, err
}

// FileLabel is a label and the file it is in.
type FileLabel struct {
	Path   string
	FileID int64
	Label
}

// likeEscape escapes LIKE's wildcards in s (with \ as the escape).
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// OnPath reports whether places (two bits an entry, four to a byte, the
// first entry in the lowest bits: the catalog's packing) put entry pos on
// the path to the file's last entry: any place but 0.
func OnPath(places []byte, pos int) bool {
	return pos >= 0 && pos/4 < len(places) && places[pos/4]>>(2*(pos%4))&3 != 0
}

// offPath is a doc's offpath flag: 1 when places put entry pos off the
// path (see OnPath), else 0.
func offPath(places []byte, pos int) int {
	if OnPath(places, pos) {
		return 0
	}
	return 1
}

// Stamps returns the size and modification time of every file the store
// knows on machine, by path (their hashes left out): a reader compares
// them with the files to tell whether the store is current.
func (s *DB) Stamps(ctx context.Context, machine string) (map[string]Stamp, error) {
	var out map[string]Stamp
	err := s.Use(ctx, func(db *sql.DB) error {
		out = map[string]Stamp{}
		type row struct {
			path string
			Stamp
		}
		scan := func(sc scanner) (r row, err error) {
			err = sc.Scan(&r.path, &r.Size, &r.ModTime)
			return r, err
		}
		return rowsOf(scan, func(r row) { out[r.path] = r.Stamp })(db.QueryContext(ctx, s.Rebind(`SELECT path, size, mtime FROM files WHERE machine = ?`), machine))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
