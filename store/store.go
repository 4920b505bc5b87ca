package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	_ "modernc.org/sqlite"             // the "sqlite" driver
)

// Engines.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Errors the caller acts on (see the package comment).
var (
	ErrFull        = errors.New("the index store's disk is full")
	ErrUnavailable = errors.New("the index store cannot be reached")
	ErrCorrupt     = errors.New("the index store is damaged")
	ErrClosed      = errors.New("the index store is closed")
)

// DB is an open index store on one engine.
type DB struct {
	engine string
	dsn    string // as given
	path   string // SQLite: the database file
	log    *slog.Logger

	mu     sync.RWMutex // read: an operation under way; write: (re)opening
	db     *sql.DB
	ident  os.FileInfo // SQLite: the file opened, to notice it deleted or replaced
	ready  bool        // the schema is current
	closed bool

	retryAt atomic.Int64 // PostgreSQL: unix ns before which a failed connection is not tried again
	backoff time.Duration
	down    atomic.Bool // the engine is unreachable (logged once)

	onReset atomic.Pointer[func()]
	hook    atomic.Pointer[Hook]
}

// Options configure Open.
type Options struct {
	Logger *slog.Logger
}

// DefaultDSN returns where piweb keeps its store by default:
// sqlite:piweb/index.db in $XDG_CACHE_HOME (when absolute), else in the
// system's user cache folder, else in ~/.cache.
func DefaultDSN() (string, error) {
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
	return SQLite + ":" + filepath.Join(dir, "piweb", "index.db"), nil
}

// ParseDSN returns the engine and its target of a store's name:
// "sqlite:PATH" (a file path, any characters allowed) or a PostgreSQL URL
// ("postgres://…" or "postgresql://…").
func ParseDSN(dsn string) (engine, target string, err error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		p := strings.TrimPrefix(dsn, "sqlite:")
		if p == "" {
			return "", "", fmt.Errorf("store %q: sqlite: needs a file path", dsn)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", "", err
		}
		return SQLite, abs, nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return Postgres, dsn, nil
	}
	return "", "", fmt.Errorf("store %q: use sqlite:PATH or postgres://USER@HOST/DB", RedactDSN(dsn))
}

// RedactDSN returns a store's name with its password hidden, for messages.
func RedactDSN(dsn string) string {
	if at := strings.LastIndexByte(dsn, '@'); at > 0 {
		if c := strings.Index(dsn, "://"); c >= 0 && c < at {
			if colon := strings.IndexByte(dsn[c+3:at], ':'); colon >= 0 {
				return dsn[:c+3+colon] + ":***" + dsn[at:]
			}
		}
	}
	return dsn
}

