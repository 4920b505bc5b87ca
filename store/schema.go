package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// migration is one numbered step of the schema, the same on both engines:
// shared statements (with {id} and {blob} written per engine) and, where
// the engines differ (the full-text index), statements of each.
type migration struct {
	shared   []string
	sqlite   []string
	postgres []string
}

// migrations are the schema's steps, in order; the store's version is how
// many it has run. Never edit one that shipped: add the next.
var migrations = []migration{
	{ // 1: files, their searchable texts, labels
		shared: []string{
			`CREATE TABLE files (
				id {id},
				machine TEXT NOT NULL,
				path TEXT NOT NULL,
				size BIGINT NOT NULL,
				mtime BIGINT NOT NULL,
				head BIGINT NOT NULL,
				tail BIGINT NOT NULL,
				docs INTEGER NOT NULL,
				session_id TEXT NOT NULL,
				parent TEXT NOT NULL,
				project TEXT NOT NULL,
				modified BIGINT NOT NULL,
				meta TEXT NOT NULL,
				places {blob},
				problem TEXT NOT NULL,
				checksum BIGINT NOT NULL,
				UNIQUE (machine, path)
			)`,
			`CREATE TABLE docs (
				id {id},
				file_id BIGINT NOT NULL,
				off BIGINT NOT NULL,
				len INTEGER NOT NULL,
				pos INTEGER NOT NULL,
				part INTEGER NOT NULL,
				entry_id TEXT NOT NULL,
				type TEXT NOT NULL,
				role TEXT NOT NULL,
				ts BIGINT NOT NULL,
				UNIQUE (file_id, off, part)
			)`,
			`CREATE INDEX docs_entry ON docs (entry_id)`,
			`CREATE TABLE labels (
				file_id BIGINT NOT NULL,
				entry_id TEXT NOT NULL,
				label TEXT NOT NULL,
				ts BIGINT NOT NULL,
				pos INTEGER NOT NULL,
				off BIGINT NOT NULL,
				len INTEGER NOT NULL,
				PRIMARY KEY (file_id, entry_id)
			)`,
		},
		sqlite: []string{
			// Contentless (the texts stay in the session files) and without
			// positions: small; every hit is checked on the real text anyway.
			`CREATE VIRTUAL TABLE doc_text USING fts5(text, content='', contentless_delete=1, tokenize='trigram', detail=none)`,
		},
		postgres: []string{
			`CREATE EXTENSION IF NOT EXISTS pg_trgm`,
			`CREATE TABLE doc_text (id BIGINT PRIMARY KEY, text TEXT NOT NULL)`,
			`CREATE INDEX doc_text_trgm ON doc_text USING gin (text gin_trgm_ops)`,
		},
	},
	usageTables, // 2 (usage.go)
	pushTables,  // 3 (push.go)
	{ // 4: whether each text's entry is off its file's active path (as the
		// file's places say), so that is:offpath narrows in the engine
		shared: []string{`ALTER TABLE docs ADD COLUMN offpath INTEGER NOT NULL DEFAULT 0`},
		sqlite: []string{
			`UPDATE docs SET offpath = 1 WHERE (SELECT ((instr('0123456789ABCDEF', substr(h, 1, 1)) - 1) * 16 +
				instr('0123456789ABCDEF', substr(h, 2, 1)) - 1) >> (2 * (docs.pos % 4)) & 3
				FROM (SELECT hex(substr(places, docs.pos / 4 + 1, 1)) AS h FROM files WHERE files.id = docs.file_id)) = 0`,
			`CREATE INDEX docs_offpath ON docs (id) WHERE offpath = 1`,
		},
		postgres: []string{
			`UPDATE docs d SET offpath = 1 FROM files f WHERE f.id = d.file_id AND CASE WHEN d.pos / 4 < length(f.places)
				THEN (get_byte(f.places, d.pos / 4) >> (2 * (d.pos % 4))) & 3 ELSE 0 END = 0`,
			`CREATE INDEX docs_offpath ON docs (id) WHERE offpath = 1`,
		},
	},
}

// SchemaVersion is the version of the schema this piweb writes.
var SchemaVersion = len(migrations)

// errNewer says the store was made by a newer piweb: it is left alone.
var errNewer = errors.New("the index store was made by a newer piweb")

// migrate brings a PostgreSQL schema up to date (once reachable).
func (s *DB) migrate(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready {
		return nil
	}
	err := s.migrateLocked(ctx)
	if err != nil {
		if err = s.classify(err); errors.Is(err, ErrUnavailable) {
			s.mu.Unlock()
			s.unreachable(err)
			s.mu.Lock()
		}
	}
	return err
}

// migrateLocked runs the migrations the store has not run, each in a
// transaction of its own, with s.mu held. Two processes starting at once
// on one PostgreSQL store take turns (an advisory lock, of the store's
// schema: stores in other schemas of the database do not wait).
func (s *DB) migrateLocked(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if s.engine == Postgres {
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(7306216, hashtext(coalesce(current_schema(), '')))`); err != nil {
			return err
		}
		defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(7306216, hashtext(coalesce(current_schema(), '')))`)
	}
	version, err := s.version(ctx, conn)
	if err != nil {
		return err
	}
	if version > len(migrations) {
		return fmt.Errorf("%w (schema %d; this one knows %d): run the newer piweb, or point --store elsewhere", errNewer, version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, stmt := range s.statements(migrations[v]) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				tx.Rollback()
				return fmt.Errorf("schema step %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_version (version) VALUES (?)`), v+1); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	s.ready = true
	return nil
}

// version returns how many migrations the store has run, creating the
// table that counts them in an empty database. An SQLite database with
// other tables but no such count is not piweb's: an error (Open starts
// afresh); so is a PostgreSQL one, which is left alone.
func (s *DB) version(ctx context.Context, conn *sql.Conn) (int, error) {
	var exists, others int
	var err error
	if s.engine == SQLite {
		err = conn.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'),
			(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name <> 'schema_version')`).Scan(&exists, &others)
	} else {
		err = conn.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_version'),
			(SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename IN ('files', 'docs', 'doc_text', 'labels'))`).Scan(&exists, &others)
	}
	if err != nil {
		return 0, err
	}
	if exists == 0 {
		if others > 0 {
			return 0, fmt.Errorf("the database holds tables that are not piweb's store's")
		}
		if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY)`); err != nil {
			return 0, err
		}
		return 0, nil
	}
	var v sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT max(version) FROM schema_version`).Scan(&v); err != nil {
		return 0, err
	}
	return int(v.Int64), nil
}

// statements returns a migration's statements for the engine.
func (s *DB) statements(m migration) []string {
	id, blob := "INTEGER PRIMARY KEY", "BLOB"
	own := m.sqlite
	if s.engine == Postgres {
		id, blob = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "BYTEA"
		own = m.postgres
	}
	var out []string
	for _, st := range m.shared {
		out = append(out, strings.NewReplacer("{id}", id, "{blob}", blob).Replace(st))
	}
	return append(out, own...)
}
