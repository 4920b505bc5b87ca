package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// migration is a change of the schema, the same on both engines: shared
// statements (with {id} and {blob} written per engine) and, where the
// engines differ (the full-text index), statements of each; or, for a
// step, the engines whose index starts afresh there (afresh: as tables
// makes it, after dropIndex).
type migration struct {
	shared   []string
	sqlite   []string
	postgres []string
	afresh   []string
}

// schemaBase is the first version steps go on from. A store of an older
// one starts afresh: its index is dropped and made again as tables makes
// it (filled again as on a first start), and its pushes and tokens are
// kept. (10: the texts are folded anew, search.Normalize's ς as σ and ſ
// as s.)
const schemaBase = 10

// steps are the changes of the schema after schemaBase, in order; a
// store's version is schemaBase and how many it has run. Never edit one
// that shipped: add the next.
var steps = []migration{
	// 11: PostgreSQL keeps the words of runs of docs (texts), not of each
	// doc, so its index starts afresh; SQLite's is as it was.
	{afresh: []string{Postgres}},
	// 12: each label's row has a checksum (labelSum), which no SQL can
	// write for the rows there are: both engines' indexes start afresh.
	{afresh: []string{SQLite, Postgres}},
}

// SchemaVersion is the version of the schema this piweb writes.
var SchemaVersion = schemaBase + len(steps)

