package catalog

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/search"
	"github.com/piweb/piweb/store"
)

// oddRoot writes generated sessions and files of every oddity the reading
// of a file meets, in two projects, each file modified an hour after the
// one before; it returns the root and the files, oldest first.
func oddRoot(t *testing.T) (string, []string) {
	t.Helper()
	root := t.TempDir()
	u, a, e, lines := sessiontest.User, sessiontest.Asst, sessiontest.Entry, sessiontest.Lines
	h := sessiontest.Header
	odd := []string{
		lines(h, u("a", "", 1, "duplicate ids wombat"), a("b", "a", 2, "first reply"), u("a", "b", 3, "again a wombat"), a("b", "a", 4, "again b")),
		lines(h, u("a", "", 1, "not objects follow"), `42`, `"text"`, `[1,2]`, `0`, `null`, a("b", "a", 2, "after the values wombat")),
		lines(h, u("a", "", 1, "malformed lines follow"), `{"type":"message","id":"x",`, `not json`, a("b", "a", 2, "after the bad lines"), `{"a":1} trailing`),
		strings.ReplaceAll(lines(h, "", "  ", u("a", "", 1, "crlf and blank lines"), "", a("b", "a", 2, "crlf reply")), "\n", "\r\n"),
		lines(h, u("a", "", 1, "an unterminated line comes")) + a("b", "a", 2, "unterminated wombat"),
		lines(h, u("a", "", 1, "a broken unterminated line comes")) + `{"type":"message","id":"b"`,
		lines(h, `  {"type":"message","id":"a\u0062","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"escaped id"}}`,
			`{"type":"message","id":"x","id":"y","parentId":"ab","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":"two ids"}}`,
			`{"type":"message","id":7,"parentId":"y","timestamp":"2026-01-01T00:00:03Z","message":{"role":"user","content":"number id wombat"}}`),
		lines(h, u("a", "", 1, "second header follows"), strings.Replace(h, `"s1"`, `"s2"`, 1), a("b", "a", 2, "after the header")),
		lines(h, e("message", "a", "", 1, `,"message":{"role":"user","content":"caf`+"\xe9 \xff wombat"+`"}`), a("b", "a", 2, "bad \xc3 bytes")),
		lines(strings.Replace(h, `"version":3`, `"version":2`, 1), u("a", "", 1, "a version 2 file"), e("message", "b", "a", 2, `,"message":{"role":"hookMessage","customType":"x","content":"hook wombat"}`)),
		lines(`{"type":"session","id":"v1s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`,
			`{"type":"message","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"a version 1 file wombat"}}`,
			`{"type":"compaction","timestamp":"2026-01-01T00:00:02Z","summary":"v1 summary","firstKeptEntryIndex":1}`),
		lines(u("a", "", 1, "no header wombat"), h),
		"",
		h,
		"plain text, not a session\n",
	}
	var files []string
	mt := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	write := func(dir, name, data string) {
		dir = filepath.Join(root, dir)
		os.MkdirAll(dir, 0o755)
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		mt = mt.Add(time.Hour)
		os.Chtimes(f, mt, mt)
		files = append(files, f)
	}
	for i := range 24 {
		if i < len(odd) {
			write(fmt.Sprintf("--home-dev-odd%d--", i%2), fmt.Sprintf("odd%02d.jsonl", i), odd[i])
		}
		o := sessiontest.Options{Start: time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC), Scale: 0.3}
		if i == 0 {
			o.BigEvery = 4
		}
		write(fmt.Sprintf("--home-dev-proj%d--", i%2), fmt.Sprintf("s%03d.jsonl", i), sessiontest.String(int64(i+1), 30+7*i, o))
	}
	return root, files
}

// storeDocs lists every document of c's store, newest (highest id) first.
func storeDocs(t *testing.T, c *Catalog) []store.Hit {
	t.Helper()
	q, err := search.Parse("re:.")
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Hit
	for cursor := ""; ; {
		p, err := c.st.Search(context.Background(), q, store.SearchOptions{Limit: 500, Cursor: cursor, MaxExamined: 1 << 20,
			Text: func(*store.Hit) (string, error) { return "x", nil }})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Scanned {
			t.Fatal("re:. was not a scan in document order")
		}
		for _, h := range p.Hits {
			h.Score, h.Snippet, h.Ranges = 0, "", nil
			out = append(out, h)
		}
		if cursor = p.Next; cursor == "" {
			return out
		}
	}
}

