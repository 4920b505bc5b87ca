package catalog

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/internal/storetest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
)

// genRoot writes n generated sessions in two projects (of a tenth of
// entries each under the race detector: see raceOn).
func genRoot(t testing.TB, n, entries int) (string, []string) {
	t.Helper()
	if raceOn {
		entries = max(8, entries/10)
	}
	root := t.TempDir()
	var files []string
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("--home-dev-proj%d--", i%2))
		os.MkdirAll(dir, 0o755)
		f := filepath.Join(dir, fmt.Sprintf("s%03d.jsonl", i))
		start := time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC)
		if _, err := sessiontest.WriteFile(f, int64(i+1), entries, sessiontest.Options{Start: start}); err != nil {
			t.Fatal(err)
		}
		mt := start.Add(time.Hour)
		os.Chtimes(f, mt, mt)
		files = append(files, f)
	}
	return root, files
}

// logs collects what a catalog logs, for tests that look at it.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(&logs{}, nil)) }

// openStore opens the store dsn names ("" for none).
func openStore(t testing.TB, dsn string) *store.DB {
	t.Helper()
	if dsn == "" {
		return nil
	}
	st, err := store.Open(context.Background(), dsn, store.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// start runs a catalog over a new library of root with st (nil: none),
// and waits until its library is filled and the store is current.
func start(t testing.TB, root string, st *store.DB, log *slog.Logger) (*Catalog, func()) {
	t.Helper()
	opt := Options{Logger: log, PageTime: -1} // a page holds its hits however slow the machine
	if st != nil {
		opt.Store = st
	}
	if opt.Logger == nil {
		opt.Logger = quiet()
	}
	c := New(library.NewLibrary(root), opt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-c.Ready()
	wait(t, c)
	return c, func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// wait waits until the catalog's store holds every file as the library has it.
func wait(t testing.TB, c *Catalog) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a guard against a hang: it ends by an event: it ends by an event
	defer cancel()
	if err := c.Wait(ctx); err != nil {
		t.Fatalf("the catalog did not catch up: %v", err)
	}
}

// run is start with a new store at dsn.
func run(t testing.TB, root, dsn string) (*Catalog, func()) {
	t.Helper()
	return start(t, root, openStore(t, dsn), nil)
}

// engines runs test against every engine the machine has.
func engines(t *testing.T, test func(t *testing.T, dsn string)) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) { test(t, e.DSN) })
	}
}

// TestRestart: a restart on an unchanged root reads no session bytes and
// lists every session as before; after appends it reads the grown files
// only, and the store adds only their appended entries' texts.
func TestRestart(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		root, files := genRoot(t, 12, 200)
		before := sessions.BytesRead.Load()
		c, stop := run(t, root, dsn)
		if c.lib.Len() != 12 {
			t.Fatalf("%d sessions", c.lib.Len())
		}
		first := sessions.BytesRead.Load() - before
		want := c.lib.List()
		stop()
		if first == 0 {
			t.Fatal("the first start read nothing")
		}

		before = sessions.BytesRead.Load()
		c, stop = run(t, root, dsn)
		if got := sessions.BytesRead.Load() - before; got != 0 {
			t.Fatalf("a restart on an unchanged root read %d bytes", got)
		}
		got := c.lib.List()
		if len(got) != len(want) {
			t.Fatalf("%d sessions after restart, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i].Key != want[i].Key || got[i].Entries != want[i].Entries || got[i].Tokens != want[i].Tokens ||
				got[i].FirstMessage != want[i].FirstMessage || !got[i].Modified.Equal(want[i].Modified) {
				t.Fatalf("session %d differs after restart:\n%+v\n%+v", i, got[i], want[i])
			}
		}
		stop()

		var grown int64
		for k, f := range files[:5] {
			sessiontest.Append(t, f, sessiontest.Lines(sessiontest.User(fmt.Sprintf("new%d", k), "", 99, fmt.Sprintf("appendedword%d here", k))))
			st, _ := os.Stat(f)
			grown += st.Size()
		}
		before = sessions.BytesRead.Load()
		c, stop = run(t, root, dsn)
		if got := sessions.BytesRead.Load() - before; got != grown {
			t.Fatalf("after appends a restart read %d bytes, want the %d of the grown files", got, grown)
		}
		fresh, err := library.OpenLibrary(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fresh.List() {
			got, err := c.lib.Meta(m.Key)
			if err != nil || got.Entries != m.Entries || got.Size != m.Size {
				t.Fatalf("%s: %+v, want %+v (%v)", m.Key, got, m, err)
			}
		}
		for k := range 5 {
			if hs := find(t, c, fmt.Sprintf("appendedword%d", k)); len(hs) != 1 {
				t.Errorf("appendedword%d: %d hits", k, len(hs))
			}
		}
		// Texts of the entries the store held before the appends are not
		// doubled: the store finds what reading every file finds.
		scanned, sstop := start(t, root, nil, nil)
		for _, q := range []string{"the", "role:user", "error"} {
			if a, b := allHits(t, c, q), allHits(t, scanned, q); !slices.Equal(a, b) {
				t.Errorf("%q: the store finds %d hits, a scan %d", q, len(a), len(b))
			}
		}
		sstop()
		stop()

		// A third restart after the appends reads nothing again.
		before = sessions.BytesRead.Load()
		_, stop = run(t, root, dsn)
		if got := sessions.BytesRead.Load() - before; got != 0 {
			t.Fatalf("read %d bytes", got)
		}
		stop()
	})
}

