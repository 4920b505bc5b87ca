package team

import (
	"context"
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
	"github.com/piweb/piweb/push"
	"github.com/piweb/piweb/store"
)

var ctx = context.Background()

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func engines(t *testing.T, test func(t *testing.T, st push.Table)) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) { test(t, open(t, e.DSN)) })
	}
}

func open(t *testing.T, dsn string) push.Table {
	t.Helper()
	st, err := store.Open(ctx, dsn, store.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return push.Table{DB: st}
}

// machine is a sessions root of a machine that pushes.
type machine struct {
	name, dir string
	files     []string
	p         *push.Pusher
}

func newMachine(t *testing.T, st push.Table, name string, seed int64) *machine {
	t.Helper()
	m := &machine{name: name, dir: t.TempDir()}
	for i := range 3 {
		proj := fmt.Sprintf("--home-dev-p%d--", i%2)
		f := filepath.Join(m.dir, proj, fmt.Sprintf("2026-01-0%dT00-00-00-000Z_s%d.jsonl", i+1, i))
		if _, err := sessiontest.WriteFile(f, seed+int64(i), 15, sessiontest.Options{}); err != nil {
			t.Fatal(err)
		}
		m.files = append(m.files, f)
	}
	top := filepath.Join(m.dir, "top.jsonl") // a file outside any project folder
	os.WriteFile(top, []byte(sessiontest.String(seed+9, 3, sessiontest.Options{})), 0o644)
	m.files = append(m.files, top)
	p, err := push.New(st, push.Options{Root: m.dir, Machine: name, Logger: quiet, Chunk: 4096})
	if err != nil {
		t.Fatal(err)
	}
	m.p = p
	return m
}

func (m *machine) push(t *testing.T) {
	t.Helper()
	if s, err := m.p.Push(ctx); err != nil || len(s.Failed) > 0 {
		t.Fatalf("push: %v %v", err, s.Failed)
	}
}

// mirrored fails unless the mirror holds each of m's files as it is, where it should.
func mirrored(t *testing.T, mr *Mirror, m *machine) {
	t.Helper()
	for _, f := range m.files {
		rel, _ := filepath.Rel(m.dir, f)
		want, _ := os.ReadFile(f)
		target := filepath.Join(mr.Dir(), filepath.Dir(rel), escape(m.name)+"@"+filepath.Base(rel))
		got, err := os.ReadFile(target)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s of %s: %d bytes mirrored (%v), want %d", rel, m.name, len(got), err, len(want))
		}
		if mr.Machine(target) != m.name {
			t.Errorf("%s: Machine says %q, want %q", target, mr.Machine(target), m.name)
		}
	}
}

// changes records the files the mirror says it wrote.
type changes struct {
	mu    sync.Mutex
	paths []string
	ch    chan string
}

func (c *changes) add(p string) {
	c.mu.Lock()
	c.paths = append(c.paths, p)
	c.mu.Unlock()
	select {
	case c.ch <- p:
	default:
	}
}

func (c *changes) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.paths
	c.paths = nil
	return out
}

