package storesource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/internal/storetest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/usage"
	"github.com/piweb/piweb/writer"
)

var ctx = context.Background()

// running is a catalog kept running over a root with a store, and the
// two sources to compare: the files read directly, and the store.
type running struct {
	t     *testing.T
	cat   *catalog.Catalog
	lib   *library.Library
	files *usage.Files
	src   *Source
}

// start runs a catalog over root with a new store at dsn until the test
// ends, and waits until the store holds every file.
func start(t *testing.T, root, dsn string) *running {
	t.Helper()
	log := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	st, err := store.Open(ctx, dsn, store.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lib := library.NewLibrary(root)
	cat := catalog.New(lib, catalog.Options{Store: st, Logger: log})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cat.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	r := &running{t: t, cat: cat, lib: lib, files: usage.NewFiles(lib, "box"), src: New(usage.Stored{DB: st}, "box", Options{Settle: cat.Wait})}
	r.settle()
	return r
}

// settle waits until the store holds every file as the library has it.
func (r *running) settle() {
	r.t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute) // a guard against a hang: it ends by an event
	defer cancel()
	if err := r.src.Settle(wctx); err != nil {
		r.t.Fatalf("the store did not catch up: %v", err)
	}
}

// same checks that both sources give the same rows, to the last bit of
// every cost, and the same reports; it returns the rows.
func (r *running) same(what string) []usage.Row {
	r.t.Helper()
	r.settle()
	want, err := r.files.Rows(ctx, usage.Filter{})
	if err != nil {
		r.t.Fatal(err)
	}
	got, err := r.src.Rows(ctx, usage.Filter{})
	if err != nil {
		r.t.Fatal(err)
	}
	if len(want) == 0 {
		r.t.Fatalf("%s: no usage at all", what)
	}
	if !reflect.DeepEqual(got, want) {
		r.t.Errorf("%s: the store's rows differ from the files':\n%s", what, rowsDiff(got, want))
		return want
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		r.t.Fatal(err)
	}
	for _, q := range []usage.Query{{Group: usage.Daily, Loc: berlin}, {Group: usage.BySession, Loc: time.UTC},
		{Group: usage.ByProject, Loc: time.UTC, Since: "2026-01-03"}} {
		var a, b bytes.Buffer
		for src, buf := range map[usage.Source]*bytes.Buffer{r.files: &a, r.src: &b} {
			rep, err := usage.Make(ctx, src, q)
			if err != nil {
				r.t.Fatal(err)
			}
			if err := rep.WriteJSON(buf); err != nil {
				r.t.Fatal(err)
			}
		}
		if a.String() != b.String() {
			r.t.Errorf("%s: %s report from the store:\n%s\nfrom the files:\n%s", what, q.Group, b.String(), a.String())
		}
	}
	// Filters the store applies itself.
	mid := want[len(want)/2]
	for _, flt := range []usage.Filter{
		{Since: mid.Start, Until: mid.Start.Add(36 * time.Hour), Models: []string{mid.Model}, Machines: []string{"box"}},
		{Projects: []string{mid.Project}},
		{Sessions: []string{mid.Session, want[0].Session}, Since: want[0].Start},
	} {
		fw, _ := r.files.Rows(ctx, flt)
		fg, err := r.src.Rows(ctx, flt)
		if err != nil || len(fw) == 0 || !reflect.DeepEqual(fg, fw) {
			r.t.Errorf("%s: rows of %+v: %d from the store, %d from the files (%v)", what, flt, len(fg), len(fw), err)
		}
	}
	if rows, err := r.src.Rows(ctx, usage.Filter{Machines: []string{"elsewhere"}}); err != nil || len(rows) != 0 {
		r.t.Errorf("%s: another machine's rows: %d, %v", what, len(rows), err)
	}
	return want
}

