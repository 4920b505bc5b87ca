package library

import (
	"fmt"
	"github.com/piweb/piweb/internal/sessiontest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/piweb/piweb/sessions"
)

// treeOf describes every link, child list, label and id look-up of s, to
// compare a snapshot before and after others are made from it.
func treeOf(s *sessions.Session) string {
	var b strings.Builder
	fmt.Fprintf(&b, "n=%d size=%d name=%q leaf=%d roots=%v count=%d\n", len(s.Entries), s.Size, s.Name(), s.Leaf(), s.Roots(), s.EntryCount())
	for i := range s.Entries {
		id := s.Entries[i].ID
		at, _ := s.Lookup(id)
		fmt.Fprintf(&b, "%d %s parent=%d kids=%v label=%q at=%d\n", i, id, s.Parent(i), s.Children(i), s.LabelOf(i), at)
	}
	return b.String()
}

// TestNextSnapshot: Next makes a new snapshot for appended lines and never
// changes the one it came from, which readers keep reading meanwhile (run
// with -race, the readers below and the appends overlap).
func TestNextSnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	lines := []string{`{"type":"session","version":3,"id":"S","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`}
	entry := func(id, parent, ts string, extra string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:%s.000Z","message":{"role":"user","content":"m %s"}%s}`, id, p, ts, id, extra)
	}
	for i := range 600 { // more than two chunks of children, more than recentMax ids when appended
		parent := ""
		if i > 0 {
			parent = fmt.Sprintf("e%d", i-1)
		}
		lines = append(lines, entry(fmt.Sprintf("e%d", i), parent, "10", ""))
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := sessions.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	appendLine := func(line string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.WriteString(line + "\n")
	}
	var snaps []*sessions.Session
	var want []string
	var wg sync.WaitGroup
	stop := make(chan struct{})
	cur := s
	for round := range 1200 {
		snaps = append(snaps, cur)
		want = append(want, "")
		if round%100 == 0 {
			want[len(want)-1] = treeOf(cur)
			kept := cur
			exp := want[len(want)-1]
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if got := treeOf(kept); got != exp {
						t.Errorf("a snapshot changed under its reader")
						return
					}
				}
			})
		}
		switch {
		case round%50 == 7: // a sibling, sorted among earlier children by time
			appendLine(entry(fmt.Sprintf("b%d", round), "e3", "05", ""))
		case round%40 == 3:
			appendLine(fmt.Sprintf(`{"type":"label","id":"l%d","parentId":"e0","timestamp":"2026-01-01T00:01:00.000Z","targetId":"e%d","label":"L%d"}`, round, round%600, round))
		case round%90 == 11:
			appendLine(fmt.Sprintf(`{"type":"session_info","id":"i%d","parentId":"e0","timestamp":"2026-01-01T00:01:00.000Z","name":"N%d"}`, round, round))
		default:
			appendLine(entry(fmt.Sprintf("x%d", round), fmt.Sprintf("e%d", round%600), "20", ""))
		}
		next, d, err := cur.Next()
		if err != nil || next == cur || d.Reloaded || len(d.New) != 1 {
			t.Fatalf("round %d: %v %v %+v", round, err, next == cur, d)
		}
		cur = next
	}
	close(stop)
	wg.Wait()
	for k, exp := range want {
		if exp != "" && treeOf(snaps[k]) != exp {
			t.Fatalf("snapshot %d changed", k)
		}
	}
	// The last snapshot is what reading the file afresh gives.
	fresh, err := sessions.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if treeOf(fresh) != treeOf(cur) {
		t.Error("the appended snapshot differs from a fresh read")
	}
	if !slices.Equal(fresh.Entries, cur.Entries) {
		t.Error("entries differ from a fresh read")
	}
}