// tables make the index of the session files as this piweb keeps it
// (files, docs, labels, usage: package usage's Tables), made in a new
// store, in one older than schemaBase, and where a step's afresh says,
// and the tables kept through every upgrade (IF NOT EXISTS): pushed
// files in chunks (package push) and login tokens (package auth).
var tables = migration{
	shared: []string{
		// Each file's row: its stamp and list row, where its entries lie
		// (places), the numbers of its first and last docs (lo, hi: a
		// project's ranges, a save's last line), and their checksum.
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
			lo BIGINT NOT NULL DEFAULT 0,
			hi BIGINT NOT NULL DEFAULT 0,
			UNIQUE (machine, path)
		)`,
		// A reader's check that the store is current reads this alone.
		`CREATE INDEX files_stamp ON files (machine, path, size, mtime)`,
		`CREATE TABLE labels (
			file_id BIGINT NOT NULL,
			entry_id TEXT NOT NULL,
			label TEXT NOT NULL,
			ts BIGINT NOT NULL,
			pos INTEGER NOT NULL,
			off BIGINT NOT NULL,
			len INTEGER NOT NULL,
			checksum BIGINT NOT NULL,
			PRIMARY KEY (file_id, entry_id)
		)`,
		`CREATE TABLE usage_files (
			file_id BIGINT PRIMARY KEY,
			machine TEXT NOT NULL,
			session TEXT NOT NULL,
			session_id TEXT NOT NULL,
			project TEXT NOT NULL,
			path TEXT NOT NULL,
			name TEXT NOT NULL,
			parent_path TEXT NOT NULL,
			parent_name TEXT NOT NULL,
			parent_id BIGINT NOT NULL
		)`,
		`CREATE INDEX usage_files_path ON usage_files (machine, path)`,
		`CREATE INDEX usage_files_name ON usage_files (machine, name)`,
		`CREATE INDEX usage_files_parent_path ON usage_files (machine, parent_path)`,
		`CREATE INDEX usage_files_parent_name ON usage_files (machine, parent_name)`,
		`CREATE INDEX usage_files_parent ON usage_files (parent_id)`,
		`CREATE INDEX usage_files_session ON usage_files (session)`,
		// The wide columns first (no padding), the flags (0 or 1) narrow.
		`CREATE TABLE usage (
			file_id BIGINT NOT NULL,
			off BIGINT NOT NULL,
			ts BIGINT NOT NULL,
			bucket BIGINT NOT NULL,
			turns BIGINT NOT NULL,
			input BIGINT NOT NULL,
			output BIGINT NOT NULL,
			cache_read BIGINT NOT NULL,
			cache_write BIGINT NOT NULL,
			cost DOUBLE PRECISION NOT NULL,
			pos INTEGER NOT NULL,
			errored SMALLINT NOT NULL,
			aborted SMALLINT NOT NULL,
			active SMALLINT NOT NULL,
			copy SMALLINT NOT NULL,
			resumed SMALLINT NOT NULL,
			entry_id TEXT NOT NULL,
			model TEXT NOT NULL,
			PRIMARY KEY (file_id, off)
		)`,
		`CREATE INDEX usage_ref ON usage (entry_id, ts)`,
		`CREATE INDEX usage_key ON usage (file_id, bucket, model)`,
		`CREATE TABLE usage_sums (
			file_id BIGINT NOT NULL,
			bucket BIGINT NOT NULL,
			model TEXT NOT NULL,
			turns BIGINT NOT NULL,
			input BIGINT NOT NULL,
			output BIGINT NOT NULL,
			cache_read BIGINT NOT NULL,
			cache_write BIGINT NOT NULL,
			cost DOUBLE PRECISION NOT NULL,
			ab_turns BIGINT NOT NULL,
			ab_input BIGINT NOT NULL,
			ab_output BIGINT NOT NULL,
			ab_cache_read BIGINT NOT NULL,
			ab_cache_write BIGINT NOT NULL,
			ab_cost DOUBLE PRECISION NOT NULL,
			errors BIGINT NOT NULL,
			aborted BIGINT NOT NULL,
			PRIMARY KEY (file_id, bucket, model)
		)`,
		`CREATE INDEX usage_sums_bucket ON usage_sums (bucket)`,
		// Counts the transactions that changed usage: a reader keeps what
		// it read while the count stays. It starts anywhere, so a store
		// made again does not count through the numbers of the one it
		// replaces.
		`CREATE TABLE usage_version (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS push_files (
			id {id},
			machine TEXT NOT NULL,
			path TEXT NOT NULL,
			gen BIGINT NOT NULL,
			consumed BIGINT NOT NULL,
			sent BIGINT NOT NULL,
			head BIGINT NOT NULL,
			tail BIGINT NOT NULL,
			redact TEXT NOT NULL,
			pushed BIGINT NOT NULL,
			UNIQUE (machine, path)
		)`,
		`CREATE TABLE IF NOT EXISTS push_chunks (
			file_id BIGINT NOT NULL,
			gen BIGINT NOT NULL,
			off BIGINT NOT NULL,
			data {blob} NOT NULL,
			PRIMARY KEY (file_id, gen, off)
		)`,
		`CREATE TABLE IF NOT EXISTS tokens (
			id {id},
			name TEXT NOT NULL UNIQUE,
			lookup TEXT NOT NULL UNIQUE,
			hash TEXT NOT NULL,
			created BIGINT NOT NULL,
			used BIGINT NOT NULL
		)`,
	},
	// Each searchable piece of an entry (a doc); neither engine keeps its
	// text. SQLite indexes it in a contentless FTS5 table without
	// positions (small: every hit is checked on the real text anyway).
	sqlite: []string{
		`CREATE TABLE docs (id INTEGER PRIMARY KEY, file_id BIGINT NOT NULL, off BIGINT NOT NULL, len INTEGER NOT NULL,
			pos INTEGER NOT NULL, part INTEGER NOT NULL, entry_id TEXT NOT NULL, role TEXT NOT NULL, ts BIGINT NOT NULL,
			offpath INTEGER NOT NULL DEFAULT 0)`,
		`CREATE INDEX docs_entry ON docs (entry_id)`,
		`CREATE INDEX docs_offpath ON docs (id) WHERE offpath = 1`,
		`CREATE INDEX docs_file ON docs (file_id)`,
		`CREATE VIRTUAL TABLE doc_text USING fts5(text, content='', contentless_delete=1, tokenize='trigram', detail=none)`,
		`INSERT INTO usage_version (id, n) VALUES (1, abs(random() % 1000000000000))`,
	},
	// PostgreSQL keeps the distinct words (see addWords) of runs of up to
	// textDocs docs of one file numbered within textSpan (texts: the run's
	// first and last numbers, lo and hi), under a trigram index (made once
	// they are in after a first build: TextIndex): far fewer rows than
	// docs, and a run's docs share most of their words. A doc's run is
	// the one whose hi is its id and its run. The wide columns first (no
	// padding); docs_file holds each file once for all its docs.
	// lz4 compresses the pushed chunks several times faster than pglz, the
	// default (twice the push's throughput); a server without it keeps
	// pglz.
	postgres: []string{
		`CREATE EXTENSION IF NOT EXISTS pg_trgm`,
		`CREATE TABLE docs (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, off BIGINT NOT NULL, ts BIGINT NOT NULL,
			file_id INTEGER NOT NULL, len INTEGER NOT NULL, pos INTEGER NOT NULL, part INTEGER NOT NULL,
			offpath SMALLINT NOT NULL DEFAULT 0, run SMALLINT NOT NULL, entry_id TEXT NOT NULL, role TEXT NOT NULL)`,
		`CREATE INDEX docs_entry ON docs (entry_id)`,
		`CREATE INDEX docs_offpath ON docs (id) WHERE offpath = 1`,
		`CREATE INDEX docs_file ON docs (file_id)`,
		`CREATE TABLE texts (hi BIGINT PRIMARY KEY, lo BIGINT NOT NULL, words TEXT NOT NULL)`,
		textIndex,
		`INSERT INTO usage_version (id, n) VALUES (1, floor(random() * 1e12)::bigint)`,
		`DO $$ BEGIN
			ALTER TABLE push_chunks ALTER COLUMN data SET COMPRESSION lz4;
		EXCEPTION WHEN feature_not_supported OR syntax_error OR invalid_parameter_value THEN NULL;
		END $$`,
	},
}

// indexTables are the tables of the index, dropped when an older schema
// is brought up to date (whatever it held: old stores had others).
var indexTables = []string{"docs", "doc_text", "texts", "files", "labels", "usage", "usage_sums", "usage_files", "usage_version"}

// dropIndex returns the statements that drop indexTables: PostgreSQL's
// in the store's own schema only (a table of that name further along the
// search path is another store's).
func (s *DB) dropIndex() []string {
	if s.engine == Postgres {
		return []string{`DO $$ DECLARE t text; BEGIN FOREACH t IN ARRAY ARRAY['` + strings.Join(indexTables, "', '") + `'] LOOP
			EXECUTE format('DROP TABLE IF EXISTS %I.%I', current_schema(), t); END LOOP; END $$`}
	}
	var out []string
	for _, t := range indexTables {
		out = append(out, `DROP TABLE IF EXISTS `+t)
	}
	return out
}

// textIndex is PostgreSQL's trigram index of the texts' words (see
// TextIndex).
const textIndex = `CREATE INDEX IF NOT EXISTS texts_trgm ON texts USING gin (words gin_trgm_ops)`

// trgmPath adds, for the transaction, the schema pg_trgm lives in to the
// search path (when it is not on it: a store in a schema of its own, the
// extension in public), so that its operator class is found.
const trgmPath = `SELECT set_config('search_path', current_setting('search_path') || ', ' || quote_ident(n.nspname), true)
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`

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
		if err = s.Classify(err); errors.Is(err, ErrUnavailable) {
			s.mu.Unlock()
			s.unreachable(err)
			s.mu.Lock()
		}
	}
	return err
}

// migrateLocked brings the store's schema up to date, with s.mu held: an
// empty store gets tables, an older one its index made again (tables,
// after dropIndex), then the steps it has not run, each in a transaction
// of its own. Two processes starting at once on one PostgreSQL store take
// turns (an advisory lock, of the store's schema: stores in other schemas
// of the database do not wait).
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
	if version > SchemaVersion {
		return fmt.Errorf("%w (schema %d; this one knows %d): run the newer piweb, or point --store elsewhere", errNewer, version, SchemaVersion)
	}
	if version > 0 && version < SchemaVersion {
		s.log.Info("index store: bringing its schema up to date, once", "store", s.String(), "from", version, "to", SchemaVersion,
			"afresh", version < schemaBase || slices.ContainsFunc(steps[version-schemaBase:], func(m migration) bool { return slices.Contains(m.afresh, s.engine) }))
	}
	made := false // tables ran: a later step's afresh finds the index as it makes it
	for v := version; v < SchemaVersion; {
		m, next := tables, schemaBase
		if v >= schemaBase {
			m, next = steps[v-schemaBase], v+1
		}
		if v < schemaBase || slices.Contains(m.afresh, s.engine) { // the index is made here (again, in a store that had one)
			m = migration{}
			if !made {
				m = tables
				if v > 0 {
					m.shared = append(s.dropIndex(), m.shared...)
				}
			}
			made = true
		}
		if err := s.run(ctx, conn, m, next); err != nil {
			return err
		}
		v = next
	}
	if made && version > 0 && s.engine == SQLite {
		// The old index's pages are free now, but the file keeps them: give
		// them back (a store as large as the files, written again empty).
		if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
			s.log.Warn("index store: cannot give back the old index's room", "store", s.path, "err", err)
		}
	}
	s.ready = true
	return nil
}

// run runs migration m in one transaction, and records version.
func (s *DB) run(ctx context.Context, conn *sql.Conn, m migration, version int) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, stmt := range s.statements(m) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			tx.Rollback()
			return fmt.Errorf("schema %d: %w", version, err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.Rebind(`INSERT INTO schema_version (version) VALUES (?)`), version); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// version returns the store's schema version (0: empty), creating the
// table that records it in an empty database. An SQLite database with
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

// statements returns a migration's statements for the engine
// (PostgreSQL's after trgmPath).
func (s *DB) statements(m migration) []string {
	id, blob := "INTEGER PRIMARY KEY", "BLOB"
	own := m.sqlite
	var out []string
	if s.engine == Postgres {
		id, blob = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "BYTEA"
		own = m.postgres
		out = append(out, trgmPath)
	}
	for _, st := range m.shared {
		out = append(out, strings.NewReplacer("{id}", id, "{blob}", blob).Replace(st))
	}
	return append(out, own...)
}
