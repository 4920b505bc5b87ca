package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/search"
)

// corpus remembers the texts given to a store, to give them back as the
// session files would.
type corpus struct {
	s     *Store
	texts map[string]string
	reads int
}

func newCorpus(t *testing.T) *corpus {
	return &corpus{s: openT(t, filepath.Join(t.TempDir(), "index.db")), texts: map[string]string{}}
}

func key(file, entry string, part int) string { return fmt.Sprintf("%s|%s|%d", file, entry, part) }

func (c *corpus) add(t *testing.T, file string, docs ...Doc) {
	t.Helper()
	for _, d := range docs {
		c.texts[key(file, d.EntryID, d.Part)] = d.Text
	}
	if err := c.s.AddDocs(file, docs); err != nil {
		t.Fatal(err)
	}
}

func (c *corpus) drop(t *testing.T, file string) {
	t.Helper()
	for k := range c.texts {
		if strings.HasPrefix(k, file+"|") {
			delete(c.texts, k)
		}
	}
	if err := c.s.DeleteDocs(file); err != nil {
		t.Fatal(err)
	}
}

func (c *corpus) text(h *Hit) (string, error) {
	c.reads++
	t, ok := c.texts[key(h.File, h.EntryID, h.Part)]
	if !ok {
		return "", errors.New("gone")
	}
	return t, nil
}

var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()

func doc(entry string, part int, role, project string, minute int, text string) Doc {
	return Doc{EntryID: entry, Position: minute, Part: part, Type: "text", Role: role, Project: project,
		Time: base + int64(minute)*60_000, Text: text}
}

// find runs q and returns the hits as "file:entry" strings, one page of limit.
func (c *corpus) find(t *testing.T, q string, o SearchOptions) ([]string, Page) {
	t.Helper()
	pq, err := search.ParseAt(q, time.UnixMilli(base).Add(24*time.Hour).UTC())
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	o.Text = c.text
	p, err := c.s.Search(context.Background(), pq, o)
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	var out []string
	for _, h := range p.Hits {
		out = append(out, h.File+":"+h.EntryID)
	}
	return out, p
}

func fill(t *testing.T) *corpus {
	c := newCorpus(t)
	c.add(t, "a.jsonl",
		doc("a1", 0, "user", "--home-dev-piweb--", 1, "Please refactor the requestHandler in server.go"),
		doc("a2", 0, "assistant", "--home-dev-piweb--", 2, "I will refactor the handler. First the tests; the build fails with error E42."),
		doc("a2", 1, "assistant", "--home-dev-piweb--", 2, "thinking about the refactor"),
		doc("a3", 0, "tool", "--home-dev-piweb--", 3, "go test ./...\nFAIL server_test.go:12 expected 200 got 500"),
		doc("a4", 0, "bash", "--home-dev-piweb--", 4, "git commit -m \"fix: handler\""),
	)
	c.add(t, "b.jsonl",
		doc("b1", 0, "user", "--home-dev-other--", 10, "日本語のテキストを検索する 🚀 launch"),
		doc("b2", 0, "summary", "--home-dev-other--", 11, "Summary: the café handler was rewritten"),
		doc("b3", 0, "label", "--home-dev-other--", 12, "before refactor"),
	)
	return c
}

func TestSearch(t *testing.T) {
	c := fill(t)
	for _, tc := range []struct {
		q    string
		want []string // in order when order matters (distinct scores or times)
	}{
		{"handler", []string{"a4", "b2", "a1", "a2"}},
		{"HANDLER fix", []string{"a4"}},
		{"andler", nil},
		{`"the handler"`, []string{"a2"}},
		{`"handler the"`, nil},
		{"refactor -handler", []string{"b3", "a2"}},
		{"refactor role:user", []string{"a1"}},
		{"refactor -role:user -role:label", []string{"a2", "a2"}}, // two parts of one entry
		{"handler project:piweb", []string{"a4", "a1", "a2"}},
		{"handler -project:piweb", []string{"b2"}},
		{"handler project:nothing", nil},
		{"role:label", []string{"b3"}},
		{"日本", []string{"b1"}},
		{"テキスト", []string{"b1"}},
		{"検", []string{"b1"}},
		{"🚀", []string{"b1"}},
		{"café", []string{"b2"}},
		{"server.go", []string{"a1"}},
		{"server", []string{"a3", "a1"}},
		{"re:E\\d+", []string{"a2"}},
		{`re:"expected \d+ got"`, []string{"a3"}},
		{"re:handler role:bash", []string{"a4"}},
		{"-handler role:user", []string{"b1"}},
		{"handler before:2026-03-01T12:03", nil}, // not a date: checked in the parse test
	} {
		if strings.Contains(tc.q, "T12:03") {
			continue
		}
		got, _ := c.find(t, tc.q, SearchOptions{Limit: 50})
		var entries []string
		for _, g := range got {
			entries = append(entries, g[strings.IndexByte(g, ':')+1:])
		}
		if !slices.Equal(entries, tc.want) {
			t.Errorf("%q: %v, want %v", tc.q, entries, tc.want)
		}
	}
}