// chainFiles writes n sessions of entries user messages in one chain
// under root's project "--p--", and returns their paths.
func chainFiles(t *testing.T, root string, n, entries int) []string {
	t.Helper()
	dir := filepath.Join(root, "--p--")
	os.MkdirAll(dir, 0o700)
	var files []string
	for k := range n {
		p := filepath.Join(dir, fmt.Sprintf("2026-01-01T00-00-0%d-000Z_s%d.jsonl", k, k))
		var b strings.Builder
		fmt.Fprintf(&b, `{"type":"session","version":3,"id":"s%d","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`+"\n", k)
		for i := range entries {
			fmt.Fprintf(&b, `{"type":"message","id":"e%d","parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}`+"\n", i, map[bool]string{true: "null", false: fmt.Sprintf(`"e%d"`, i-1)}[i == 0])
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return files
}

// TestLibraryOnDemand: a seeded library reads a tree only when asked, keeps
// at most its limit of trees, and reads a dropped one again when needed.
func TestLibraryOnDemand(t *testing.T) {
	root := t.TempDir()
	var metas []sessions.Meta
	for _, p := range chainFiles(t, root, 6, 200) {
		s, err := sessions.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		metas = append(metas, s.Meta())
	}
	l := NewLibrary(root)
	one := TreeCost(&sessions.Session{Entries: make([]sessions.Entry, 200)})
	l.SetCacheLimit(2 * one)
	for _, m := range metas {
		l.Seed(m)
	}
	if l.CacheBytes() != 0 || l.Len() != 6 {
		t.Fatalf("seeding read trees: %d bytes, %d sessions", l.CacheBytes(), l.Len())
	}
	before := sessions.BytesRead.Load()
	for _, m := range metas {
		if err := l.View(m.ID, func(s *sessions.Session) error {
			if len(s.Entries) != 200 {
				return fmt.Errorf("%d entries", len(s.Entries))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if l.CacheBytes() > 2*one {
			t.Fatalf("the cache holds %d bytes, its limit is %d", l.CacheBytes(), 2*one)
		}
	}
	if sessions.BytesRead.Load() == before {
		t.Error("no tree was read")
	}
	loaded := 0
	for _, m := range metas {
		if l.Loaded(m.File) != nil {
			loaded++
		}
	}
	if loaded != 2 {
		t.Errorf("%d trees loaded, want the 2 most recently used", loaded)
	}
	if l.Loaded(metas[5].File) == nil || l.Loaded(metas[0].File) != nil {
		t.Error("the least recently used tree was kept")
	}
	// Read again once dropped.
	if _, err := l.Session(metas[0].ID); err != nil || l.Loaded(metas[0].File) == nil {
		t.Errorf("a dropped tree is not read again: %v", err)
	}
}

// TestPeekRelease: a tree read by Peek alone stays cold and Release drops
// it; one a reader used (before or after the Peek) stays.
func TestPeekRelease(t *testing.T) {
	root := t.TempDir()
	files := chainFiles(t, root, 3, 1)
	l, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files { // what opening loaded is cold: dropped
		l.Release(f)
	}
	if l.CacheBytes() != 0 {
		t.Fatalf("%d bytes of trees loaded after releasing every file", l.CacheBytes())
	}
	if _, err := l.SessionOf(files[0]); err != nil { // used, then peeked
		t.Fatal(err)
	}
	for _, f := range files {
		if s, err := l.Peek(f); err != nil || len(s.Entries) != 1 {
			t.Fatalf("Peek %s: %v", f, err)
		}
	}
	if _, err := l.SessionOf(files[1]); err != nil { // peeked, then used
		t.Fatal(err)
	}
	for _, f := range files {
		l.Release(f)
	}
	for k, want := range []bool{true, true, false} {
		if got := l.Loaded(files[k]) != nil; got != want {
			t.Errorf("file %d: loaded %v after Release, want %v", k, got, want)
		}
	}
}

// TestColdQuarter: trees the library read for itself (opening the root)
// take a quarter of the cache at most; those readers use take the rest.
func TestColdQuarter(t *testing.T) {
	root := t.TempDir()
	files := chainFiles(t, root, 6, 100)
	one := TreeCost(&sessions.Session{Entries: make([]sessions.Entry, 100)})
	l := NewLibrary(root)
	l.SetCacheLimit(4 * one)
	for _, f := range files {
		if _, err := l.Refresh(f); err != nil {
			t.Fatal(err)
		}
		if l.CacheBytes() > one {
			t.Fatalf("%d bytes of trees nobody used, want %d at most", l.CacheBytes(), one)
		}
	}
	for _, f := range files[:3] {
		if _, err := l.SessionOf(f); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files[:3] {
		if l.Loaded(f) == nil {
			t.Errorf("%s: a used tree was dropped within the limit", filepath.Base(f))
		}
	}
	if l.CacheBytes() > 4*one {
		t.Errorf("the cache holds %d bytes, its limit is %d", l.CacheBytes(), 4*one)
	}
}

// TestNextMeta: the summary Next extends from the one before is the one a
// fresh read computes, whatever was appended (children, branches, roots,
// names, models, times).
func TestNextMeta(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	write := func(lines ...string) {
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		f.WriteString(strings.Join(lines, "\n") + "\n")
		f.Close()
	}
	write(`{"type":"session","version":3,"id":"S","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`)
	s, err := sessions.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	msg := func(id, parent, role, ts, extra string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:%s.000Z","message":{"role":%q,"content":"t %s"%s}}`, id, p, ts, role, id, extra)
	}
	usage := `,"provider":"p","model":"m%d","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":0.5}}`
	steps := [][]string{
		{msg("u1", "", "user", "01:00", "")},
		{msg("a1", "u1", "assistant", "02:00", fmt.Sprintf(usage, 1)), msg("u2", "a1", "user", "03:00", "")},
		{msg("a2", "u1", "assistant", "04:00", fmt.Sprintf(usage, 2))}, // a branch at u1
		{msg("a3", "u1", "assistant", "00:30", fmt.Sprintf(usage, 1))}, // a third child, earlier in time
		{msg("r2", "", "user", "05:00", "")},                           // a second root
		{`{"type":"session_info","id":"n1","parentId":"r2","timestamp":"2026-01-01T00:06:00.000Z","name":"Named"}`},
		{msg("x1", "u2", "user", "07:00", ""), msg("x2", "x1", "assistant", "08:00", fmt.Sprintf(usage, 3)), msg("x3", "x1", "user", "09:00", "")},
	}
	for k, lines := range steps {
		write(lines...)
		n, _, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := sessions.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		got, want := n.Meta(), fresh.Meta()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("step %d: Next's summary\n%+v\na fresh read's\n%+v", k, got, want)
		}
		s = n
	}
}

// TestReadKeepsVersion: reading a tree whose row the library already had
// (seeded from the store, with its times in UTC, or dropped from the cache)
// leaves the library's version as it was, so the sessions list stays drawn;
// a file that changed moves it on.
func TestReadKeepsVersion(t *testing.T) {
	root := t.TempDir()
	files := chainFiles(t, root, 3, 20)
	l := NewLibrary(root)
	for _, f := range files {
		s, err := sessions.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		m := s.Meta()
		m.Created, m.Modified, m.FileModified = m.Created.UTC(), m.Modified.UTC(), m.FileModified.UTC()
		l.Seed(m) // as the store gives it back
	}
	_, v0 := l.Listed()
	for _, f := range files {
		if _, err := l.SessionOf(f); err != nil {
			t.Fatal(err)
		}
	}
	if _, v := l.Listed(); v != v0 {
		t.Errorf("reading the seeded files' trees moved the version from %d to %d", v0, v)
	}
	l.Release(files[0])
	l.SetCacheLimit(1) // every tree dropped but the one read
	for _, f := range files {
		if _, err := l.SessionOf(f); err != nil {
			t.Fatal(err)
		}
	}
	if _, v := l.Listed(); v != v0 {
		t.Errorf("reading dropped trees again moved the version from %d to %d", v0, v)
	}
	sessiontest.Append(t, files[1], `{"type":"message","id":"x","parentId":"e19","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"more"}}`+"\n")
	if _, err := l.Refresh(files[1]); err != nil {
		t.Fatal(err)
	}
	metas, v := l.Listed()
	if v == v0 {
		t.Error("an appended file left the version as it was")
	}
	for _, m := range metas {
		if m.File == files[1] && m.Entries != 21 {
			t.Errorf("the appended file's row: %d entries, want 21", m.Entries)
		}
	}
}

// TestReadWhileReleased: a read that loads a tree returns it even when
// another reader's Release drops it at once (the indexer's Peek and
// Release beside a search's read of the same file; Peek's trees stay
// cold, so every Release here drops one).
func TestReadWhileReleased(t *testing.T) {
	root := t.TempDir()
	files := chainFiles(t, root, 1, 50)
	l, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				if s, err := l.Peek(files[0]); err != nil || len(s.Entries) != 50 {
					errs <- fmt.Errorf("read while others release: %v", err)
					return
				}
				l.Release(files[0])
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
