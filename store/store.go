package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SchemaVersion is the version of the database layout; a database of
// another version is rebuilt. Raise it whenever the layout or the meaning
// of a stored value changes.
const SchemaVersion = 7

// applicationID marks piweb's databases ("pwbi").
const applicationID = 0x70776269

// ErrCorrupt is wrapped by errors that report a damaged database.
var ErrCorrupt = errors.New("the index store is damaged; Reset rebuilds it")

// ErrClosed is returned by an operation that starts while the store is
// being reset or after it was closed.
var ErrClosed = errors.New("the index store is closed or being reset")

// Store is an open index store.
type Store struct {
	path string
	db   atomic.Pointer[gen] // swapped by Reset while searches may run: see acquire
	wmu  sync.Mutex          // one write transaction at a time in this process
	rmu  sync.Mutex          // one Reset or Close at a time
	// closed is set by Close (under rmu).
	closed bool
	moved  atomic.Pointer[func()] // see OnMoved

	seed uint64 // hashes the words of a batch (search.HashTerm)

	lmu    sync.Mutex
	levels map[int64]*segLevels // segments are never changed: their levels are cached by id

	nmu   sync.Mutex
	names map[string]int64 // interned type, role and project names
	ids   map[int64]nameInfo
	paths map[int64]string // file ids to paths
}

// DefaultPath returns where piweb keeps its store: piweb/index.db in
// $XDG_CACHE_HOME (when absolute), else in the system's user cache folder,
// else in ~/.cache.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" || !filepath.IsAbs(dir) { // the XDG spec ignores a relative one
		d, err := os.UserCacheDir()
		if err != nil {
			home, herr := os.UserHomeDir()
			if herr != nil {
				return "", fmt.Errorf("no cache folder: %w", err)
			}
			d = filepath.Join(home, ".cache")
		}
		dir = d
	}
	return filepath.Join(dir, "piweb", "index.db"), nil
}

// Open opens the store at path (a database file), creating its folder and
// the database as needed. A database that is damaged, foreign or of
// another schema version is deleted and created again; Open fails only
// when nothing can be created at path.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("index store: %w", err)
	}
	s, err := open(path)
	if err == nil {
		return s, nil
	}
	if rerr := removeDB(path); rerr != nil {
		return nil, fmt.Errorf("index store %s: %v; removing it: %w", path, err, rerr)
	}
	s, err = open(path)
	if err != nil {
		return nil, fmt.Errorf("index store %s: %w", path, err)
	}
	return s, nil
}

// removeDB deletes the database file and its WAL and shared-memory files;
// it refuses to delete anything but regular files.
func removeDB(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func dsn(path string) string {
	return "file:" + path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(10000)" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)" +
		"&_pragma=cache_size(-16384)"
}

// open opens and checks the database at path, creating the schema in an
// empty one; any problem is an error (Open then starts afresh).
func open(path string) (*Store, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4) // kept open: each connection opens the file by its path
	s := &Store{path: path, seed: rand.Uint64()}
	g := newGen(db)
	s.db.Store(g)
	if err := s.init(db); err != nil {
		db.Close()
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil {
		g.file = fi
	}
	return s, nil
}

// init checks the version marks and creates the schema in an empty database.
func (s *Store) init(db *sql.DB) error {
	ok, err := current(db)
	if err != nil || ok {
		return err
	}
	tx, err := db.Begin() // immediate: another process creating it waits for us or we for it
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var app, ver, tables int
	if err := tx.QueryRow(`PRAGMA application_id`).Scan(&app); err != nil {
		return err
	}
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&ver); err != nil {
		return err
	}
	if app == applicationID && ver == SchemaVersion {
		return tx.Commit() // made by another process meanwhile
	}
	if err := tx.QueryRow(`SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		return err
	}
	if app != 0 || ver != 0 || tables != 0 {
		return fmt.Errorf("not a piweb index store of version %d (application %#x, version %d)", SchemaVersion, app, ver)
	}
	for _, q := range schema {
		if _, err := tx.Exec(q); err != nil {
			return fmt.Errorf("creating the schema: %w", err)
		}
	}
	return tx.Commit()
}

// current reports whether the database is a piweb store of this version.
func current(db *sql.DB) (bool, error) {
	var app, ver int
	if err := db.QueryRow(`PRAGMA application_id`).Scan(&app); err != nil {
		return false, err
	}
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&ver); err != nil {
		return false, err
	}
	if app == applicationID && ver == SchemaVersion {
		// Read the tables once: a damaged schema fails here, not later.
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM paths`).Scan(&n); err != nil {
			return false, err
		}
		return true, nil
	}
	if app != 0 || ver != 0 {
		return false, fmt.Errorf("not a piweb index store of version %d (application %#x, version %d)", SchemaVersion, app, ver)
	}
	return false, nil
}

