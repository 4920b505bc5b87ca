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
	{ // 2: usage (package usage: Tables); the store starts afresh, so every
		// file's usage lands
		shared: []string{
			`DELETE FROM labels`,
			`DELETE FROM docs`,
			`DELETE FROM files`,
			// A reader's check that the store is current reads this alone.
			`CREATE INDEX files_stamp ON files (machine, path, size, mtime)`,
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
			`CREATE TABLE usage (
				file_id BIGINT NOT NULL,
				off BIGINT NOT NULL,
				pos INTEGER NOT NULL,
				entry_id TEXT NOT NULL,
				ts BIGINT NOT NULL,
				bucket BIGINT NOT NULL,
				model TEXT NOT NULL,
				turns BIGINT NOT NULL,
				input BIGINT NOT NULL,
				output BIGINT NOT NULL,
				cache_read BIGINT NOT NULL,
				cache_write BIGINT NOT NULL,
				cost DOUBLE PRECISION NOT NULL,
				errored INTEGER NOT NULL,
				aborted INTEGER NOT NULL,
				active INTEGER NOT NULL,
				copy INTEGER NOT NULL,
				resumed INTEGER NOT NULL,
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
			// Counts the transactions that changed usage: a reader keeps
			// what it read while the count stays.
			`CREATE TABLE usage_version (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)`,
		},
		// The count starts anywhere, so a store made again does not
		// count through the numbers of the one it replaces.
		sqlite: []string{`INSERT INTO doc_text (doc_text) VALUES ('delete-all')`,
			`INSERT INTO usage_version (id, n) VALUES (1, abs(random() % 1000000000000))`},
		postgres: []string{`DELETE FROM doc_text`,
			`INSERT INTO usage_version (id, n) VALUES (1, floor(random() * 1e12)::bigint)`},
	},
	{ // 3: files pushed from other machines, in chunks (package push), and
		// the login tokens (package auth)
		shared: []string{
			`CREATE TABLE push_files (
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
			`CREATE TABLE push_chunks (
				file_id BIGINT NOT NULL,
				gen BIGINT NOT NULL,
				off BIGINT NOT NULL,
				data {blob} NOT NULL,
				PRIMARY KEY (file_id, gen, off)
			)`,
			`CREATE TABLE tokens (
				id {id},
				name TEXT NOT NULL UNIQUE,
				lookup TEXT NOT NULL UNIQUE,
				hash TEXT NOT NULL,
				created BIGINT NOT NULL,
				used BIGINT NOT NULL
			)`,
		},
		postgres: []string{
			// lz4 compresses the chunks several times faster than pglz, the
			// default (twice the push's throughput); a server without it
			// (before 14, or built without) keeps pglz.
			`DO $$ BEGIN
				ALTER TABLE push_chunks ALTER COLUMN data SET COMPRESSION lz4;
			EXCEPTION WHEN feature_not_supported OR syntax_error OR invalid_parameter_value THEN NULL;
			END $$`,
		},
	},
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
	{ // 5: PostgreSQL keeps each text in its doc's row (one tuple and one
		// key a text less), the wide columns first (no padding); the
		// trigram index built once over the copied texts. SQLite finds
		// the first and last document of a file at once (a project's
		// searches walk its files' ranges: see windows)
		sqlite: []string{`CREATE INDEX docs_file ON docs (file_id, id)`},
		postgres: []string{
			`CREATE TABLE docs5 (id BIGINT GENERATED BY DEFAULT AS IDENTITY, file_id BIGINT NOT NULL, off BIGINT NOT NULL,
				ts BIGINT NOT NULL, len INTEGER NOT NULL, pos INTEGER NOT NULL, part INTEGER NOT NULL, offpath SMALLINT NOT NULL DEFAULT 0,
				entry_id TEXT NOT NULL, type TEXT NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL)`,
			`INSERT INTO docs5 (id, file_id, off, ts, len, pos, part, offpath, entry_id, type, role, text)
				SELECT d.id, d.file_id, d.off, d.ts, d.len, d.pos, d.part, d.offpath, d.entry_id, d.type, d.role, coalesce(t.text, '')
				FROM docs d LEFT JOIN doc_text t ON t.id = d.id`,
			`SELECT setval(pg_get_serial_sequence('docs5', 'id'), coalesce(max(id), 0) + 1, false) FROM docs5`,
			`DROP TABLE docs, doc_text`,
			`ALTER TABLE docs5 RENAME TO docs`,
			`ALTER TABLE docs ADD PRIMARY KEY (id), ADD UNIQUE (file_id, off, part)`,
			`CREATE INDEX docs_entry ON docs (entry_id)`,
			`CREATE INDEX docs_offpath ON docs (id) WHERE offpath = 1`,
			`CREATE INDEX IF NOT EXISTS docs_trgm ON docs USING gin (text gin_trgm_ops)`,
		},
	},
	{ // 6: PostgreSQL indexes each text's distinct words (see wordSet), not
		// the text: the same trigrams, a third of the time to build; and
		// finds each file's first and last document (see windows). Its
		// store starts afresh, filled again as on a first start (in the
		// background, pages served meanwhile): making the words here would
		// hold piweb's start for about 90 s per GB of sessions.
		postgres: []string{
			`TRUNCATE labels, docs, files, usage, usage_sums, usage_files`,
			`UPDATE usage_version SET n = n + 1`,
			`ALTER TABLE docs ADD COLUMN words TEXT NOT NULL`,
			`CREATE INDEX docs_file ON docs (file_id, id)`,
			`DROP INDEX IF EXISTS docs_trgm`,
			textIndex,
		},
	},
	{ // 7: PostgreSQL keeps no texts, only their words: a phrase narrows
		// by its words, and the caller checks it on the entry's text, read
		// from its file (as SQLite's contentless index does). The table is
		// made again without the column (a dropped column would stay in
		// every row's header), and the store starts afresh, as in 6.
		postgres: []string{
			`TRUNCATE labels, files, usage, usage_sums, usage_files`,
			`UPDATE usage_version SET n = n + 1`,
			`DROP TABLE docs`,
			`CREATE TABLE docs (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, file_id BIGINT NOT NULL, off BIGINT NOT NULL,
				ts BIGINT NOT NULL, len INTEGER NOT NULL, pos INTEGER NOT NULL, part INTEGER NOT NULL, offpath SMALLINT NOT NULL DEFAULT 0,
				entry_id TEXT NOT NULL, type TEXT NOT NULL, role TEXT NOT NULL, words TEXT NOT NULL, UNIQUE (file_id, off, part))`,
			`CREATE INDEX docs_entry ON docs (entry_id)`,
			`CREATE INDEX docs_offpath ON docs (id) WHERE offpath = 1`,
			`CREATE INDEX docs_file ON docs (file_id, id)`,
			textIndex,
		},
	},
	{ // 8: no unique key of file, offset and part (a tenth of PostgreSQL's
		// store): a save adds only the docs past its file's last one (see
		// addDocs). SQLite's key, part of the table, goes with a copy of it.
		sqlite: []string{
			`CREATE TABLE docs8 (id INTEGER PRIMARY KEY, file_id BIGINT NOT NULL, off BIGINT NOT NULL, len INTEGER NOT NULL,
				pos INTEGER NOT NULL, part INTEGER NOT NULL, entry_id TEXT NOT NULL, type TEXT NOT NULL, role TEXT NOT NULL,
				ts BIGINT NOT NULL, offpath INTEGER NOT NULL DEFAULT 0)`,
			`INSERT INTO docs8 SELECT id, file_id, off, len, pos, part, entry_id, type, role, ts, offpath FROM docs`,
			`DROP TABLE docs`,
			`ALTER TABLE docs8 RENAME TO docs`,
			`CREATE INDEX docs_entry ON docs (entry_id)`,
			`CREATE INDEX docs_offpath ON docs (id) WHERE offpath = 1`,
			`CREATE INDEX docs_file ON docs (file_id, id)`,
		},
		postgres: []string{`ALTER TABLE docs DROP CONSTRAINT IF EXISTS docs_file_id_off_part_key`},
	},
}

// textIndex is PostgreSQL's trigram index of the texts' words (see
// TextIndex).
const textIndex = `CREATE INDEX IF NOT EXISTS docs_trgm ON docs USING gin (words gin_trgm_ops)`

// trgmPath adds, for the transaction, the schema pg_trgm lives in to the
// search path (when it is not on it: a store in a schema of its own, the
// extension in public), so that its operator class is found.
const trgmPath = `SELECT set_config('search_path', current_setting('search_path') || ', ' || quote_ident(n.nspname), true)
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`

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
		if err = s.Classify(err); errors.Is(err, ErrUnavailable) {
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
	if version > 0 && version < len(migrations) { // (a step may copy a table: seconds per GB)
		s.log.Info("index store: bringing its schema up to date, once", "store", s.String(), "from", version, "to", len(migrations))
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
		if _, err := tx.ExecContext(ctx, s.Rebind(`INSERT INTO schema_version (version) VALUES (?)`), v+1); err != nil {
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
