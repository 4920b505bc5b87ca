package catalog

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/search"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
)

// genRoot writes n generated sessions in two projects.
func genRoot(t testing.TB, n, entries int) (string, []string) {
	t.Helper()
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

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(os.Stderr, nil)) }

// run starts a catalog over a new library of root with the store at db,
// and waits until its library is filled and the store is current.
func run(t testing.TB, root, db string) (*Catalog, func()) {
	t.Helper()
	var st *store.Store
	if db != "" {
		var err error
		if st, err = store.Open(db); err != nil {
			t.Fatal(err)
		}
	}
	c := New(sessions.NewLibrary(root), Options{Store: st, Logger: quiet()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-c.Ready()
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-c.SearchReady()
	return c, func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if st != nil {
			st.Close()
		}
	}
}

// TestRestart: a restart on an unchanged root reads no session bytes;
// after appends to some files, only the appended bytes.
func TestRestart(t *testing.T) {
	root, files := genRoot(t, 12, 200)
	db := filepath.Join(t.TempDir(), "piweb", "index.db")
	before := sessions.BytesRead()
	c, stop := run(t, root, db)
	if c.lib.Len() != 12 {
		t.Fatalf("%d sessions", c.lib.Len())
	}
	first := sessions.BytesRead() - before
	want := c.lib.List()
	stop()
	if first == 0 {
		t.Fatal("the first start read nothing")
	}

	before = sessions.BytesRead()
	c, stop = run(t, root, db)
	if got := sessions.BytesRead() - before; got != 0 {
		t.Fatalf("a restart on an unchanged root read %d bytes", got)
	}
	got := c.lib.List()
	if len(got) != len(want) {
		t.Fatalf("%d sessions after restart, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Key != want[i].Key || got[i].Entries != want[i].Entries || got[i].Tokens != want[i].Tokens {
			t.Fatalf("session %d differs after restart:\n%+v\n%+v", i, got[i], want[i])
		}
	}
	stop()

	var appended int64
	for _, f := range files[:5] {
		add := sessiontest.String(99, 6, sessiontest.Options{NoHeader: true})
		sessiontest.Append(t, f, add)
		appended += int64(len(add))
	}
	before = sessions.BytesRead()
	c, stop = run(t, root, db)
	if got := sessions.BytesRead() - before; got != appended {
		t.Fatalf("after appends a restart read %d bytes, want the %d appended", got, appended)
	}
	fresh, err := sessions.OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range fresh.List() {
		got, err := c.lib.Meta(m.Key)
		if err != nil || got.Entries != m.Entries || got.Size != m.Size {
			t.Fatalf("%s: %+v, want %+v (%v)", m.Key, got, m, err)
		}
	}
	stop()

	// A third restart after the appends reads nothing again: the store
	// kept the grown indexes.
	before = sessions.BytesRead()
	_, stop = run(t, root, db)
	if got := sessions.BytesRead() - before; got != 0 {
		t.Fatalf("read %d bytes", got)
	}
	stop()
}

// TestDamagedStore: a store that is not a database is rebuilt, never an error.
func TestDamagedStore(t *testing.T) {
	root, _ := genRoot(t, 3, 50)
	db := filepath.Join(t.TempDir(), "index.db")
	os.WriteFile(db, []byte("this is not a database, just bytes"), 0o600)
	c, stop := run(t, root, db)
	defer stop()
	if c.lib.Len() != 3 {
		t.Fatalf("%d sessions", c.lib.Len())
	}
	q, _ := search.Parse("the")
	res, err := c.Search(context.Background(), q, 5, "")
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("%v %v", res, err)
	}
}

// TestTwoProcesses: two catalogs on one store (as two piweb processes)
// both work and leave it whole.
func TestTwoProcesses(t *testing.T) {
	root, files := genRoot(t, 6, 80)
	db := filepath.Join(t.TempDir(), "index.db")
	a, stopA := run(t, root, db)
	b, stopB := run(t, root, db)
	sessiontest.Append(t, files[0], sessiontest.String(5, 4, sessiontest.Options{NoHeader: true}))
	a.lib.Refresh(files[0])
	b.lib.Refresh(files[0])
	a.Wait(context.Background())
	b.Wait(context.Background())
	stopA()
	stopB()
	before := sessions.BytesRead()
	c, stop := run(t, root, db)
	defer stop()
	if got := sessions.BytesRead() - before; got != 0 || c.lib.Len() != 6 {
		t.Fatalf("read %d bytes, %d sessions", got, c.lib.Len())
	}
}