func TestSearchHits(t *testing.T) {
	c := fill(t)
	_, p := c.find(t, "refactor handler", SearchOptions{SnippetWidth: 40})
	if len(p.Hits) != 2 || p.Scanned || p.Next != "" {
		t.Fatalf("%+v", p)
	}
	h := p.Hits[0]
	if h.File != "a.jsonl" || h.EntryID != "a1" || h.Role != "user" || h.Type != "text" || h.Project != "--home-dev-piweb--" ||
		h.Time != base+60_000 || h.Position != 1 || h.Part != 0 || h.Score <= 0 {
		t.Errorf("hit %+v", h)
	}
	var marked []string
	for _, r := range h.Ranges {
		marked = append(marked, h.Snippet[r.Start:r.End])
	}
	if !slices.Equal(marked, []string{"refactor", "Handler"}) {
		t.Errorf("snippet %q ranges %q", h.Snippet, marked)
	}
	// Filters only the caller knows.
	got, _ := c.find(t, "handler", SearchOptions{Keep: func(h *Hit) bool { return h.Role != "user" }})
	if slices.Contains(got, "a.jsonl:a1") || len(got) != 3 {
		t.Errorf("Keep: %v", got)
	}
	// Dates: after:/before: as days around the documents.
	got, _ = c.find(t, "handler after:2026-03-01 before:2026-03-02", SearchOptions{})
	if len(got) != 4 {
		t.Errorf("dates: %v", got)
	}
	got, _ = c.find(t, "handler before:2026-03-01", SearchOptions{})
	if len(got) != 0 {
		t.Errorf("before: %v", got)
	}
}

func TestSearchLive(t *testing.T) {
	c := fill(t)
	// Appended entries are found; a rewritten file leaves no stale hit.
	c.add(t, "a.jsonl", doc("a5", 0, "user", "--home-dev-piweb--", 20, "now the zebra handler"))
	if got, _ := c.find(t, "zebra", SearchOptions{}); !slices.Equal(got, []string{"a.jsonl:a5"}) {
		t.Errorf("appended: %v", got)
	}
	c.drop(t, "a.jsonl")
	if got, _ := c.find(t, "handler", SearchOptions{}); !slices.Equal(got, []string{"b.jsonl:b2"}) {
		t.Errorf("after DeleteDocs: %v", got)
	}
	// A file whose text changed under the index: the hit is checked on the real text.
	c.texts[key("b.jsonl", "b2", 0)] = "nothing to see"
	if got, _ := c.find(t, "handler", SearchOptions{}); len(got) != 0 {
		t.Errorf("stale text: %v", got)
	}
	// Delete drops records and documents.
	c.s.PutMany([]Record{{File: "b.jsonl"}})
	if err := c.s.Delete("b.jsonl"); err != nil {
		t.Fatal(err)
	}
	st, _ := c.s.Stats()
	if st.Docs != 0 || st.Files != 0 {
		t.Errorf("after Delete: %+v", st)
	}
}

func TestSearchRanking(t *testing.T) {
	c := newCorpus(t)
	long := "alpha " + strings.Repeat("filler words that dilute the match ", 20)
	c.add(t, "r.jsonl",
		doc("long-new", 0, "user", "p", 30, long+"beta"),
		doc("short-old", 0, "user", "p", 10, "alpha beta"),
		doc("short-new", 0, "user", "p", 20, "beta alpha"),
	)
	// bm25 prefers the shorter documents; among equals, the newer.
	got, _ := c.find(t, "alpha beta", SearchOptions{})
	if !slices.Equal(got, []string{"r.jsonl:short-new", "r.jsonl:short-old", "r.jsonl:long-new"}) {
		t.Errorf("ranking: %v", got)
	}
}