var schema = []string{
	// Every file the store knows, records or documents, by a small id
	// (never reused: hits name files through a cache of ids).
	`CREATE TABLE paths(id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL UNIQUE)`,
	`CREATE TABLE records(id INTEGER PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL, stamp BLOB)`,
	`CREATE TABLE blobs(id INTEGER PRIMARY KEY, data BLOB)`,
	// Type, role and project names, interned; kinds says which they are
	// used as (kindType, kindRole, kindProject).
	`CREATE TABLE names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, kinds INTEGER NOT NULL)`,
	// The documents, numbered in the order added (see AddDocs): newest
	// first is descending ids. A row packs a run of them, one file's,
	// ids lo to hi (runs.go); time is in milliseconds.
	`CREATE TABLE docruns(hi INTEGER PRIMARY KEY AUTOINCREMENT, lo INTEGER NOT NULL, fid INTEGER NOT NULL,
		tlo INTEGER NOT NULL, thi INTEGER NOT NULL, bytes INTEGER NOT NULL, data BLOB NOT NULL)`,
	`CREATE INDEX docruns_fid ON docruns(fid)`,
	// The word index (index.go): segments, their blocks of words and
	// document ids, and the deleted documents they may still name.
	`CREATE TABLE segs(id INTEGER PRIMARY KEY AUTOINCREMENT, class INTEGER NOT NULL, docs INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL, levels BLOB NOT NULL)`,
	`CREATE INDEX segs_class ON segs(class)`,
	`CREATE TABLE blocks(seg INTEGER NOT NULL, first BLOB NOT NULL, data BLOB NOT NULL, PRIMARY KEY(seg, first))`,
	`CREATE TABLE dead(id INTEGER PRIMARY KEY)`,
	fmt.Sprintf(`PRAGMA application_id = %d`, applicationID),
	fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion),
}

// Path returns the database file of the store.
func (s *Store) Path() string { return s.path }

// Close waits for the operations under way, checkpoints the write-ahead
// log and closes the database; operations started after fail (ErrClosed).
func (s *Store) Close() error {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.closed = true
	g := s.db.Load()
	if !g.retire() {
		return nil
	}
	_, _ = g.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return g.db.Close()
}

// Reset empties the store: its database is deleted and created again.
// It waits for the operations under way on the old one, and operations
// that start meanwhile fail (ErrClosed) or wait for the new one; it must
// not be called from inside an operation of the store (a Search's
// callbacks, say). Other processes using the store move to the new
// database at their next operation (see acquire).
func (s *Store) Reset() error {
	return s.replace(s.db.Load(), true)
}

// replace closes g, once the operations under way on it end, and opens
// the database at the store's path in its place: after deleting it when
// remove is set (Reset), or as it is (another process replaced it).
func (s *Store) replace(g *gen, remove bool) error {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if !remove && s.db.Load() != g {
		return nil // replaced meanwhile
	}
	if !remove {
		if fn := s.moved.Load(); fn != nil {
			defer (*fn)() // once the new database is in place
		}
	}
	g = s.db.Load()
	g.retire()
	// No connection of the old database is in use now, so closing it closes
	// them all before its files go and the new ones are made under the
	// same names.
	g.db.Close()
	if remove {
		if err := removeDB(s.path); err != nil {
			return err
		}
	}
	n, err := open(s.path)
	if err != nil {
		return err
	}
	s.nmu.Lock()
	s.names, s.ids, s.paths = nil, nil, nil // ids of another database
	s.nmu.Unlock()
	s.lmu.Lock()
	s.levels = nil // segment ids start again
	s.lmu.Unlock()
	s.db.Store(n.db.Load())
	return nil
}

