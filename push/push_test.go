package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/internal/storetest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/share"
	"github.com/piweb/piweb/store"
)

var ctx = context.Background()

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// engines runs test on every engine the machine has, each with a new store.
func engines(t *testing.T, test func(t *testing.T, st Table)) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) { test(t, open(t, e.DSN)) })
	}
}

// postgres returns a new store on the test server, or skips.
func postgres(t *testing.T) (Table, string) {
	t.Helper()
	dsn, ok := storetest.Postgres(t)
	if !ok {
		t.Skip("no PostgreSQL")
	}
	return open(t, dsn), dsn
}

func open(t *testing.T, dsn string) Table {
	t.Helper()
	db, err := store.Open(ctx, dsn, store.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return Table{DB: db}
}

// root makes a sessions root of n generated sessions in two projects.
func root(t *testing.T, n, entries int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i := range n {
		f := filepath.Join(dir, fmt.Sprintf("--home-dev-p%d--", i%2), fmt.Sprintf("2026-01-0%dT00-00-00-000Z_s%d.jsonl", i%9+1, i))
		if _, err := sessiontest.WriteFile(f, int64(i+1), entries, sessiontest.Options{}); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return dir, files
}

func pusher(t *testing.T, st Store, dir, machine string, mod func(*Options)) *Pusher {
	t.Helper()
	o := Options{Root: dir, Machine: machine, Logger: quiet}
	if mod != nil {
		mod(&o)
	}
	p, err := New(st, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// held returns what the store holds of every file of machine, by path.
func held(t *testing.T, st Table, machine string) map[string]string {
	t.Helper()
	rows, err := st.PushedFiles(ctx, machine)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		var b bytes.Buffer
		if err := st.Chunks(ctx, r.ID, r.Gen, 0, func(off int64, data []byte) error {
			if off >= r.Sent && off == int64(b.Len()) {
				return nil // pushed after the row was read (a watching push goes on meanwhile)
			}
			if off != int64(b.Len()) {
				t.Fatalf("%s: a chunk at %d after %d bytes", r.Path, off, b.Len())
			}
			b.Write(data)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if int64(b.Len()) != r.Sent {
			t.Fatalf("%s: %d bytes held, the row says %d", r.Path, b.Len(), r.Sent)
		}
		out[r.Path] = b.String()
	}
	return out
}

// same fails unless the store holds exactly the whole lines of every file under dir.
func same(t *testing.T, st Table, machine, dir string) {
	t.Helper()
	files, err := library.SessionFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := held(t, st, machine)
	if len(got) != len(files) {
		t.Errorf("%d files held, %d under the root", len(got), len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, f)
		want := string(data[:bytes.LastIndexByte(data, '\n')+1])
		if g, ok := got[filepath.ToSlash(rel)]; !ok || g != want {
			t.Errorf("%s: %d bytes held (held: %v), want %d", rel, len(g), ok, len(want))
		}
	}
}

func push(t *testing.T, p *Pusher) Stats {
	t.Helper()
	st, err := p.Push(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Failed) > 0 {
		t.Fatalf("failed: %v", st.Failed)
	}
	return st
}

func appendTo(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestPushAppends: a push sends every file; a second adds nothing; an
// append sends just the new lines, a line being written waits for its end.
func TestPushAppends(t *testing.T) {
	engines(t, func(t *testing.T, st Table) {
		dir, files := root(t, 4, 30)
		p := pusher(t, st, dir, "laptop", func(o *Options) { o.Chunk = 4096 })
		s := push(t, p)
		if s.Files != 4 || s.Changed != 4 || s.Chunks < 5 || s.Bytes != s.Sent {
			t.Errorf("first push: %+v", s)
		}
		same(t, st, "laptop", dir)
		// Again, and again from a new process (nothing remembered but the store's rows).
		for _, q := range []*Pusher{p, pusher(t, st, dir, "laptop", nil)} {
			if s := push(t, q); s.Changed != 0 || s.Chunks != 0 || s.Bytes != 0 {
				t.Errorf("a push with nothing new sent %+v", s)
			}
		}
		line := sessiontest.User("u9000001", "", 99, "one more")
		appendTo(t, files[1], line+"\n"+line[:20]) // a whole line and the start of the next
		s = push(t, p)
		if s.Changed != 1 || s.Bytes != int64(len(line)+1) || s.Rewritten != 0 {
			t.Errorf("append: %+v, want %d bytes of one file", s, len(line)+1)
		}
		same(t, st, "laptop", dir)
		appendTo(t, files[1], line[20:]+"\n")
		if s = push(t, pusher(t, st, dir, "laptop", nil)); s.Bytes != int64(len(line)+1) {
			t.Errorf("the rest of the line: %+v", s)
		}
		same(t, st, "laptop", dir)
	})
}

// TestPushRewritten: a file rewritten (longer, shorter, or the same size)
// is sent again whole as a new generation; the old one is dropped.
func TestPushRewritten(t *testing.T) {
	engines(t, func(t *testing.T, st Table) {
		dir, files := root(t, 2, 20)
		p := pusher(t, st, dir, "laptop", func(o *Options) { o.Chunk = 2048 })
		push(t, p)
		// The generation of files[0]'s row (the rows come in the order the
		// workers pushed them).
		gen := func() int64 {
			t.Helper()
			rows, err := st.PushedFiles(ctx, "laptop")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if filepath.Base(r.Path) == filepath.Base(files[0]) {
					return r.Gen
				}
			}
			t.Fatalf("no row for %s in %+v", files[0], rows)
			return 0
		}
		before := gen()
		for k, content := range []string{
			sessiontest.String(50, 30, sessiontest.Options{}), // longer
			sessiontest.String(51, 3, sessiontest.Options{}),  // shorter
		} {
			if err := os.WriteFile(files[0], []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			s := push(t, p)
			if s.Rewritten != 1 || s.Bytes != int64(len(content)) {
				t.Errorf("rewrite %d: %+v", k, s)
			}
			same(t, st, "laptop", dir)
		}
		// The same size, another first line: the head tells.
		data, _ := os.ReadFile(files[0])
		data[bytes.Index(data, []byte(`"id":"`))+6] ^= 1
		if err := os.WriteFile(files[0], data, 0o644); err != nil {
			t.Fatal(err)
		}
		if s := push(t, p); s.Rewritten != 1 {
			t.Errorf("same size: %+v", s)
		}
		same(t, st, "laptop", dir)
		if gen() == before {
			t.Error("the generation did not change")
		}
	})
}

// cut is a Store that fails at a chosen point: before chunk n is sent
// (killed), or after it committed, its answer lost (killed before hearing).
type cut struct {
	Store
	mu    sync.Mutex
	n     int // chunks to let through
	after bool
}

var errCut = errors.New("cut")

func (c *cut) PushChunk(ctx context.Context, ch *Chunk) (int64, error) {
	c.mu.Lock()
	n := c.n
	c.n--
	c.mu.Unlock()
	switch {
	case n > 0:
		return c.Store.PushChunk(ctx, ch)
	case n == 0 && c.after:
		c.Store.PushChunk(ctx, ch)
		return 0, errCut
	}
	return 0, errCut
}

// TestPushKilled cuts a push at every chunk, before the chunk is sent and
// after it committed unheard, in a first push and in a rewrite, and checks
// that the next push completes with nothing lost or doubled.
func TestPushKilled(t *testing.T) {
	engines(t, func(t *testing.T, st Table) {
		dir, files := root(t, 3, 12)
		total := push(t, pusher(t, st, dir, "count", func(o *Options) { o.Chunk = 1500 })).Chunks
		if total < 6 {
			t.Fatalf("only %d chunks", total)
		}
		for _, after := range []bool{false, true} {
			for k := range total {
				machine := fmt.Sprintf("m-%v-%d", after, k)
				c := &cut{Store: st, n: k, after: after}
				p := pusher(t, c, dir, machine, func(o *Options) { o.Chunk = 1500 })
				if _, err := p.Push(ctx); !errors.Is(err, errCut) {
					t.Fatalf("cut at %d: %v", k, err)
				}
				push(t, pusher(t, st, dir, machine, func(o *Options) { o.Chunk = 1500 }))
				same(t, st, machine, dir)
			}
		}
		// A rewrite cut half way shows the old generation or a part of
		// the new one, never a mix, and the next push completes it.
		p := pusher(t, st, dir, "rw", func(o *Options) { o.Chunk = 1500 })
		push(t, p)
		if err := os.WriteFile(files[2], []byte(sessiontest.String(77, 15, sessiontest.Options{})), 0o644); err != nil {
			t.Fatal(err)
		}
		c := &cut{Store: st, n: 2}
		if _, err := pusher(t, c, dir, "rw", func(o *Options) { o.Chunk = 1500 }).Push(ctx); !errors.Is(err, errCut) {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, files[2])
		data, _ := os.ReadFile(files[2])
		if got := held(t, st, "rw")[filepath.ToSlash(rel)]; !strings.HasPrefix(string(data), got) || got == "" {
			t.Errorf("half a rewrite holds %d bytes that are not the new file's start", len(got))
		}
		push(t, pusher(t, st, dir, "rw", nil))
		same(t, st, "rw", dir)
	})
}

// TestPushRedact: with --redact secrets the store holds the lines
// redacted, the counts say what was masked, and a push without it sends
// the file again (whole, as a new generation), and back.
func TestPushRedact(t *testing.T) {
	engines(t, func(t *testing.T, st Table) {
		dir := t.TempDir()
		f := filepath.Join(dir, "--p--", "s.jsonl")
		os.MkdirAll(filepath.Dir(f), 0o755)
		secret := "AKIAIOSFODNN7EXAMPLE"
		content := sessiontest.Lines(
			`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`,
			sessiontest.User("u1", "", 1, "my key is "+secret),
			sessiontest.Asst("a1", "u1", 2, "noted"),
		)
		os.WriteFile(f, []byte(content), 0o644)
		p := pusher(t, st, dir, "m", func(o *Options) { o.Redact = RedactSecrets })
		s := push(t, p)
		got := held(t, st, "m")["--p--/s.jsonl"]
		if strings.Contains(got, secret) || !strings.Contains(got, share.Redacted) || s.Bytes != int64(len(content)) || s.Sent == s.Bytes {
			t.Fatalf("redacted push: %+v\n%s", s, got)
		}
		if n := sum(s.Redacted); n != 1 {
			t.Errorf("redacted %v, want one secret", s.Redacted)
		}
		if strings.Count(got, "\n") != 3 {
			t.Errorf("lines changed: %q", got)
		}
		appendTo(t, f, sessiontest.User("u2", "a1", 3, "and password=hunter22x")+"\n")
		s = push(t, p)
		got = held(t, st, "m")["--p--/s.jsonl"]
		if strings.Contains(got, "hunter22x") || sum(s.Redacted) != 1 || s.Rewritten != 0 || strings.Count(got, "\n") != 4 {
			t.Errorf("redacted append: %+v\n%s", s, got)
		}
		// Without redaction the file goes again whole.
		if s = push(t, pusher(t, st, dir, "m", nil)); s.Rewritten != 1 {
			t.Errorf("unredacted after redacted: %+v", s)
		}
		same(t, st, "m", dir)
	})
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestPushConcurrent: two machines push at once, each its own files
// (under the same names); and two pushes of one machine at once lose
// nothing either.
func TestPushConcurrent(t *testing.T) {
	st, _ := postgres(t)
	dirA, _ := root(t, 6, 40)
	dirB, _ := root(t, 6, 25) // same names, other contents
	var wg sync.WaitGroup
	for _, m := range []struct{ name, dir string }{{"a", dirA}, {"b", dirB}, {"b", dirB}} {
		wg.Go(func() {
			p := pusher(t, st, m.dir, m.name, func(o *Options) { o.Chunk = 3000 })
			if _, err := p.Push(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// A push that met another of its machine's leaves the rest to the next one.
	push(t, pusher(t, st, dirB, "b", nil))
	same(t, st, "a", dirA)
	same(t, st, "b", dirB)
}

// TestPushServerRestart: PostgreSQL goes away between chunks (its
// connections cut, as a restart does); the push fails with
// ErrUnavailable, and the next one, once it is back, completes.
func TestPushServerRestart(t *testing.T) {
	_, dsn := postgres(t)
	proxy, via := storetest.NewProxy(t, dsn)
	st := open(t, via)
	dir, _ := root(t, 3, 20)
	p := pusher(t, st, dir, "m", func(o *Options) {
		o.Chunk = 2000
		o.BeforeChunk = func(n int) error {
			if n == 3 {
				proxy.Stop()
			}
			return nil
		}
	})
	if _, err := p.Push(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("push with the server gone: %v", err)
	}
	proxy.Start()
	// The next push (a new process, through the same proxy) completes.
	push(t, pusher(t, open(t, via), dir, "m", nil))
	same(t, open(t, dsn), "m", dir)
}

// TestWatch: a watching push sends an append and a new project's file.
func TestWatch(t *testing.T) {
	engines(t, func(t *testing.T, st Table) {
		dir, files := root(t, 2, 10)
		p := pusher(t, st, dir, "m", nil)
		pushed := make(chan Stats, 100)
		wctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- p.Watch(wctx, WatchOptions{Debounce: 10 * time.Millisecond, Rescan: time.Hour}, func(s Stats, err error) {
				if err != nil {
					t.Error(err)
				}
				pushed <- s
			})
		}()
		waitFor := func(what string, ok func() bool) {
			t.Helper()
			deadline := time.After(20 * time.Second)
			for !ok() {
				select {
				case <-pushed:
				case <-deadline:
					t.Fatalf("%s: not pushed within 20 s", what)
				}
			}
		}
		rel := func(f string) string { r, _ := filepath.Rel(dir, f); return filepath.ToSlash(r) }
		waitFor("the first push", func() bool { return len(held(t, st, "m")) == 2 })
		line := sessiontest.User("u9", "", 9, "live") + "\n"
		appendTo(t, files[0], line)
		waitFor("an append", func() bool { return strings.HasSuffix(held(t, st, "m")[rel(files[0])], line) })
		nf := filepath.Join(dir, "--new--", "n.jsonl")
		os.MkdirAll(filepath.Dir(nf), 0o755)
		os.WriteFile(nf, []byte(sessiontest.String(3, 4, sessiontest.Options{})), 0o644)
		waitFor("a new project's file", func() bool { _, ok := held(t, st, "m")["--new--/n.jsonl"]; return ok })
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		same(t, st, "m", dir)
	})
}
