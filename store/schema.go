package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// migration is a change of the schema: for a step, the engines whose
// index starts afresh there (as tables makes it, after dropIndex); for
// tables, its statements (schema/shared.sql, then the engine's own).
type migration struct {
	afresh       []string
	tables, drop bool // drop: dropIndex first
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

// tables make the index of the session files as this piweb keeps it,
// and the tables kept through every upgrade (see schema/shared.sql).
var tables = migration{tables: true}

//go:embed schema/*.sql
var schemaFiles embed.FS

// indexTables are the tables of the index, dropped when an older schema
// is brought up to date (whatever it held: old stores had others).
var indexTables = []string{"docs", "doc_text", "texts", "files", "labels", "usage", "usage_sums", "usage_files", "usage_version"}

// dropIndex returns the statements that drop indexTables: PostgreSQL's
// in the store's own schema only (a table of that name further along the
// search path is another store's).
func (s *DB) dropIndex() string {
	if s.engine == Postgres {
		return `DO $$ DECLARE t text; BEGIN FOREACH t IN ARRAY ARRAY['` + strings.Join(indexTables, "', '") + `'] LOOP
			EXECUTE format('DROP TABLE IF EXISTS %I.%I', current_schema(), t); END LOOP; END $$;
`
	}
	return "DROP TABLE IF EXISTS " + strings.Join(indexTables, ";\nDROP TABLE IF EXISTS ") + ";\n"
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
			m = migration{tables: !made, drop: !made && v > 0}
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
	if q := s.statements(m); q != "" {
		if _, err := tx.ExecContext(ctx, q); err != nil {
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

// statements returns a migration's statements for the engine, in one
// text (PostgreSQL's after trgmPath, and its trigram index last).
func (s *DB) statements(m migration) string {
	if !m.tables {
		return ""
	}
	id, blob, out := "INTEGER PRIMARY KEY", "BLOB", ""
	if s.engine == Postgres {
		id, blob, out = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "BYTEA", trgmPath+";\n"
	}
	if m.drop {
		out += s.dropIndex()
	}
	shared, _ := schemaFiles.ReadFile("schema/shared.sql")
	own, _ := schemaFiles.ReadFile("schema/" + s.engine + ".sql")
	out += strings.NewReplacer("{id}", id, "{blob}", blob).Replace(string(shared)) + string(own)
	if s.engine == Postgres {
		out += textIndex + ";\n" // one definition, TextIndex's
	}
	return out
}