// Open opens the store dsn names (see ParseDSN), creating an SQLite
// store's folder and database as needed. An SQLite database that is
// damaged or not piweb's is made again, empty. A PostgreSQL server that
// cannot be reached is not an error: operations fail with ErrUnavailable
// until it can be, and the schema is brought up to date then.
func Open(ctx context.Context, dsn string, opt Options) (*DB, error) {
	engine, target, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	s := &DB{engine: engine, dsn: dsn, log: opt.Logger}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if engine == SQLite {
		s.path = target
		if err := s.openSQLite(ctx); err != nil {
			return nil, err
		}
		return s, nil
	}
	db, err := sql.Open("pgx", target)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", RedactDSN(dsn), err)
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	s.db = db
	if err := s.migrate(ctx); err != nil && !errors.Is(err, ErrUnavailable) {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Engine returns SQLite or Postgres.
func (s *DB) Engine() string { return s.engine }

// String names the store for messages (a password hidden).
func (s *DB) String() string {
	if s.engine == SQLite {
		return s.path
	}
	return RedactDSN(s.dsn)
}

// OnReset sets fn to be called after the store was found deleted,
// replaced or damaged and was made again, empty, before the operation
// that found it goes on: whatever it held must be put back. fn must not
// use the store.
func (s *DB) OnReset(fn func()) { s.onReset.Store(&fn) }

// Close closes the store; operations then fail with ErrClosed.
func (s *DB) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// Use runs fn on the database, after making sure it is the one at the
// store's place (SQLite: not deleted or replaced since it was opened, else
// it is opened again) and its schema is current (PostgreSQL: migrated once
// reachable). Errors are classified (see Classify); a damaged SQLite store
// is made again. Packages that own tables of the schema read and write
// them through Use and Tx.
func (s *DB) Use(ctx context.Context, fn func(db *sql.DB) error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	db := s.db
	err := fn(db)
	s.mu.RUnlock()
	if err == nil {
		s.up()
		return nil
	}
	err = s.Classify(err)
	switch {
	case errors.Is(err, ErrCorrupt) && s.engine == SQLite:
		s.remake(db, "it is damaged: "+err.Error())
	case errors.Is(err, errMoved):
		s.remake(db, "its file was moved or deleted")
		err = fmt.Errorf("%w: %v", ErrUnavailable, err)
	case errors.Is(err, ErrUnavailable):
		s.unreachable(err)
	}
	return err
}

// errMoved is SQLite's word that the database file is no longer where it was opened.
var errMoved = errors.New("the database file was moved or deleted")

// check makes the store usable before an operation: an SQLite file that
// is gone or is another file now is opened (made) again; a PostgreSQL
// schema not yet migrated is, unless the server was unreachable moments ago.
func (s *DB) check(ctx context.Context) error {
	s.mu.RLock()
	closed, ready, db, ident := s.closed, s.ready, s.db, s.ident
	s.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if s.engine == SQLite {
		if st, err := os.Stat(s.path); err != nil || !os.SameFile(st, ident) {
			s.remake(db, "its file is gone or was replaced")
		}
		return nil
	}
	if ready {
		return nil
	}
	if time.Now().UnixNano() < s.retryAt.Load() {
		return ErrUnavailable
	}
	return s.migrate(ctx)
}

// remake opens the SQLite store again at its place (made empty when the
// file there is damaged or gone), unless another operation already did
// (db is what the caller used), and tells the caller to put back what it
// held. Reasons other than damage leave another process's new file as it is.
func (s *DB) remake(db *sql.DB, why string) {
	s.mu.Lock()
	if s.closed || s.db != db {
		s.mu.Unlock()
		return
	}
	s.log.Warn("index store: making it again", "store", s.path, "why", why)
	s.db.Close()
	s.db = nil
	damaged := strings.HasPrefix(why, "it is damaged")
	if damaged {
		if err := removeDB(s.path); err != nil {
			s.log.Error("index store: removing the damaged database", "err", err)
		}
	}
	err := s.openSQLite(context.Background())
	s.mu.Unlock()
	if err != nil {
		s.log.Error("index store: cannot make it again", "store", s.path, "err", err)
	}
	if fn := s.onReset.Load(); fn != nil {
		(*fn)() // before the operation goes on: the caller knows the store is empty
	}
}

// unreachable notes that the engine cannot be reached: logged once, and
// connections are tried again after a growing pause.
func (s *DB) unreachable(err error) {
	if !s.down.Swap(true) {
		s.log.Warn("index store unreachable: serving from memory, searching by scanning, trying again", "store", s.String(), "err", err)
	}
	s.mu.Lock()
	s.backoff = min(max(2*s.backoff, 250*time.Millisecond), 30*time.Second)
	s.retryAt.Store(time.Now().Add(s.backoff).UnixNano())
	s.mu.Unlock()
}

// up notes that an operation succeeded: an unreachable engine is back.
func (s *DB) up() {
	if s.down.Load() && s.down.Swap(false) {
		s.log.Info("index store reachable again", "store", s.String())
		s.mu.Lock()
		s.backoff = 0
		s.mu.Unlock()
	}
}

// Ping reports whether the store can be used now.
func (s *DB) Ping(ctx context.Context) error {
	return s.Use(ctx, func(db *sql.DB) error { return db.PingContext(ctx) })
}

// removeDB deletes an SQLite database file and its WAL and shared-memory
// files; it refuses to delete anything but regular files.
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

// Tx runs fn in one transaction, committed when fn returns nil (as Use).
func (s *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.Use(ctx, func(db *sql.DB) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

// Rebind rewrites a query written with ? placeholders for the engine.
func (s *DB) Rebind(query string) string {
	if s.engine != Postgres || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// Size returns the bytes the store takes: the database file (and its
// write-ahead log) for SQLite, its tables and indexes for PostgreSQL.
func (s *DB) Size(ctx context.Context) (int64, error) {
	if s.engine == SQLite {
		var n int64
		err := s.Use(ctx, func(db *sql.DB) error {
			_, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
			return err
		})
		for _, p := range []string{s.path, s.path + "-wal"} {
			if st, serr := os.Stat(p); serr == nil {
				n += st.Size()
			}
		}
		return n, err
	}
	var n int64
	err := s.Use(ctx, func(db *sql.DB) error {
		return db.QueryRowContext(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&n)
	})
	return n, err
}

// PGText returns s as a PostgreSQL text value takes it: NUL characters
// removed (a session's strings may hold them), invalid UTF-8 replaced.
func PGText(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
}

// ValidText reports whether every one of ts is a PostgreSQL text value as it is.
func ValidText(ts ...string) bool {
	for _, t := range ts {
		if PGText(t) != t {
			return false
		}
	}
	return true
}

// UniqueViolation reports whether err is a unique constraint refusing a row.
func UniqueViolation(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// Connect opens a PostgreSQL connection of the store's own, outside its
// pool (to LISTEN on).
func (s *DB) Connect(ctx context.Context) (*pgx.Conn, error) {
	if s.engine != Postgres {
		return nil, errors.New("the store is not on PostgreSQL")
	}
	_, target, _ := ParseDSN(s.dsn)
	return pgx.Connect(ctx, target)
}