// OnMoved sets a function called when the store moved to the database
// another process's Reset made, since what this process had written is
// not in it. The operation that noticed calls it before it goes on; it
// must not use the store.
func (s *Store) OnMoved(fn func()) { s.moved.Store(&fn) }

// gen is one opened database and the operations under way on it.
type gen struct {
	db      *sql.DB
	file    os.FileInfo // the database file when opened
	mu      sync.Mutex
	refs    int        // operations under way
	retired bool       // no operation may start
	idle    *sync.Cond // signalled when refs falls to zero
}

func newGen(db *sql.DB) *gen {
	g := &gen{db: db}
	g.idle = sync.NewCond(&g.mu)
	return g
}

// retire stops new operations on g and waits for those under way; it
// reports whether g was in use until now.
func (g *gen) retire() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	was := !g.retired
	g.retired = true
	for g.refs > 0 {
		g.idle.Wait()
	}
	return was
}

// release ends an operation begun by acquire.
func (g *gen) release() {
	g.mu.Lock()
	if g.refs--; g.refs == 0 {
		g.idle.Broadcast()
	}
	g.mu.Unlock()
}

// acquire begins an operation: it returns the database to use until the
// operation calls release, which Reset and Close wait for. Every public
// method that reads or writes the database is one operation; helpers
// called inside one use the database it was given, and never acquire.
//
// A database file that is no longer the one opened was deleted and made
// again by another process's Reset: the store moves to the new one first,
// since this process's names and ids are the old one's, and its writes
// would go to a deleted file no one else reads.
func (s *Store) acquire() (*sql.DB, func(), error) {
	for {
		g := s.db.Load()
		if fi, err := os.Stat(s.path); g.file != nil && (err != nil || !os.SameFile(fi, g.file)) {
			if err := s.replace(g, false); err != nil {
				return nil, nil, err
			}
			if s.db.Load() != g {
				continue
			}
		}
		g.mu.Lock()
		if g.retired {
			g.mu.Unlock()
			return nil, nil, ErrClosed
		}
		g.refs++
		g.mu.Unlock()
		return g.db, g.release, nil
	}
}

// wrap marks errors that say the database is damaged.
func wrap(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%w (%v)", ErrCorrupt, err)
		}
	}
	return err
}

// isConstraint reports whether err is a uniqueness violation.
func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

// Stats describes the store's contents.
type Stats struct {
	Files     int   // files with a record
	Docs      int   // documents in the search index
	TextBytes int64 // bytes of text the documents held when added
	DBBytes   int64 // size of the database (pages in use and free) plus its WAL
}

