// Package storetest gives tests the index store's engines: SQLite in a
// temporary folder always, and PostgreSQL when PIWEB_TEST_POSTGRES names a
// server (.ci/postgres starts a throwaway one), each test in a schema of
// its own. Without a server the PostgreSQL half is skipped, said once in a
// line on the terminal; PIWEB_REQUIRE_POSTGRES=1 (CI) makes that a failure.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/piweb/piweb/internal/oracle"
)

// Engine is one engine to test with: its name and a DSN for a new, empty store.
type Engine struct {
	Name string
	DSN  string
}

// Engines returns the engines to run a test with, each with a new empty store.
func Engines(t testing.TB) []Engine {
	t.Helper()
	out := []Engine{{Name: "sqlite", DSN: "sqlite:" + filepath.Join(t.TempDir(), "index.db")}}
	if dsn, ok := Postgres(t); ok {
		out = append(out, Engine{Name: "postgres", DSN: dsn})
	}
	return out
}

// Postgres returns the DSN of a new, empty schema on the test server, or
// false (the test's PostgreSQL half is skipped) when there is none.
func Postgres(t testing.TB) (string, bool) {
	t.Helper()
	base := os.Getenv("PIWEB_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("PIWEB_REQUIRE_POSTGRES") == "1" {
			t.Fatal("PIWEB_TEST_POSTGRES is not set and PIWEB_REQUIRE_POSTGRES=1")
		}
		oracle.Announce("postgres", "piweb: the PostgreSQL tests were skipped: set PIWEB_TEST_POSTGRES=postgres://… (.ci/postgres starts a throwaway server)")
		return "", false
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b [6]byte
	rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	// pg_trgm once, in public, which every test's search_path ends with.
	if _, err := db.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`); err != nil {
		// Two packages' tests may race to create it: the loser sees it made.
		var n int
		if db.QueryRowContext(ctx, `SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'`).Scan(&n); n == 0 {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err == nil {
			db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
			db.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String(), true
}

// Kept returns the DSN of a schema named name on the test server, made if
// missing and never dropped (benchmarks keep a built store between runs),
// or false when there is no server.
func Kept(t testing.TB, name string) (string, bool) {
	t.Helper()
	base := os.Getenv("PIWEB_TEST_POSTGRES")
	if base == "" {
		return "", false
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	db.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`)
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+name); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name+",public")
	u.RawQuery = q.Encode()
	return u.String(), true
}
