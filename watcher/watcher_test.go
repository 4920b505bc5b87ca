package watcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"log/slog"

	"github.com/fsnotify/fsnotify"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
)

// wait bounds every wait for an event; generous for -race on a busy machine.
const wait = 2 * time.Minute

var clock atomic.Int64 // entry timestamps, increasing across the test binary

func header(id string) string {
	return fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`, id)
}

// entry returns a user message line (without newline); parent "" makes a root.
func entry(id, parent string) string {
	p := "null"
	if parent != "" {
		p = fmt.Sprintf("%q", parent)
	}
	ts := time.UnixMilli(1767225600000 + clock.Add(1)).UTC().Format("2006-01-02T15:04:05.000Z")
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"user","content":"text of %s","timestamp":1}}`, id, p, ts, id)
}

// chain returns lines for entries ids, each the child of the previous one.
func chain(ids ...string) string {
	var b strings.Builder
	parent := ""
	for _, id := range ids {
		b.WriteString(entry(id, parent) + "\n")
		parent = id
	}
	return b.String()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// project returns the path of a session file in a project folder of root.
func project(root, dir, name string) string { return filepath.Join(root, dir, name+".jsonl") }

// logWriter sends the watcher's log to the test log.
type logWriter struct{ t *testing.T }

func (l logWriter) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

type harness struct {
	t         *testing.T
	root      string
	lib       *library.Library
	w         *Watcher
	events    <-chan library.Change
	seen      []library.Change // every event received, for failure messages
	refreshed chan string      // paths the worker re-read
	done      chan error
}

// start opens the library over root and runs a watcher on it until the test
// ends; it returns once the watcher's first scan is done.
func start(t *testing.T, root string, opt Options, tweak func(*Watcher)) *harness {
	t.Helper()
	lib, err := library.OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	return startLib(t, lib, opt, tweak)
}

func startLib(t *testing.T, lib *library.Library, opt Options, tweak func(*Watcher)) *harness {
	t.Helper()
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	w, err := New(lib, opt)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: lib.Root, lib: lib, w: w, refreshed: make(chan string, 1<<14), done: make(chan error, 1)}
	w.afterRefresh = func(p string) {
		select {
		case h.refreshed <- p:
		default:
		}
	}
	if tweak != nil {
		tweak(w)
	}
	h.events, _ = w.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { h.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-h.done:
			if err != nil {
				t.Errorf("Run returned %v after cancel; want nil", err)
			}
		case <-time.After(wait):
			t.Errorf("Run did not return within %v of the context being cancelled", wait)
		}
	})
	select {
	case <-w.ready:
	case err := <-h.done:
		t.Fatalf("Run returned before its first scan: %v", err)
	case <-time.After(wait):
		t.Fatalf("the watcher's first scan did not finish within %v", wait)
	}
	return h
}

// next returns the next event; what says what the test is waiting for.
func (h *harness) next(what string) library.Change {
	h.t.Helper()
	select {
	case e, ok := <-h.events:
		if !ok {
			h.t.Fatalf("waiting for %s: the subscription was closed; events so far: %s", what, show(h.seen))
		}
		e.Gen = 0 // generations are the library's to number; the tests compare the rest
		h.seen = append(h.seen, e)
		return e
	case <-time.After(wait):
		h.t.Fatalf("waiting for %s: no event within %v; events so far: %s", what, wait, show(h.seen))
	}
	return library.Change{}
}

// expect reads the next event and checks it equals want.
func (h *harness) expect(what string, want library.Change) library.Change {
	h.t.Helper()
	got := h.next(what)
	if !reflect.DeepEqual(got, want) {
		h.t.Fatalf("%s:\n got %s\nwant %s\nevents so far: %s", what, show1(got), show1(want), show(h.seen))
	}
	return got
}

// collect reads events until done reports true for those read by this call.
func (h *harness) collect(what string, done func([]library.Change) bool) []library.Change {
	h.t.Helper()
	var evs []library.Change
	for !done(evs) {
		evs = append(evs, h.next(what))
	}
	return evs
}