func mirror(t *testing.T, st Store, dir string) (*Mirror, *changes) {
	t.Helper()
	c := &changes{ch: make(chan string, 100)}
	mr, err := Open(st, dir, Options{Logger: quiet, Changed: c.add})
	if err != nil {
		t.Fatal(err)
	}
	return mr, c
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestMirror: two machines' files (of the same names) mirrored in pi's
// layout; an append appended, a rewrite replaced, a restart that finds
// nothing new writes nothing, and a copy cut short is completed.
func TestMirror(t *testing.T) {
	engines(t, func(t *testing.T, st push.Table) {
		a, b := newMachine(t, st, "laptop", 1), newMachine(t, st, "desk/2 é", 100)
		a.push(t)
		b.push(t)
		dir := t.TempDir()
		mr, c := mirror(t, st, dir)
		if err := mr.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		mirrored(t, mr, a)
		mirrored(t, mr, b)
		if n := len(c.take()); n != 8 {
			t.Errorf("%d files said changed, want 8", n)
		}
		files, _ := library.SessionFiles(dir)
		if len(files) != 8 {
			t.Errorf("the library finds %d files in the mirror: %v", len(files), files)
		}
		target := filepath.Join(dir, "--home-dev-p0--", "laptop@"+filepath.Base(a.files[0]))
		ino := stat(t, target)
		// An append is appended.
		sessiontest.Append(t, a.files[0], sessiontest.User("u900", "", 99, "more")+"\n")
		a.push(t)
		if err := mr.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		mirrored(t, mr, a)
		if got := c.take(); len(got) != 1 || got[0] != target {
			t.Errorf("changed after an append: %v", got)
		}
		if !os.SameFile(stat(t, target), ino) {
			t.Error("an append replaced the file")
		}
		// A rewrite replaces it.
		os.WriteFile(a.files[0], []byte(sessiontest.String(7, 5, sessiontest.Options{})), 0o644)
		a.push(t)
		if err := mr.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		mirrored(t, mr, a)
		if os.SameFile(stat(t, target), ino) {
			t.Error("a rewrite was appended to the old copy")
		}
		c.take()
		// Started again: nothing new, nothing written.
		mr2, c2 := mirror(t, st, dir)
		if err := mr2.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if got := c2.take(); len(got) != 0 {
			t.Errorf("a restart wrote %v", got)
		}
		mirrored(t, mr2, a)
		// A copy cut short (a crash while appending) is completed from its own end.
		data, _ := os.ReadFile(target)
		os.WriteFile(target, data[:len(data)/2], 0o600)
		if err := mr2.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		mirrored(t, mr2, a)
		// Without its state file every file is written again, and right.
		os.Remove(filepath.Join(dir, stateName))
		mr3, c3 := mirror(t, st, dir)
		if err := mr3.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if n := len(c3.take()); n != 8 {
			t.Errorf("without state: %d written, want 8", n)
		}
		mirrored(t, mr3, a)
		mirrored(t, mr3, b)
	})
}

// TestMirrorRefusesPlaces: a pushed path that would lead out of the
// mirror, or deeper than pi's layout, or is no session file, is left out.
func TestMirrorRefusesPlaces(t *testing.T) {
	engines(t, func(t *testing.T, st push.Table) {
		for _, p := range []string{"../x.jsonl", "a/../../x.jsonl", "a/b/c.jsonl", "/etc/x.jsonl", "p/.hidden.jsonl", "p/x.txt", `a\..\x.jsonl`, "p//x.jsonl"} {
			if _, err := st.PushChunk(ctx, &push.Chunk{File: push.File{Machine: "evil", Path: p, Gen: 1, Consumed: 2}, Data: []byte("x\n")}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.PushChunk(ctx, &push.Chunk{File: push.File{Machine: "../..", Path: "x.jsonl", Gen: 1, Consumed: 2}, Data: []byte("x\n")}); err != nil {
			t.Fatal(err)
		}
		parent := t.TempDir()
		dir := filepath.Join(parent, "mirror")
		mr, _ := mirror(t, st, dir)
		if err := mr.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		var found []string
		filepath.Walk(parent, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && filepath.Base(p) != stateName {
				found = append(found, p)
			}
			return nil
		})
		if len(found) != 1 || filepath.Base(found[0]) != "%2E.%2F..@x.jsonl" {
			t.Errorf("written: %v", found)
		}
	})
}

// TestMirrorLive: Run mirrors each push as it arrives (LISTEN/NOTIFY).
func TestMirrorLive(t *testing.T) {
	dsn, ok := storetest.Postgres(t)
	if !ok {
		t.Skip("no PostgreSQL")
	}
	st := open(t, dsn)
	a := newMachine(t, st, "laptop", 1)
	mr, c := mirror(t, st, t.TempDir())
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mr.Run(rctx) }()
	target := filepath.Join(mr.Dir(), "--home-dev-p0--", "laptop@"+filepath.Base(a.files[0]))
	want := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for !ok() {
			select {
			case <-c.ch:
			case <-deadline:
				t.Fatalf("%s: not mirrored within 20 s", what)
			}
		}
	}
	a.push(t)
	want("the first push", func() bool { data, _ := os.ReadFile(target); return len(data) > 0 })
	line := sessiontest.User("u901", "", 99, "live from the laptop")
	sessiontest.Append(t, a.files[0], line+"\n")
	a.push(t)
	want("an append", func() bool {
		data, _ := os.ReadFile(target)
		return strings.Contains(string(data), "live from the laptop")
	})
	want("every file", func() bool {
		for _, f := range a.files {
			rel, _ := filepath.Rel(a.dir, f)
			got, _ := os.ReadFile(filepath.Join(mr.Dir(), filepath.Dir(rel), "laptop@"+filepath.Base(rel)))
			if w, _ := os.ReadFile(f); string(got) != string(w) {
				return false
			}
		}
		return true
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Dir returns the mirror's folder: the root for a library.Library.
func (m *Mirror) Dir() string { return m.dir }
