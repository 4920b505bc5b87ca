package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/internal/storetest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/search"
	"github.com/piweb/piweb/store"
)

// searchOf runs one search and fails the test on an error: no failure of
// the store may reach a search as an error.
func searchOf(t *testing.T, c *Catalog, query string) Result {
	t.Helper()
	q, err := search.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Search(context.Background(), q, 50, "")
	if err != nil {
		t.Fatalf("%q: %v", query, err)
	}
	return res
}

// noSilentMiss fails when a search finds fewer hits than the files hold
// and does not say it is partial.
func noSilentMiss(t *testing.T, c *Catalog, query string, want int) Result {
	t.Helper()
	res := searchOf(t, c, query)
	if len(res.Hits) < want && !res.Partial {
		t.Errorf("%q: %d hits of %d and not partial", query, len(res.Hits), want)
	}
	return res
}

// TestDiskFull: with the store's disk full, piweb keeps serving, searches
// say partial rather than miss files silently, and once there is room
// again every file is saved, what pi appended meanwhile included, with no
// restart. It needs a small file system of its own: .ci/run mounts a tmpfs
// and names it in PIWEB_TEST_TMPFS.
func TestDiskFull(t *testing.T) {
	dir := os.Getenv("PIWEB_TEST_TMPFS")
	if dir == "" {
		t.Skip("PIWEB_TEST_TMPFS names no small file system of its own (.ci/run mounts one)")
	}
	dir, err := os.MkdirTemp(dir, "full-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	root, files := genRoot(t, 6, 300)
	st := openStore(t, "sqlite:"+filepath.Join(dir, "index.db"))
	// Fill the disk, leaving the new store no room to grow.
	filler := filepath.Join(dir, "filler")
	fill(t, filler)
	var log logs
	c, stop := startFull(t, root, st, slog.New(slog.NewTextHandler(&log, nil)))
	defer stop()
	if n := len(c.lib.List()); n != 6 {
		t.Fatalf("with the disk full, %d sessions listed", n)
	}
	res := noSilentMiss(t, c, "the", 1)
	if !res.Partial {
		t.Errorf("with nothing saved, a search is not partial: %d hits", len(res.Hits))
	}
	// pi appends meanwhile.
	sessiontest.Append(t, files[2], sessiontest.Lines(sessiontest.User("late", "", 99, "latecomer arrives while full")))
	c.lib.Refresh(files[2])
	noSilentMiss(t, c, "latecomer", 1)
	// Room again: everything is saved, without a restart.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	wait(t, c)
	res = searchOf(t, c, "latecomer")
	if len(res.Hits) != 1 || res.Partial || res.Scanned {
		t.Errorf("once there is room: %d hits, partial %v, scanned %v", len(res.Hits), res.Partial, res.Scanned)
	}
	scanned, sstop := start(t, root, nil, nil)
	defer sstop()
	if a, b := allHits(t, c, "the"), allHits(t, scanned, "the"); !slices.Equal(a, b) {
		t.Errorf("once there is room the store finds %d hits, a scan %d", len(a), len(b))
	}
	if n := strings.Count(log.String(), "index store failed"); n != 1 {
		t.Errorf("the failure was logged %d times:\n%s", n, log.String())
	}
}

// fill writes path until its file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !strings.Contains(err.Error(), syscall.ENOSPC.Error()) {
				t.Fatal(err)
			}
			break
		}
	}
	// The last bytes, one at a time: nothing is left.
	for {
		if _, err := f.Write(buf[:1]); err != nil {
			return
		}
	}
}