// waitRefreshed waits until the worker has re-read path.
func (h *harness) waitRefreshed(path string) {
	h.t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case p := <-h.refreshed:
			if p == path {
				return
			}
		case <-deadline:
			h.t.Fatalf("the watcher did not re-read %s within %v; events so far: %s", path, wait, show(h.seen))
		}
	}
}

// ids returns the entry ids of session id as the library holds it.
func (h *harness) ids(id string) []string {
	h.t.Helper()
	var out []string
	if err := h.lib.View(id, func(s *sessions.Session) error {
		for _, e := range s.Entries {
			out = append(out, e.ID)
		}
		return nil
	}); err != nil {
		h.t.Fatalf("session %s: %v", id, err)
	}
	return out
}

func show1(e library.Change) string { return fmt.Sprintf("%+v", e) }

func show(evs []library.Change) string {
	if len(evs) == 0 {
		return "(none)"
	}
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("\n  " + show1(e))
	}
	return b.String()
}

func TestAppendOneByOne(t *testing.T) {
	root := t.TempDir()
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("e1"))
	h := start(t, root, Options{}, nil)
	prev := "e1"
	for i := 2; i <= 6; i++ {
		id := fmt.Sprintf("e%d", i)
		appendFile(t, p, entry(id, prev)+"\n")
		h.expect("append of "+id, library.Change{Key: "S", File: p, Kind: library.KindAppend, NewIDs: []string{id}, Leaf: id, OldLeaf: prev})
		prev = id
	}
	if got, want := h.ids("S"), []string{"e1", "e2", "e3", "e4", "e5", "e6"}; !slices.Equal(got, want) {
		t.Errorf("library ids %v; want %v", got, want)
	}
}

func TestAppendBurst(t *testing.T) {
	root := t.TempDir()
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("b0"))
	h := start(t, root, Options{}, nil)

	var want []string
	prev := "b0"
	next := func() string {
		id := fmt.Sprintf("b%d", len(want)+1)
		line := entry(id, prev) + "\n"
		want = append(want, id)
		prev = id
		return line
	}
	// 40 separate writes, then 40 lines in one write.
	for range 40 {
		appendFile(t, p, next())
	}
	var one strings.Builder
	for range 40 {
		one.WriteString(next())
	}
	appendFile(t, p, one.String())

	evs := h.collect("appends of the burst", func(evs []library.Change) bool {
		n := 0
		for _, e := range evs {
			if e.Kind != library.KindAppend {
				return true
			}
			n += len(e.NewIDs)
		}
		return n >= len(want)
	})
	var got []string
	for _, e := range evs {
		if e.Kind != library.KindAppend || e.Key != "S" || e.File != p {
			t.Fatalf("event %s; want only appends to S: %s", show1(e), show(evs))
		}
		got = append(got, e.NewIDs...)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("NewIDs across %d events:\n %v\nwant each id once, in file order:\n %v", len(evs), got, want)
	}
	if last := evs[len(evs)-1]; last.Leaf != prev {
		t.Errorf("last event leaf %q; want %q", last.Leaf, prev)
	}
	t.Logf("%d lines in 41 writes arrived in %d append events", len(want), len(evs))

	// Nothing else is pending for the file: the next event is the next append.
	appendFile(t, p, entry("marker", prev)+"\n")
	h.expect("the marker append", library.Change{Key: "S", File: p, Kind: library.KindAppend, NewIDs: []string{"marker"}, Leaf: "marker", OldLeaf: prev})
}

// sessions parses a final unterminated line when it is valid JSON (pi does
// too), so an entry appears before its newline; the newline then makes the
// library re-read the file, which is reported as a reload of the same entries.
func TestPartialLine(t *testing.T) {
	root := t.TempDir()
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("e1"))
	h := start(t, root, Options{}, nil)

	line := entry("e2", "e1")
	appendFile(t, p, line[:len(line)/2])
	h.waitRefreshed(p) // half a line is not an entry: no event (checked by the next expect)

	appendFile(t, p, line[len(line)/2:])
	h.expect("the completed but unterminated line", library.Change{Key: "S", File: p, Kind: library.KindAppend, NewIDs: []string{"e2"}, Leaf: "e2", OldLeaf: "e1"})

	appendFile(t, p, "\n")
	h.expect("the newline", library.Change{Key: "S", File: p, Kind: library.KindReload, Leaf: "e2", OldLeaf: "e2"})
	if got := h.ids("S"); !slices.Equal(got, []string{"e1", "e2"}) {
		t.Errorf("library ids %v; want [e1 e2]", got)
	}

	appendFile(t, p, entry("e3", "e2")+"\n")
	h.expect("the next append", library.Change{Key: "S", File: p, Kind: library.KindAppend, NewIDs: []string{"e3"}, Leaf: "e3", OldLeaf: "e2"})
}