func TestSearchPaging(t *testing.T) {
	defer func(w int) { window = w }(window)
	window = 7 // several windows
	c := newCorpus(t)
	var docs []Doc
	for i := range 60 {
		text := fmt.Sprintf("common word %d", i) + strings.Repeat(" pad", i%4)
		if i%3 == 0 {
			text += " rare"
		}
		docs = append(docs, doc(fmt.Sprintf("e%02d", i), 0, "user", "p", i, text))
	}
	c.add(t, "p.jsonl", docs...)
	for _, q := range []string{"common", "common rare", "re:word", "common -rare"} {
		all, p := c.find(t, q, SearchOptions{Limit: 500})
		if p.Next != "" {
			t.Fatalf("%q: one big page has a next", q)
		}
		var paged []string
		cur := ""
		for range 100 {
			got, p := c.find(t, q, SearchOptions{Limit: 4, Cursor: cur})
			paged = append(paged, got...)
			if cur = p.Next; cur == "" {
				break
			}
		}
		if !slices.Equal(paged, all) {
			t.Errorf("%q: pages of 4 give %d hits %v,\nwant %d %v", q, len(paged), paged, len(all), all)
		}
		want := map[string]int{"common": 60, "common rare": 20, "re:word": 60, "common -rare": 40}[q]
		if len(all) != want {
			t.Errorf("%q: %d hits, want %d", q, len(all), want)
		}
	}
	// MaxExamined stops a scan with a way on.
	got, p := c.find(t, "re:word", SearchOptions{Limit: 100, MaxExamined: 10})
	if len(got) != 10 || p.Next == "" || !p.Scanned || p.Examined != 10 {
		t.Errorf("bounded scan: %d hits, next %q, %+v", len(got), p.Next, p)
	}
	// Cursors belong to their query.
	pq, _ := search.Parse("other")
	if _, err := c.s.Search(context.Background(), pq, SearchOptions{Cursor: p.Next, Text: c.text}); !errors.Is(err, ErrCursor) {
		t.Errorf("another query's cursor: %v", err)
	}
	for _, bad := range []string{"!!", "AAAA", p.Next + "A", strings.Repeat("A", 40)} {
		pq, _ := search.Parse("re:word")
		if _, err := c.s.Search(context.Background(), pq, SearchOptions{Cursor: bad, Text: c.text}); !errors.Is(err, ErrCursor) {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}

// TestSearchHostileQueries sends what FTS5 would read as syntax.
func TestSearchHostileQueries(t *testing.T) {
	c := fill(t)
	for _, q := range []string{`"AND"`, `OR`, `NOT`, `NEAR(a b)`, `a*`, `"a""b"`, `t:x`, `{t}:x`, `^x`, `(x`, `x)`, `- -`, `ǂr1`, `ǂp1 role:user`, `'`, `;DROP TABLE docs`, `\"`, `*`} {
		pq, err := search.Parse(q)
		if err != nil {
			continue
		}
		if _, err := c.s.Search(context.Background(), pq, SearchOptions{Text: c.text}); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
	if got, _ := c.find(t, "ǂr1", SearchOptions{}); len(got) != 0 {
		t.Errorf("a filter term typed as a word: %v", got)
	}
}

func TestSearchNeedsText(t *testing.T) {
	c := fill(t)
	pq, _ := search.Parse("handler")
	if _, err := c.s.Search(context.Background(), pq, SearchOptions{}); err == nil {
		t.Error("no Text function: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.s.Search(ctx, pq, SearchOptions{Text: c.text}); err == nil {
		t.Error("cancelled context: no error")
	}
}

// TestMerges appends in many small batches, as live updates do, deleting
// and rewriting files on the way: segments are merged, dead documents
// leave the index, and searches see exactly the live documents.
func TestMerges(t *testing.T) {
	c := newCorpus(t)
	live := map[string]bool{} // entry ids expected for "common"
	for i := range 3*fanIn*fanIn/2 + 7 {
		file := fmt.Sprintf("f%02d.jsonl", i%20)
		entry := fmt.Sprintf("e%04d", i)
		c.add(t, file, doc(entry, 0, "user", "p", i, fmt.Sprintf("common w%d", i)))
		live[file+":"+entry] = true
		if i%100 == 50 { // a batch of a larger size class, whose ids then interleave with a merge's
			var docs []Doc
			for k := range fanIn + 4 {
				e := fmt.Sprintf("e%04d-%d", i, k)
				docs = append(docs, doc(e, k+1, "user", "p", i, "common batch"))
				live[file+":"+e] = true
			}
			c.add(t, file, docs...)
		}
		if i%37 == 36 { // a file rewritten
			victim := fmt.Sprintf("f%02d.jsonl", (i/37)%20)
			c.drop(t, victim)
			for k := range live {
				if strings.HasPrefix(k, victim+":") {
					delete(live, k)
				}
			}
		}
	}
	checkIndex(t, c.s)
	var segs, dead, class0 int
	c.s.conn().QueryRow(`SELECT count(*), coalesce(sum(class = 0), 0) FROM segs`).Scan(&segs, &class0)
	c.s.conn().QueryRow(`SELECT count(*) FROM dead`).Scan(&dead)
	if class0 >= fanIn || segs > 2*fanIn {
		t.Errorf("%d segments (%d of the smallest class): merges do not keep up", segs, class0)
	}
	got, p := c.find(t, "common", SearchOptions{Limit: 500})
	if p.Next != "" || len(got) != len(live) {
		t.Fatalf("%d hits, %d live documents", len(got), len(live))
	}
	for _, g := range got {
		if !live[g] {
			t.Errorf("hit %s is not live", g)
		}
	}
	t.Logf("%d segments, %d dead ids still listed, %d live documents", segs, dead, len(live))
}