// Stats counts what the store holds.
func (s *Store) Stats() (Stats, error) {
	var st Stats
	db, release, err := s.acquire()
	if err != nil {
		return st, err
	}
	defer release()
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM records), (SELECT coalesce(sum(hi-lo+1), 0) FROM docruns), (SELECT coalesce(sum(bytes), 0) FROM docruns)`).
		Scan(&st.Files, &st.Docs, &st.TextBytes); err != nil {
		return st, wrap(err)
	}
	for _, p := range []string{s.path, s.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			st.DBBytes += fi.Size()
		}
	}
	return st, nil
}

// nameInfo is an interned name and the kinds of value it is used as.
type nameInfo struct {
	name  string
	kinds int
}

// Kinds of names.
const (
	kindType = 1 << iota
	kindRole
	kindProject
)

// nameID returns the id of an interned name, creating it in tx or adding
// kind to its kinds as needed; changed reports such a change (the cache
// must then be dropped after commit).
func nameID(tx *sql.Tx, name string, kind int) (id int64, changed bool, err error) {
	var kinds int
	err = tx.QueryRow(`SELECT id, kinds FROM names WHERE name=?`, name).Scan(&id, &kinds)
	if errors.Is(err, sql.ErrNoRows) {
		var res sql.Result
		if res, err = tx.Exec(`INSERT INTO names(name, kinds) VALUES(?, ?)`, name, kind); err != nil {
			return 0, false, err
		}
		id, err = res.LastInsertId()
		return id, true, err
	}
	if err == nil && kinds&kind == 0 {
		_, err = tx.Exec(`UPDATE names SET kinds = kinds | ? WHERE id=?`, kind, id)
		changed = true
	}
	return id, changed, err
}

// loadNames returns the interned names, from the cache or the database.
func (s *Store) loadNames(db *sql.DB) (map[int64]nameInfo, error) {
	s.nmu.Lock()
	ids := s.ids
	s.nmu.Unlock()
	if ids != nil {
		return ids, nil
	}
	tx, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, wrap(err)
	}
	defer tx.Rollback()
	if ids, err = readNames(tx); err != nil {
		return nil, wrap(err)
	}
	s.nmu.Lock()
	s.ids = ids
	s.nmu.Unlock()
	return ids, nil
}

// readNames reads every interned name (a few hundred at most).
func readNames(tx *sql.Tx) (map[int64]nameInfo, error) {
	rows, err := tx.Query(`SELECT id, name, kinds FROM names`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names := map[int64]nameInfo{}
	for rows.Next() {
		var id int64
		var n nameInfo
		if err := rows.Scan(&id, &n.name, &n.kinds); err != nil {
			return nil, err
		}
		names[id] = n
	}
	return names, rows.Err()
}

// forgetNames drops the name cache (after a write added names, or another
// process may have).
func (s *Store) forgetNames() {
	s.nmu.Lock()
	s.ids, s.names = nil, nil
	s.nmu.Unlock()
}

// pathOf returns the path of file id fid, read in tx when not cached.
func (s *Store) pathOf(tx *sql.Tx, fid int64) (string, error) {
	s.nmu.Lock()
	p, ok := s.paths[fid]
	s.nmu.Unlock()
	if ok {
		return p, nil
	}
	if err := tx.QueryRow(`SELECT path FROM paths WHERE id=?`, fid).Scan(&p); err != nil {
		return "", wrap(err)
	}
	s.nmu.Lock()
	if s.paths == nil {
		s.paths = map[int64]string{}
	}
	s.paths[fid] = p
	s.nmu.Unlock()
	return p, nil
}

// txStmts runs the statements of a transaction, each prepared once.
type txStmts struct {
	tx *sql.Tx
	m  map[string]*sql.Stmt // closed with the transaction
}

func (t *txStmts) stmt(q string) (*sql.Stmt, error) {
	if st, ok := t.m[q]; ok {
		return st, nil
	}
	st, err := t.tx.Prepare(q)
	if err != nil {
		return nil, err
	}
	if t.m == nil {
		t.m = map[string]*sql.Stmt{}
	}
	t.m[q] = st
	return st, nil
}

func (t *txStmts) exec(q string, args ...any) (sql.Result, error) {
	st, err := t.stmt(q)
	if err != nil {
		return nil, err
	}
	return st.Exec(args...)
}

func (t *txStmts) queryRow(q string, args ...any) *sql.Row {
	st, err := t.stmt(q)
	if err != nil {
		return t.tx.QueryRow(q, args...) // which fails as Prepare did
	}
	return st.QueryRow(args...)
}

// pathID returns the id of path, creating it when create is set (0 when absent).
func pathID(t *txStmts, path string, create bool) (int64, error) {
	var id int64
	err := t.queryRow(`SELECT id FROM paths WHERE path=?`, path).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if !create {
			return 0, nil
		}
		res, err := t.exec(`INSERT INTO paths(path) VALUES(?)`, path)
		if err != nil {
			return 0, err
		}
		return res.LastInsertId()
	}
	return id, err
}