// rowsDiff describes how two lists of rows differ.
func rowsDiff(got, want []usage.Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows, want %d\n", len(got), len(want))
	for i := 0; i < max(len(got), len(want)) && b.Len() < 4000; i++ {
		var g, w usage.Row
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !reflect.DeepEqual(g, w) {
			fmt.Fprintf(&b, "row %d:\n  got  %+v\n  want %+v\n", i, g, w)
		}
	}
	return b.String()
}

// engines runs test against every engine the machine has.
func engines(t *testing.T, test func(t *testing.T, dsn string)) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) { test(t, e.DSN) })
	}
}

// copyDir copies the files under src into a new folder.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "root")
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, rel), b, 0o644); err != nil {
			return err
		}
		return os.Chtimes(filepath.Join(dst, rel), fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestFixture: usage's fixture root (a fork made on another machine that
// resumes a branch abandoned in its source, a fork of that fork, a fork
// whose source is gone, a usage entry, a compaction's usage).
func TestFixture(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		r := start(t, copyDir(t, "../testdata/root"), dsn)
		rows := r.same("the fixture")
		var all usage.Row
		for _, row := range rows {
			all.Sums.Add(row.Sums)
			all.Abandoned.Add(row.Abandoned)
		}
		// As usage's TestFilesCountsEachUsageOnce: the forks' copies once, a2b alone abandoned.
		if all.Cost != 32.46875 || all.Abandoned.Cost != 0.25 {
			t.Errorf("cost %v, abandoned %v", all.Cost, all.Abandoned.Cost)
		}
	})
}