func TestRewriteAndTruncate(t *testing.T) {
	root := t.TempDir()
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("e1", "e2", "e3"))
	h := start(t, root, Options{}, nil)

	// Rewritten in place with other content.
	if err := os.WriteFile(p, []byte(header("S")+"\n"+chain("e1", "x2")), 0o644); err != nil {
		t.Fatal(err)
	}
	h.expect("reload after a rewrite", library.Change{Key: "S", File: p, Kind: library.KindReload, Leaf: "x2", OldLeaf: "e3"})
	if got := h.ids("S"); !slices.Equal(got, []string{"e1", "x2"}) {
		t.Errorf("library ids after the rewrite %v; want [e1 x2]", got)
	}

	// Truncated to its first entry.
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	first := len(lines[0]) + len(lines[1])
	if err := os.Truncate(p, int64(first)); err != nil {
		t.Fatal(err)
	}
	h.expect("reload after a truncation", library.Change{Key: "S", File: p, Kind: library.KindReload, Leaf: "e1", OldLeaf: "x2"})
	if got := h.ids("S"); !slices.Equal(got, []string{"e1"}) {
		t.Errorf("library ids after the truncation %v; want [e1]", got)
	}
}

func TestRenameOver(t *testing.T) {
	root := t.TempDir()
	a, b := project(root, "--w--", "a"), project(root, "--w--", "b")
	writeFile(t, a, header("SA")+"\n"+chain("a1", "a2"))
	writeFile(t, b, header("SB")+"\n"+chain("b1", "b2", "b3"))
	h := start(t, root, Options{}, nil)

	// An atomic save of the same session: a temp file renamed over it.
	tmp := a + ".tmp"
	writeFile(t, tmp, header("SA")+"\n"+chain("a1", "n2"))
	if err := os.Rename(tmp, a); err != nil {
		t.Fatal(err)
	}
	h.expect("reload after an atomic save", library.Change{Key: "SA", File: a, Kind: library.KindReload, Leaf: "n2", OldLeaf: "a2"})

	// Another session renamed over it: SA leaves, SB now lives in a.
	if err := os.Rename(b, a); err != nil {
		t.Fatal(err)
	}
	// SA is removed, and SB comes alive in a: a reload of key SB in its new
	// file (b is gone from disk, so a takes the session over at once), or, if
	// b was read first, its removal and then SB new in a.
	evs := h.collect("events of the rename", func(evs []library.Change) bool {
		removedA, sbAtA := false, false
		for _, e := range evs {
			switch {
			case e.Key == "SA" && e.Kind == library.KindRemove && e.File == a:
				removedA = true
			case e.Key == "SB":
				sbAtA = e.File == a && (e.Kind == library.KindNew || e.Kind == library.KindReload)
			}
		}
		return removedA && sbAtA
	})
	if len(evs) > 3 {
		t.Errorf("got %d events for the rename; want at most 3: %s", len(evs), show(evs))
	}
	t.Logf("rename over another session: %s", show(evs))
	var last library.Change
	for _, e := range evs {
		if e.Key == "SB" {
			last = e
		}
	}
	if last.Kind == library.KindRemove || last.File != a || last.Leaf != "b3" {
		t.Errorf("the last event for SB is %s; want it alive in %s with leaf b3", show1(last), a)
	}
	if f, ok := h.lib.File("SB"); !ok || f != a {
		t.Errorf("library: SB in %q (%v); want %q", f, ok, a)
	}
	if _, ok := h.lib.File("SA"); ok {
		t.Error("library still holds SA")
	}
	if got := h.ids("SB"); !slices.Equal(got, []string{"b1", "b2", "b3"}) {
		t.Errorf("SB ids %v; want [b1 b2 b3]", got)
	}
	// The path keeps working under its new session.
	appendFile(t, a, entry("b4", "b3")+"\n")
	h.expect("append to the renamed file", library.Change{Key: "SB", File: a, Kind: library.KindAppend, NewIDs: []string{"b4"}, Leaf: "b4", OldLeaf: "b3"})
}