// TestTwoProcesses: two catalogs (two piweb processes) on one store, over
// one root, both following appends: every hit once.
func TestTwoProcesses(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		root, files := genRoot(t, 4, 50)
		c1, stop1 := run(t, root, dsn)
		defer stop1()
		c2, stop2 := run(t, root, dsn)
		defer stop2()
		for k := range 3 {
			sessiontest.Append(t, files[0], sessiontest.Lines(sessiontest.User(fmt.Sprintf("tw%d", k), "", 99, "twiceword appended")))
			c1.lib.Refresh(files[0])
			c2.lib.Refresh(files[0])
			wait(t, c1)
			wait(t, c2)
		}
		for _, c := range []*Catalog{c1, c2} {
			hs := find(t, c, "twiceword")
			if ids := hitIDs(hs); !slices.Equal(ids, []string{"tw0:text:offpath", "tw1:text:offpath", "tw2:text:path"}) {
				t.Errorf("hits %v", ids)
			}
		}
		// Restarted on that store, a third one finds each once too.
		c3, stop3 := run(t, root, dsn)
		defer stop3()
		if n := len(find(t, c3, "twiceword")); n != 3 {
			t.Errorf("after a restart: %d hits", n)
		}
	})
}

// TestProblemsKept: a file that is not a session is listed as a problem
// after a restart without being read again.
func TestProblemsKept(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		root, _ := genRoot(t, 2, 10)
		bad := filepath.Join(root, "--home-dev-proj0--", "broken.jsonl")
		os.WriteFile(bad, []byte("not json at all\n"), 0o644)
		_, stop := run(t, root, dsn)
		stop()
		before := sessions.BytesRead.Load()
		c, stop := run(t, root, dsn)
		defer stop()
		if got := sessions.BytesRead.Load() - before; got != 0 {
			t.Errorf("the restart read %d bytes", got)
		}
		if p := c.lib.Problems(); p[bad] == nil || !strings.Contains(p[bad].Error(), "not a session") {
			t.Errorf("problems after a restart: %v", p)
		}
	})
}

// TestBuildLeavesTrees: the first build reads every file whole but leaves
// none of their trees loaded (the cache holds what people read); a tree
// loaded before stays, and so does one read again for an append.
func TestBuildLeavesTrees(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		root, files := genRoot(t, 6, 50)
		c, stop := run(t, root, dsn)
		defer stop()
		if n := c.lib.CacheBytes(); n != 0 {
			t.Fatalf("the build left %d bytes of trees loaded", n)
		}
		if _, err := c.lib.SessionOf(files[0]); err != nil {
			t.Fatal(err)
		}
		for k, f := range files[:2] {
			sessiontest.Append(t, f, sessiontest.Lines(sessiontest.User(fmt.Sprintf("new%d", k), "", 99, fmt.Sprintf("appendedword%d here", k))))
			if _, err := c.lib.Refresh(f); err != nil {
				t.Fatal(err)
			}
		}
		wait(t, c)
		for k, f := range files[:2] {
			if c.lib.Loaded(f) == nil {
				t.Errorf("%s: the tree was dropped after its append was saved", filepath.Base(f))
			}
			if hs := find(t, c, fmt.Sprintf("appendedword%d", k)); len(hs) != 1 {
				t.Errorf("appendedword%d: %d hits", k, len(hs))
			}
		}
		for _, f := range files[2:] {
			if c.lib.Loaded(f) != nil {
				t.Errorf("%s: loaded, though nobody read it", filepath.Base(f))
			}
		}
	})
}

// TestYieldTo: the store's workers call the yield before each file and
// save nothing while it holds them.
func TestYieldTo(t *testing.T) {
	root, _ := genRoot(t, 4, 20)
	st := openStore(t, "sqlite:"+filepath.Join(t.TempDir(), "index.db"))
	c := New(library.NewLibrary(root), Options{Store: st, Logger: quiet()})
	entered, release := make(chan struct{}, 64), make(chan struct{})
	c.YieldTo(func(ctx context.Context) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	<-entered
	if n := c.Progress().SearchDone; n != 0 {
		t.Fatalf("%d files saved while the yield held the workers", n)
	}
	if files, _, err := st.Files(ctx, ""); err != nil || len(files) != 0 {
		t.Fatalf("the store holds %d files while the yield held the workers (%v)", len(files), err)
	}
	close(release)
	wait(t, c)
	if files, _, err := st.Files(ctx, ""); err != nil || len(files) != 4 {
		t.Fatalf("the store holds %d files once the yield let go, want 4 (%v)", len(files), err)
	}
}