// pathEntry returns the id of the assistant message about frac of the way
// along the path pi resumes in the session with key.
func pathEntry(t *testing.T, lib *library.Library, key string, frac float64) string {
	t.Helper()
	var id string
	err := lib.View(key, func(s *sessions.Session) error {
		path := s.Path(s.Leaf())
		for k := min(int(frac*float64(len(path))), len(path)-1); k >= 0; k-- {
			e := &s.Entries[path[k]]
			if e.Type == sessions.TypeMessage && e.Role == sessions.RoleAssistant && e.ID != "" {
				id = e.ID
				return nil
			}
		}
		return fmt.Errorf("no assistant message on the path of %s", key)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// biggest returns the keys of the n sessions with the most entries.
func biggest(lib *library.Library, n int) []string {
	list := lib.List()
	var keys []string
	for range n {
		best := -1
		for i, m := range list {
			if m.ParentSession == "" && (best < 0 || m.Entries > list[best].Entries) && !contains(keys, m.Key) {
				best = i
			}
		}
		keys = append(keys, list[best].Key)
	}
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// appendTurn appends a user message and an assistant reply after entry
// parent of file, and has the library read them.
func appendTurn(t *testing.T, lib *library.Library, file, parent, tag string, sec int) {
	t.Helper()
	sessiontest.Append(t, file, sessiontest.Lines(
		sessiontest.User("u"+tag, parent, sec, "again, "+tag),
		sessiontest.Asst("a"+tag, "u"+tag, sec+1, "done: "+tag)))
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
}

// TestGenerated: generated sessions with forks, forks of forks and
// rewinds, made before the store first reads them (a fork, whose last
// activity is older than its source's, is saved first) and while the
// catalog runs; and a source removed.
func TestGenerated(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		root := t.TempDir()
		size := int64(3 << 20)
		if testing.Short() {
			size = 1 << 20
		}
		if _, _, err := sessiontest.Tree(root, size); err != nil {
			t.Fatal(err)
		}
		// Before the catalog: forks of the three longest sessions, a fork
		// of one of the forks, and a rewind in a source to before its
		// fork point, continued there.
		pre, err := library.OpenLibrary(root)
		if err != nil {
			t.Fatal(err)
		}
		srcs := biggest(pre, 3)
		var forks []library.Forked
		for i, key := range srcs {
			f, err := pre.Fork(key, pathEntry(t, pre, key, 0.3+0.2*float64(i)))
			if err != nil {
				t.Fatal(err)
			}
			forks = append(forks, f)
		}
		if _, err := pre.Fork(forks[0].Key, pathEntry(t, pre, forks[0].Key, 0.7)); err != nil {
			t.Fatal(err)
		}
		back := pathEntry(t, pre, srcs[1], 0.2)
		rw, err := pre.Rewind(srcs[1], back, "", writer.Guard{})
		if err != nil {
			t.Fatal(err)
		}
		file, _ := pre.File(srcs[1])
		appendTurn(t, pre, file, rw, "pre", 100)

		r := start(t, root, dsn)
		rows := r.same("the first build")
		var all usage.Row
		for _, row := range rows {
			all.Sums.Add(row.Sums)
			all.Abandoned.Add(row.Abandoned)
		}
		if all.Abandoned.Cost <= 0 || all.Abandoned.Cost >= all.Cost {
			t.Errorf("the root should have abandoned usage: %+v", all)
		}

		// While the catalog runs: rewinds in a source to entries its fork
		// copied (they are resumed there, not abandoned), an append, a new
		// fork, and the source of a fork of a fork removed.
		lib := r.lib
		back = pathEntry(t, lib, srcs[0], 0.1)
		if _, err := lib.Rewind(srcs[0], back, "", writer.Guard{}); err != nil {
			t.Fatal(err)
		}
		r.same("a rewind in a source")
		file, _ = lib.File(srcs[0])
		m, _ := lib.Meta(srcs[0])
		appendTurn(t, lib, file, m.Leaf, "live", 200)
		r.same("an append after the rewind")
		f, err := lib.Fork(forks[2].Key, pathEntry(t, lib, forks[2].Key, 0.5))
		if err != nil {
			t.Fatal(err)
		}
		r.same("a fork of a fork")
		if _, err := lib.Rewind(f.Key, pathEntry(t, lib, f.Key, 0.2), "", writer.Guard{}); err != nil {
			t.Fatal(err)
		}
		r.same("a rewind in that fork")
		gone, _ := lib.File(forks[0].Key)
		if err := os.Remove(gone); err != nil {
			t.Fatal(err)
		}
		lib.Remove(gone)
		r.same("a fork's source removed")
	})
}

// TestConformance: roots pi's own SessionManager wrote (forks, forks of
// forks, clones, rewinds, several models; with and without the usage of
// tool results, usage entries, compactions and branch summaries).
func TestConformance(t *testing.T) {
	dir := oracle.Dir(t)
	for _, extras := range []bool{false, true} {
		args := []string{"usage-gen.mjs", filepath.Join(t.TempDir(), "gen")}
		if extras {
			args = append(args, "--extras")
		}
		cmd := exec.Command("node", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("usage-gen.mjs: %v\n%s", err, oracle.Stderr(err))
		}
		var g struct{ Root string }
		if err := json.Unmarshal(out, &g); err != nil {
			t.Fatal(err)
		}
		engines(t, func(t *testing.T, dsn string) {
			start(t, g.Root, dsn).same(fmt.Sprintf("pi's root (extras: %v)", extras))
		})
	}
}

// down is a store that cannot be reached.
type down struct{}

func (down) UsageVersion(context.Context) (int64, error) {
	return 0, fmt.Errorf("%w: connection refused", store.ErrUnavailable)
}

func (down) UsageSums(context.Context) ([]usage.Row, error) {
	return nil, fmt.Errorf("%w: connection refused", store.ErrUnavailable)
}

func (down) UsageSessions(context.Context, []string) ([]usage.StoredSession, error) {
	return nil, fmt.Errorf("%w: connection refused", store.ErrUnavailable)
}

// TestFallback: until the store first held every file, and while it
// cannot be reached, the fallback answers; without one, the error does.
func TestFallback(t *testing.T) {
	lib, err := library.OpenLibrary("../testdata/root")
	if err != nil {
		t.Fatal(err)
	}
	files := usage.NewFiles(lib, "box")
	want, err := files.Rows(ctx, usage.Filter{})
	if err != nil || len(want) == 0 {
		t.Fatal(len(want), err)
	}
	wantNames, _ := files.Sessions(ctx, []string{"fork2"})

	src := New(down{}, "box", Options{Fallback: files})
	got, err := src.Rows(ctx, usage.Filter{})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("unreachable: %d rows, %v; want the files' %d", len(got), err, len(want))
	}
	if names, err := src.Sessions(ctx, []string{"fork2"}); err != nil || !reflect.DeepEqual(names, wantNames) || names["fork2"].FirstMessage == "" {
		t.Errorf("unreachable: sessions %+v, %v", names, err)
	}
	if _, err := New(down{}, "box", Options{}).Rows(ctx, usage.Filter{}); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("unreachable without a fallback: %v", err)
	}

	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "index.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ready := make(chan struct{})
	src = New(usage.Stored{DB: st}, "box", Options{Ready: ready, Fallback: files, Settle: func(context.Context) error { return errors.New("asked the catalog") }})
	if got, err := src.Rows(ctx, usage.Filter{}); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("before the first build: %d rows, %v; want the files' %d", len(got), err, len(want))
	}
	if err := src.Settle(ctx); err != nil {
		t.Errorf("the fallback needs no settling: %v", err)
	}
	close(ready)
	if got, err := src.Rows(ctx, usage.Filter{}); err != nil || len(got) != 0 {
		t.Errorf("after it, from the (empty) store: %d rows, %v", len(got), err)
	}
	if err := src.Settle(ctx); err == nil {
		t.Error("after the first build, Settle asks the catalog")
	}
}