// build runs a first build of root into a new store, with the newest
// files read first up to share and most bytes, all fused (or, with fuse
// false, each read plainly and then synced); it returns the store's
// documents (newest first), its records and the hits of queries.
func build(t *testing.T, root string, fuse bool, share, most int64) ([]store.Hit, []store.Record, map[string][]string) {
	t.Helper()
	defer func(s, m int64, f bool) { firstShare, firstMax, fuseFirst = s, m, f }(firstShare, firstMax, fuseFirst)
	firstShare, firstMax, fuseFirst = share, most, fuse
	c, stop := run(t, root, filepath.Join(t.TempDir(), "index.db"))
	defer stop()
	docs := storeDocs(t, c)
	recs, err := c.st.All()
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].ModTime = 0 // the time of the record's write
	}
	slices.SortFunc(recs, func(a, b store.Record) int { return strings.Compare(a.File, b.File) })
	hits := map[string][]string{}
	for _, qs := range []string{"wombat", "the", "error", "refactor handler", "role:user test", "role:summary", "project:odd0 wombat", `"fix the"`, "-wombat a", "caf"} {
		q, err := search.Parse(qs)
		if err != nil {
			t.Fatal(err)
		}
		for cursor := ""; ; {
			res, err := c.Search(context.Background(), q, 200, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				hits[qs] = append(hits[qs], h.Key+"/"+h.EntryID+":"+h.Type+":"+h.Place)
			}
			if res.Next == nil {
				break
			}
			cursor = *res.Next
		}
		slices.Sort(hits[qs]) // the order of equals follows the documents' order, which may differ
	}
	return docs, recs, hits
}

// TestFusedBuild: a first build that reads each file once (its documents
// built as the library reads it) puts in the store exactly what reading
// the files and then their lines again does; and its documents are
// numbered oldest file first, the newest files (read first, into a batch
// of their own) last, in their order too.
func TestFusedBuild(t *testing.T) {
	root, files := oddRoot(t)
	twoDocs, twoRecs, twoHits := build(t, root, false, 1, math.MaxInt64) // every file read plainly, then by sync
	defer func(n int) { fillers = n }(fillers)
	fillers = 1 // one goroutine: documents numbered in exactly the order of the files
	var total int64
	for _, f := range files {
		fi, _ := os.Stat(f)
		total += fi.Size()
	}
	var fusedN atomic.Int64
	testFused = func(string) { fusedN.Add(1) }
	defer func() { testFused = nil }()
	docs, recs, hits := build(t, root, true, 4, math.MaxInt64) // the newest quarter first
	key := func(h store.Hit) string {
		return fmt.Sprintf("%s/%s/%d/%d/%s/%s/%d/%s", h.File, h.EntryID, h.Position, h.Part, h.Type, h.Role, h.Time, h.Project)
	}
	sorted := func(hs []store.Hit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, key(h))
		}
		slices.Sort(out)
		return out
	}
	if a, b := sorted(docs), sorted(twoDocs); !slices.Equal(a, b) {
		t.Errorf("documents: %d fused, %d in two passes", len(a), len(b))
		for _, d := range a {
			if !slices.Contains(b, d) {
				t.Errorf("only fused: %s", d)
			}
		}
		for _, d := range b {
			if !slices.Contains(a, d) {
				t.Errorf("only in two passes: %s", d)
			}
		}
	}
	if len(docs) < 500 {
		t.Fatalf("only %d documents", len(docs))
	}
	if !slices.EqualFunc(recs, twoRecs, func(a, b store.Record) bool {
		return a.File == b.File && a.Size == b.Size && string(a.Stamp) == string(b.Stamp) && string(a.Blob) == string(b.Blob)
	}) {
		t.Errorf("records differ")
	}
	for qs, want := range twoHits {
		if got := hits[qs]; !slices.Equal(got, want) {
			t.Errorf("%q: %v, two passes %v", qs, got, want)
		}
	}
	if len(twoHits["wombat"]) < 6 {
		t.Errorf("wombat: %v", twoHits["wombat"])
	}

	// Order: the files read first (the newest, up to a quarter of the
	// bytes) are numbered last; each part in file order, oldest first.
	plain := map[string]bool{}
	for i, sum := len(files)-1, int64(0); i >= 0 && sum < total/4; i-- {
		fi, _ := os.Stat(files[i])
		sum += fi.Size()
		plain[files[i]] = true
	}
	age := map[string]int{}
	for i, f := range files {
		age[f] = i
	}
	var order []string // files by their documents, oldest document first
	for i := len(docs) - 1; i >= 0; i-- {
		if f := docs[i].File; len(order) == 0 || order[len(order)-1] != f {
			order = append(order, f)
		}
	}
	seen := map[string]bool{}
	for k, f := range order {
		if seen[f] {
			t.Fatalf("the documents of %s are not together", f)
		}
		seen[f] = true
		if k == 0 {
			continue
		}
		p := order[k-1]
		switch {
		case plain[p] && !plain[f]:
			t.Errorf("%s (read first) numbered before %s", p, f)
		case plain[p] == plain[f] && age[p] > age[f]:
			t.Errorf("%s numbered before the older %s", p, f)
		}
	}
	if n := len(plain); n < 2 || n > len(files)/2 {
		t.Errorf("%d of %d files read first", n, len(files))
	}
	// Fused: every file but the version 1 file and the 3 that are not
	// sessions.
	want := len(files)
	for _, f := range files {
		if b := filepath.Base(f); slices.Contains([]string{"odd10.jsonl", "odd11.jsonl", "odd12.jsonl", "odd14.jsonl"}, b) {
			want--
		}
	}
	if n := fusedN.Load(); n != int64(want) {
		t.Errorf("%d files fused, want %d", n, want)
	}
}