// startFull starts a catalog whose store cannot save: it does not wait for
// the store to catch up, only for the library and the first attempt.
func startFull(t *testing.T, root string, st Store, log *slog.Logger) (*Catalog, func()) {
	t.Helper()
	c := New(library.NewLibrary(root), Options{Store: st, Logger: log, PageTime: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-c.Ready()
	<-c.SearchReady()
	return c, func() { cancel(); <-done }
}

// TestCacheDeleted: the store's folder removed while piweb runs: searches
// never fail, the store is made again and filled, and meanwhile searches
// say partial.
func TestCacheDeleted(t *testing.T) {
	root, _ := genRoot(t, 5, 200)
	dir := filepath.Join(t.TempDir(), "cache")
	c, stop := start(t, root, openStore(t, "sqlite:"+filepath.Join(dir, "index.db")), nil)
	defer stop()
	want := len(allHits(t, c, "return"))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	res := noSilentMiss(t, c, "return", min(want, 50))
	if len(res.Hits) == 0 && !res.Partial {
		t.Error("no hits, not partial, right after the store went")
	}
	wait(t, c)
	if got := len(allHits(t, c, "return")); got != want {
		t.Errorf("after the store was made again: %d hits, want %d", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.db")); err != nil {
		t.Errorf("the store was not made again: %v", err)
	}
}

// TestDamagedStore: piweb starts on a store whose file was damaged (every
// page but the first, or only its second half, which opening it does not
// read): searches never answer "no hits" without saying partial, and the
// store is made again and filled.
func TestDamagedStore(t *testing.T) {
	for _, from := range []float64{0, 0.5} {
		t.Run(fmt.Sprint(from), func(t *testing.T) { testDamaged(t, from) })
	}
}

func testDamaged(t *testing.T, from float64) {
	root, _ := genRoot(t, 5, 300)
	db := filepath.Join(t.TempDir(), "index.db")
	st, err := store.Open(context.Background(), "sqlite:"+db, store.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	c, stop := start(t, root, st, nil)
	want := len(allHits(t, c, "return"))
	stop()
	st.Close()
	if want == 0 {
		t.Fatal("nothing to find")
	}
	damage(t, db, from)
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	st2 := openStore(t, "sqlite:"+db)
	c2 := New(library.NewLibrary(root), Options{Store: st2, Logger: quiet(), PageTime: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c2.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-c2.Ready()
	for range 3 {
		res := noSilentMiss(t, c2, "return", min(want, 50))
		if len(res.Hits) == 0 && !res.Partial {
			t.Error("no hits, not partial, from a damaged store")
		}
	}
	wait(t, c2)
	if got := len(allHits(t, c2, "return")); got != want {
		t.Errorf("after the store was made again: %d hits, want %d", got, want)
	}
}

// damage overwrites a file's bytes with garbage, from the given share of
// its size on, but never its first 4 KiB.
func damage(t *testing.T, path string, from float64) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil || st.Size() <= 4096 {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := []byte(strings.Repeat("\xde\xad\xbe\xef", 1024))
	for off := max(4096, int64(float64(st.Size())*from)/4096*4096); off < st.Size(); off += int64(len(junk)) {
		f.WriteAt(junk, off)
	}
}

// TestPostgresDown: PostgreSQL gone, restarted, or not answering: pages
// serve (the list is in memory), searches scan the files meanwhile,
// appends wait, and once it is back piweb catches up; the log says it
// once, not per request.
func TestPostgresDown(t *testing.T) {
	dsn, ok := storetest.Postgres(t)
	if !ok {
		t.Skip("no PostgreSQL")
	}
	proxy, via := storetest.NewProxy(t, dsn)
	root, files := genRoot(t, 4, 100)
	var log logs
	logger := slog.New(slog.NewTextHandler(&log, nil))
	st, err := store.Open(context.Background(), via, store.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, stop := start(t, root, st, logger)
	defer stop()
	want := allHits(t, c, "return")

	proxy.Stop() // down
	for range 3 {
		res := searchOf(t, c, "return")
		if !res.Scanned || len(res.Hits) != min(len(want), 50) {
			t.Errorf("with PostgreSQL down: %d hits, scanned %v", len(res.Hits), res.Scanned)
		}
	}
	if len(c.lib.List()) != 4 {
		t.Error("the list is gone with the store")
	}
	sessiontest.Append(t, files[1], sessiontest.Lines(sessiontest.User("pgw", "", 99, "whiledown appended")))
	c.lib.Refresh(files[1])
	if res := searchOf(t, c, "whiledown"); len(res.Hits) != 1 {
		t.Errorf("an append while PostgreSQL is down is not found by scanning: %d hits", len(res.Hits))
	}
	proxy.Start() // back (a restart cut every connection)
	wait(t, c)
	res := searchOf(t, c, "whiledown")
	if len(res.Hits) != 1 || res.Scanned || res.Partial {
		t.Errorf("once back: %d hits, scanned %v, partial %v", len(res.Hits), res.Scanned, res.Partial)
	}

	proxy.Hold() // not answering
	res = searchOf(t, c, "return")
	if !res.Scanned || len(res.Hits) != min(len(want), 50) {
		t.Errorf("with PostgreSQL not answering: %d hits, scanned %v", len(res.Hits), res.Scanned)
	}
	proxy.Release()
	wait(t, c)
	if got := allHits(t, c, "return"); len(got) != len(want)+0 {
		t.Errorf("after all that: %d hits, want %d", len(got), len(want))
	}
	l := log.String()
	for _, line := range []string{"index store unreachable", "index store failed"} {
		if n := strings.Count(l, line); n < 1 || n > 2 {
			t.Errorf("%q logged %d times (once an outage):\n%s", line, n, l)
		}
	}
}

// TestDamagedRowWhileRunning: a file's row damaged while piweb runs (a
// column another program changed) is not trusted for a hit's place and
// label: they come from the file's tree, the search says partial, and the
// file is saved again, which mends the row.
func TestDamagedRowWhileRunning(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		root, _ := handRoot(t)
		st := openStore(t, dsn)
		c, stop := start(t, root, st, nil) // (start waits until the store is current)
		defer stop()
		ctx := context.Background()
		if err := st.Use(ctx, func(db *sql.DB) error {
			_, err := db.ExecContext(ctx, `UPDATE files SET modified = modified + 1`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		q, _ := search.Parse("-is:offpath quokka")
		res, err := c.Search(ctx, q, 20, "")
		if err != nil || len(res.Hits) != 1 || res.Hits[0].Place != PlacePath || res.Hits[0].Label != "keeper" || !res.Partial {
			t.Fatalf("with the row damaged: %+v %v; want the hit on the path, labeled keeper, partial", res, err)
		}
		wait(t, c)
		if _, damaged, err := st.Files(ctx, ""); err != nil || damaged != 0 {
			t.Errorf("the row was not mended: %d damaged (%v)", damaged, err)
		}
		if res, err := c.Search(ctx, q, 20, ""); err != nil || len(res.Hits) != 1 || res.Hits[0].Place != PlacePath || res.Partial {
			t.Errorf("once mended: %+v %v", res, err)
		}
		// A label's text changed: label: finds the entry by its real label.
		if err := st.Use(ctx, func(db *sql.DB) error {
			_, err := db.ExecContext(ctx, `UPDATE labels SET label = 'evil'`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		q, _ = search.Parse("label:keeper")
		if res, err := c.Search(ctx, q, 20, ""); err != nil || len(res.Hits) != 1 || res.Hits[0].EntryID != "a2" || res.Hits[0].Label != "keeper" || !res.Partial {
			t.Fatalf("label: with a label's row damaged: %+v %v; want a2, labeled keeper, partial", res, err)
		}
		wait(t, c)
		if res, err := c.Search(ctx, q, 20, ""); err != nil || len(res.Hits) != 1 || res.Hits[0].Label != "keeper" || res.Partial {
			t.Errorf("label: once mended: %+v %v", res, err)
		}
	})
}