// counting counts the reads of sums and sessions.
type counting struct {
	usage.Stored
	sums, sessions int
}

func (c *counting) UsageSums(ctx context.Context) ([]usage.Row, error) {
	c.sums++
	return c.Stored.UsageSums(ctx)
}

func (c *counting) UsageSessions(ctx context.Context, keys []string) ([]usage.StoredSession, error) {
	c.sessions++
	return c.Stored.UsageSessions(ctx, keys)
}

// TestKeeps: what was read is kept while the store's usage stays, and
// read again once it changed.
func TestKeeps(t *testing.T) {
	root := copyDir(t, "../testdata/root")
	r := start(t, root, "sqlite:"+filepath.Join(t.TempDir(), "index.db"))
	db := &counting{Stored: r.src.db.(usage.Stored)}
	src := New(db, "box", Options{Settle: r.cat.Wait})
	q := usage.Query{Group: usage.BySession, Loc: time.UTC}
	for range 3 {
		if _, err := usage.Make(ctx, src, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.Rows(ctx, usage.Filter{Projects: []string{"--home-u-cli--"}}); err != nil {
		t.Fatal(err)
	}
	if db.sums != 1 || db.sessions != 1 {
		t.Errorf("three reports and a filter read the sums %d times and the sessions %d times, want once each", db.sums, db.sessions)
	}
	file := filepath.Join(root, "--home-u-cli--", "2026-01-07T23-50-00-000Z_other.jsonl")
	appendTurn(t, r.lib, file, lastEntry(t, r.lib, file), "keep", 3600*24*9)
	r.settle()
	rep, err := usage.Make(ctx, src, q)
	if err != nil {
		t.Fatal(err)
	}
	if db.sums != 2 || db.sessions != 2 || rep.Totals.Cost != 32.46875+0.25 {
		t.Errorf("after an append: %d and %d reads, $%v", db.sums, db.sessions, rep.Totals.Cost)
	}
}

// lastEntry returns the id of the leaf of the session file.
func lastEntry(t *testing.T, lib *library.Library, file string) string {
	t.Helper()
	key, ok := lib.Key(file)
	if !ok {
		t.Fatalf("%s is not in the library", file)
	}
	m, err := lib.Meta(key)
	if err != nil {
		t.Fatal(err)
	}
	return m.Leaf
}