func TestRemoveAndMoves(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	a, b := project(root, "--w--", "a"), project(root, "--w--", "b")
	writeFile(t, a, header("SA")+"\n"+chain("a1"))
	writeFile(t, b, header("SB")+"\n"+chain("b1", "b2"))
	h := start(t, root, Options{}, nil)

	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	h.expect("remove after delete", library.Change{Key: "SA", File: a, Kind: library.KindRemove, OldLeaf: "a1"})
	if h.lib.Len() != 1 {
		t.Errorf("library holds %d sessions; want 1", h.lib.Len())
	}

	away := filepath.Join(outside, "b.jsonl")
	if err := os.Rename(b, away); err != nil {
		t.Fatal(err)
	}
	h.expect("remove after a move out of the tree", library.Change{Key: "SB", File: b, Kind: library.KindRemove, OldLeaf: "b2"})

	back := project(root, "--other--", "b")
	if err := os.MkdirAll(filepath.Dir(back), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(away, back); err != nil {
		t.Fatal(err)
	}
	h.expect("new after a move into the tree", library.Change{Key: "SB", File: back, Kind: library.KindNew, Leaf: "b2"})

	// A rename inside a folder: the session lives on in the new file.
	moved := project(root, "--other--", "b2")
	if err := os.Rename(back, moved); err != nil {
		t.Fatal(err)
	}
	// Usually one event, a reload of SB in the new file (its old file is gone
	// from disk when the new name is read); if the old name is read first, a
	// remove then a new one.
	evs := h.collect("events of a rename inside the tree", func(evs []library.Change) bool {
		return len(evs) > 0 && evs[len(evs)-1].Key == "SB" && evs[len(evs)-1].File == moved
	})
	if len(evs) > 2 {
		t.Errorf("got %d events for a rename inside the tree; want at most 2: %s", len(evs), show(evs))
	}
	t.Logf("rename inside the tree: %s", show(evs))
	last := evs[len(evs)-1]
	if last.Key != "SB" || last.File != moved || last.Kind == library.KindRemove || last.Leaf != "b2" {
		t.Errorf("events of a rename inside the tree: %s; want SB to end alive in %s", show(evs), moved)
	}
	if f, _ := h.lib.File("SB"); f != moved {
		t.Errorf("library: SB in %q; want %q", f, moved)
	}
}

func TestNewProjectFolder(t *testing.T) {
	root := t.TempDir()
	h := start(t, root, Options{}, nil)

	// The file is written right after the folder, likely before the watch lands.
	p := project(root, "--new--", "s")
	writeFile(t, p, header("S")+"\n"+chain("e1", "e2"))
	h.expect("new session in a new folder", library.Change{Key: "S", File: p, Kind: library.KindNew, Leaf: "e2"})

	// The folder is watched now.
	appendFile(t, p, entry("e3", "e2")+"\n")
	h.expect("append in the new folder", library.Change{Key: "S", File: p, Kind: library.KindAppend, NewIDs: []string{"e3"}, Leaf: "e3", OldLeaf: "e2"})

	// A session file directly in the root is a session too (SessionFiles lists it).
	top := filepath.Join(root, "top.jsonl")
	writeFile(t, top, header("T")+"\n"+chain("t1"))
	h.expect("new session in the root", library.Change{Key: "T", File: top, Kind: library.KindNew, Leaf: "t1"})
}

func TestNonSessionFiles(t *testing.T) {
	root := t.TempDir()
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("e1"))
	h := start(t, root, Options{}, nil)

	txt := filepath.Join(root, "--w--", "notes.txt")
	junk := project(root, "--w--", "junk")
	writeFile(t, txt, "not a session\n")
	writeFile(t, junk, `{"hello":"world"}`+"\n")
	h.waitRefreshed(junk)
	if _, ok := h.lib.Problems()[junk]; !ok {
		t.Errorf("library problems %v; want %s listed as not a session", h.lib.Problems(), junk)
	}
	if _, ok := h.lib.Problems()[txt]; ok {
		t.Errorf("library problems list %s; .txt files must be ignored", txt)
	}
	// Nothing was published for either: the next event is the append.
	appendFile(t, p, entry("e2", "e1")+"\n")
	h.expect("append after the non-session files", library.Change{Key: "S", File: p, Kind: library.KindAppend, NewIDs: []string{"e2"}, Leaf: "e2", OldLeaf: "e1"})

	// A session rewritten into something else leaves the library, with why.
	writeFile(t, p, "garbage\n")
	e := h.next("remove of a session that is no longer one")
	if e.Kind != library.KindRemove || e.Key != "S" || e.File != p || !strings.Contains(e.Error, "not a pi session") {
		t.Errorf("got %s; want a remove of S saying it is not a session", show1(e))
	}
	writeFile(t, p, header("S")+"\n"+chain("e1"))
	h.expect("new once it is a session again", library.Change{Key: "S", File: p, Kind: library.KindNew, Leaf: "e1"})
}

