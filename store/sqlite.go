package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// openSQLite opens (or makes) the SQLite store at s.path, with s.mu held
// (or s not shared yet). A database that is damaged, not SQLite, or not
// piweb's (another program's, or the store of an older piweb) is removed
// and made again: the store is disposable.
func (s *DB) openSQLite(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("index store: %w", err)
	}
	if st, err := os.Lstat(s.path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("index store %s: not a regular file", s.path)
	}
	err := s.openFile(ctx)
	if err == nil {
		return nil
	}
	if errors.Is(err, errNewer) {
		return err
	}
	s.log.Warn("index store: starting afresh", "store", s.path, "why", err)
	if rerr := removeDB(s.path); rerr != nil {
		return fmt.Errorf("index store %s: %v; removing it: %w", s.path, err, rerr)
	}
	if err := s.openFile(ctx); err != nil {
		return fmt.Errorf("index store %s: %w", s.path, err)
	}
	return nil
}

// openFile opens the database file and brings its schema up to date.
func (s *DB) openFile(ctx context.Context) error {
	db, err := sql.Open("sqlite", sqliteURI(s.path))
	if err != nil {
		return err
	}
	// One writer at a time is SQLite's rule; readers run beside it (WAL).
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return err
	}
	st, err := os.Stat(s.path)
	if err != nil {
		db.Close()
		return err
	}
	s.db, s.ident = db, st
	if err := s.migrateLocked(ctx); err != nil {
		db.Close()
		s.db = nil
		return err
	}
	return nil
}

// sqliteURI is the URI modernc.org/sqlite opens path with: every byte of
// the path that is not plainly safe is percent-encoded, so a '?', '#', '%'
// or space in it stays part of the path (never a parameter or fragment).
func sqliteURI(path string) string {
	var b strings.Builder
	b.WriteString("file:")
	for i := 0; i < len(path); i++ {
		c := path[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	b.WriteString("?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)&_pragma=cache_size(-8192)")
	return b.String()
}

// Classify wraps err in the kind the caller acts on: ErrFull,
// ErrCorrupt, ErrUnavailable, errMoved, or leaves it as it is.
func (s *DB) Classify(err error) error {
	if err == nil || errors.Is(err, ErrClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("%w: %v", ErrFull, err)
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		case sqlite3.SQLITE_READONLY:
			if se.Code() == sqlite3.SQLITE_READONLY_DBMOVED {
				return fmt.Errorf("%w: %v", errMoved, err)
			}
		}
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "53100": // disk_full
			return fmt.Errorf("%w: %v", ErrFull, err)
		case pe.Code == "XX001" || pe.Code == "XX002": // data_corrupted, index_corrupted
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"), pe.Code == "53300": // connection, shutdown, too many connections
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return err
	}
	if s.engine == Postgres && connectionError(err) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return err
}

// connectionError reports whether err says the server could not be
// reached or the connection broke, rather than answering.
func connectionError(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || pgconn.SafeToRetry(err) ||
		strings.Contains(err.Error(), "conn closed")
}