// TestFlushedThenChanged: a file that changes while it is read, after
// part of its documents went to the batch (by sync, or by the fused read
// of a first build), is indexed again from the start: its new words are
// found, its old ones are not, and no document is there twice.
func TestFlushedThenChanged(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fuse     bool  // a first build's fused read, else sync's
		firstMax int64 // 0: the file fused with the older files, else as one of the newest
	}{{"sync", false, firstMax}, {"fused", true, 0}, {"fused newest", true, firstMax}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "--home-dev-p--")
			os.MkdirAll(dir, 0o755)
			file := filepath.Join(dir, "2026-01-01T00-00-00-000Z_s1.jsonl")
			header := `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/p"}`
			long := strings.Repeat("filler words ", 400)
			lines := []string{header}
			parent := ""
			for i := range 60 {
				id := fmt.Sprintf("u%d", i)
				lines = append(lines, sessiontest.User(id, parent, i+1, fmt.Sprintf("oldmarker%d %s", i, long)))
				parent = id
			}
			if err := os.WriteFile(file, []byte(sessiontest.Lines(lines...)), 0o644); err != nil {
				t.Fatal(err)
			}
			// The file as it is rewritten: shorter than where the read stood.
			rewritten := sessiontest.Lines(header, sessiontest.User("n1", "", 1, "newmarker alpha"), sessiontest.User("n2", "n1", 2, "newmarker beta"))

			defer func(old int, m int64, f bool) { flushText, firstMax, fuseFirst = old, m, f }(flushText, firstMax, fuseFirst)
			flushText, firstMax, fuseFirst = 16<<10, tc.firstMax, tc.fuse
			var c *Catalog
			changed := 0
			testFlushed = func(f string) {
				if changed++; changed == 1 {
					if err := os.WriteFile(f, []byte(rewritten), 0o644); err != nil {
						t.Error(err)
					}
					c.lib.Refresh(f) // during a fused read the library takes this read, not the fused one
				}
			}
			defer func() { testFlushed = nil }()
			fused := 0
			testFused = func(string) { fused++ }
			defer func() { testFused = nil }()

			st, err := store.Open(filepath.Join(t.TempDir(), "index.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			c = New(sessions.NewLibrary(root), Options{Store: st, Logger: quiet()})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx) }()
			defer func() { cancel(); <-done }()
			<-c.SearchReady()
			if err := c.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			if changed == 0 {
				t.Fatal("the read never added part of the file's documents")
			}
			if fused != 0 {
				t.Fatalf("%d files fused: the changed file's fused documents were kept", fused)
			}
			if got := hitIDs(find(t, c, "newmarker")); !slices.Equal(got, []string{"n1:text:path", "n2:text:path"}) {
				t.Fatalf("newmarker: %v", got)
			}
			for _, w := range []string{"oldmarker0", "oldmarker5", "oldmarker59", "filler"} {
				if got := find(t, c, w); len(got) != 0 {
					t.Fatalf("%s, gone with the rewrite, still found: %v", w, hitIDs(got))
				}
			}
			s, err := st.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if s.Docs != 2 {
				t.Fatalf("the store holds %d documents, want the 2 of the file as rewritten", s.Docs)
			}
			// (A live change the fill saw may be synced once more after it.)
			if p := c.Progress(); p.SearchDone < p.SearchTotal || p.FilesDone != p.FilesTotal {
				t.Errorf("progress: %+v", p)
			}
		})
	}
}

// TestResetByAnotherProcess: two catalogs of different roots share a
// store, and one rebuilds it (as it does when it finds it damaged). The
// other moves to the rebuilt store at its next search and writes its
// files into it again, so that its searches through the store find them.
func TestResetByAnotherProcess(t *testing.T) {
	rootA, _ := genRoot(t, 3, 30)
	rootB, _ := handRoot(t)
	db := filepath.Join(t.TempDir(), "index.db")
	a, stopA := run(t, rootA, db)
	defer stopA()
	b, stopB := run(t, rootB, db)
	defer stopB()
	if got := hitIDs(find(t, b, "quokka")); !slices.Equal(got, []string{"a2:thinking:path"}) {
		t.Fatalf("before: %v", got)
	}
	a.storeFailed(fmt.Errorf("%w (staged)", store.ErrCorrupt))
	if err := a.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	find(t, b, "quokka") // b's first operation since: it moves to the new store
	if err := b.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := hitIDs(find(t, b, "quokka")); !slices.Equal(got, []string{"a2:thinking:path"}) {
		t.Errorf("after: %v", got)
	}
	if st, err := b.st.Stats(); err != nil || st.Files != 4 {
		t.Errorf("store of both: %+v %v, want 4 files", st, err)
	}
}