// Changes made between loading the library and the watch landing are reported by the first scan.
func TestFirstScanCatchesUp(t *testing.T) {
	root := t.TempDir()
	a, b := project(root, "--w--", "a"), project(root, "--w--", "b")
	writeFile(t, a, header("SA")+"\n"+chain("a1"))
	writeFile(t, b, header("SB")+"\n"+chain("b1")+entry("b2", "b1")) // unterminated last line
	lib, err := library.OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, a, entry("a2", "a1")+"\n")
	c := project(root, "--v--", "c")
	writeFile(t, c, header("SC")+"\n"+chain("c1"))
	h := startLib(t, lib, Options{}, nil)
	evs := h.collect("events of the first scan", func(evs []library.Change) bool { return len(evs) == 2 })
	slices.SortFunc(evs, func(x, y library.Change) int { return strings.Compare(x.Key, y.Key) })
	want := []library.Change{
		{Key: "SA", File: a, Kind: library.KindAppend, NewIDs: []string{"a2"}, Leaf: "a2", OldLeaf: "a1"},
		{Key: "SC", File: c, Kind: library.KindNew, Leaf: "c1"},
	}
	if !reflect.DeepEqual(evs, want) {
		t.Fatalf("first scan events: %s\nwant: %s", show(evs), show(want))
	}
	// b was unchanged: nothing for it. The next event is for a later change.
	appendFile(t, a, entry("a3", "a2")+"\n")
	h.expect("append after the first scan", library.Change{Key: "SA", File: a, Kind: library.KindAppend, NewIDs: []string{"a3"}, Leaf: "a3", OldLeaf: "a2"})
}

// Without notifications (a network filesystem), the rescan finds every change.
func TestRescanOnly(t *testing.T) {
	root := t.TempDir()
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("e1"))
	h := start(t, root, Options{Rescan: 20 * time.Millisecond}, func(w *Watcher) { w.noWatch = true })

	appendFile(t, p, entry("e2", "e1")+"\n")
	h.expect("append found by the rescan", library.Change{Key: "S", File: p, Kind: library.KindAppend, NewIDs: []string{"e2"}, Leaf: "e2", OldLeaf: "e1"})
	q := project(root, "--new--", "q")
	writeFile(t, q, header("Q")+"\n"+chain("q1"))
	h.expect("new found by the rescan", library.Change{Key: "Q", File: q, Kind: library.KindNew, Leaf: "q1"})
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	h.expect("remove found by the rescan", library.Change{Key: "S", File: p, Kind: library.KindRemove, OldLeaf: "e2"})
}

// A project folder moved out of the tree takes its sessions with it, silently for fsnotify.
func TestProjectFolderMovedOut(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("e1"))
	h := start(t, root, Options{Rescan: -1}, nil)

	away := filepath.Join(outside, "--w--")
	if err := os.Rename(filepath.Dir(p), away); err != nil {
		t.Fatal(err)
	}
	h.expect("remove after the folder left", library.Change{Key: "S", File: p, Kind: library.KindRemove, OldLeaf: "e1"})
	if err := os.Rename(away, filepath.Dir(p)); err != nil {
		t.Fatal(err)
	}
	h.expect("new after the folder came back", library.Change{Key: "S", File: p, Kind: library.KindNew, Leaf: "e1"})
	appendFile(t, p, entry("e2", "e1")+"\n")
	h.expect("append in the returned folder", library.Change{Key: "S", File: p, Kind: library.KindAppend, NewIDs: []string{"e2"}, Leaf: "e2", OldLeaf: "e1"})
}

func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	root := t.TempDir()
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("e1"))
	lib, err := library.OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(lib, Options{Rescan: 10 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(logWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := w.Subscribe()
	b, cancelB := w.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	appendFile(t, p, entry("e2", "e1")+"\n")
	select {
	case e := <-a:
		if e.Kind != library.KindAppend {
			t.Fatalf("got %s; want an append", show1(e))
		}
	case <-time.After(wait):
		t.Fatal("no event within", wait)
	}
	appendFile(t, p, entry("e3", "e2")+"\n") // leaves a timer or a refresh in flight
	cancelB()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v; want nil", err)
		}
	case <-time.After(wait):
		t.Fatal("Run did not return after cancel")
	}
	for _, ch := range []<-chan library.Change{a, b} {
		timeout := time.After(wait)
	drain:
		for {
			select {
			case _, ok := <-ch:
				if !ok {
					break drain
				}
			case <-timeout:
				t.Fatal("a subscription was not closed when Run returned")
			}
		}
	}
	if c, _ := w.Subscribe(); c != nil {
		if _, ok := <-c; ok {
			t.Error("Subscribe after Run returned gave an open channel")
		}
	}
	lib.Publish(library.Change{Kind: library.KindNew, Key: "late"}) // must not block or panic
	deadline := time.Now().Add(wait)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			var buf strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
			t.Fatalf("%d goroutines after Run returned; %d before:\n%s", runtime.NumGoroutine(), before, buf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := w.Run(context.Background()); err == nil {
		t.Error("a second Run returned nil; want an error")
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("add: %w", syscall.ENOSPC), "fs.inotify.max_user_watches"},
		{syscall.EMFILE, "fs.inotify.max_user_instances"},
		{os.ErrPermission, "watch x: permission denied"},
	} {
		if got := explain(c.err, "watch x").Error(); !strings.Contains(got, c.want) {
			t.Errorf("explain(%v) = %q; want it to mention %q", c.err, got, c.want)
		}
	}

	root := t.TempDir()
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("e1"))
	h := start(t, root, Options{Rescan: -1}, func(w *Watcher) { w.noWatch = true })
	// An overflow means lost events: it is reported, then a rescan finds what they said.
	appendFile(t, p, entry("e2", "e1")+"\n")
	h.w.fsError(fsnotify.ErrEventOverflow)
	e := h.next("the overflow error")
	if e.Kind != library.KindError || !strings.Contains(e.Error, "rescanning") || !strings.Contains(e.Error, "max_queued_events") {
		t.Errorf("got %s; want an error event saying it rescans and what to raise", show1(e))
	}
	h.expect("append found by the rescan", library.Change{Key: "S", File: p, Kind: library.KindAppend, NewIDs: []string{"e2"}, Leaf: "e2", OldLeaf: "e1"})
}

// leafID returns the id of the entry pi resumes from, or "".
func leafID(s *sessions.Session) string {
	if i := s.Leaf(); i >= 0 {
		return s.Entries[i].ID
	}
	return ""
}

// TestFirstWriteAtOnce: the first write to a quiet file is read without
// waiting out the debounce (here an hour, so only the leading read can
// deliver it), and a rewritten name still waits for its debounce.
func TestFirstWriteAtOnce(t *testing.T) {
	root := t.TempDir()
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("e1"))
	h := start(t, root, Options{Debounce: time.Hour}, nil)
	appendFile(t, p, entry("e2", "e1")+"\n")
	h.expect("the first append, read at once", library.Change{Key: "S", File: p, Kind: library.KindAppend, NewIDs: []string{"e2"}, Leaf: "e2", OldLeaf: "e1"})
}

// Subscribe returns the library's later changes and a cancel func; a
// lagging subscriber never blocks anyone.
func (w *Watcher) Subscribe() (<-chan library.Change, func()) {
	return w.lib.Subscribe()
}
