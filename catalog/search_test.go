package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/search"
	"github.com/piweb/piweb/store"
)

// handRoot writes one session with a branch, a compaction, a label, a
// tool call and a bash run, each holding a word of its own.
func handRoot(t *testing.T) (root, file string) {
	root = t.TempDir()
	dir := filepath.Join(root, "--home-dev-weather--")
	os.MkdirAll(dir, 0o755)
	file = filepath.Join(dir, "2026-01-01T00-00-00-000Z_s1.jsonl")
	os.WriteFile(file, []byte(sessiontest.Lines(
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/weather"}`,
		sessiontest.Entry("model_change", "m0", "", 1, `,"provider":"anthropic","modelId":"claude-zebra"`),
		sessiontest.User("u1", "m0", 2, "please fix the abandonedidea cache"),
		sessiontest.Asst("a1", "u1", 3, "I tried abandonedidea first"),
		sessiontest.User("u2", "m0", 4, "ancientword from the start"),
		sessiontest.Entry("message", "a2", "u2", 5, `,"message":{"role":"assistant","content":[{"type":"thinking","thinking":"ponder quokka"},{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"grep -rn wombat src/"}}],"provider":"anthropic","model":"claude","stopReason":"toolUse","timestamp":5}`),
		sessiontest.Entry("message", "r1", "a2", 6, `,"message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"src/x.go: platypus found, base64 encoding digest() returns base64"}],"isError":false,"timestamp":6}`),
		sessiontest.Entry("compaction", "c1", "r1", 7, `,"summary":"summary of narwhal work","firstKeptEntryId":"a2","tokensBefore":100`),
		sessiontest.Entry("label", "l1", "c1", 8, `,"targetId":"a2","label":"keeper"`),
		sessiontest.User("u3", "l1", 9, "recentword here, Οδός Αθηνάς, in 5 μseconds"),
		sessiontest.Entry("message", "b1", "u3", 10, `,"message":{"role":"bashExecution","command":"make lynx","output":"built ok","exitCode":0,"cancelled":false,"truncated":false,"timestamp":10}`),
		sessiontest.Entry("session_info", "n1", "b1", 11, `,"name":"Gecko session"`),
	)), 0o644)
	return root, file
}

// find returns every hit of query, following Next: a page may end early
// when its time runs out (slow machines, the race detector).
func find(t testing.TB, c *Catalog, query string) []Hit {
	t.Helper()
	q, err := search.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	var out []Hit
	cursor := ""
	for range 1000 {
		res, err := c.Search(context.Background(), q, 50, cursor)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res.Hits...)
		if res.Next == nil {
			break
		}
		cursor = *res.Next
	}
	return out
}

// allHits pages through every hit of query and names each, sorted.
func allHits(t testing.TB, c *Catalog, query string) []string {
	t.Helper()
	q, err := search.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	cursor := ""
	for range 10000 {
		res, err := c.Search(context.Background(), q, 200, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			out = append(out, fmt.Sprintf("%s/%s/%s/%s", h.Key, h.EntryID, h.Type, h.Place))
		}
		if res.Next == nil {
			break
		}
		cursor = *res.Next
	}
	slices.Sort(out)
	return out
}

func hitIDs(hs []Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.EntryID+":"+h.Type+":"+h.Place)
	}
	slices.Sort(out)
	return out
}

func testSearch(t *testing.T, dsn string) {
	root, file := handRoot(t)
	c, stop := run(t, root, dsn)
	defer stop()
	cases := []struct {
		q    string
		want []string
	}{
		{"abandonedidea", []string{"a1:text:offpath", "u1:text:offpath"}},
		{"abandonedidea role:user", []string{"u1:text:offpath"}},
		{"bandonedide", []string{"a1:text:offpath", "u1:text:offpath"}}, // anywhere inside a word, as pi's picker
		{"ncoding", []string{"r1:toolResult:path"}},
		{"ancientword", []string{"u2:text:compacted"}},
		{"quokka", []string{"a2:thinking:path"}},
		{"wombat", []string{"a2:toolCall:path"}},
		{"platypus", []string{"r1:toolResult:path"}},
		{"narwhal role:summary", []string{"c1:compaction:path"}},
		{"keeper", []string{"l1:label:path"}},
		{"lynx role:bash", []string{"b1:bash:path"}},
		{"gecko", []string{"n1:name:path"}},
		{"zebra", []string{"m0:model:compacted"}},
		{`"grep -rn wombat"`, []string{"a2:toolCall:path"}},
		{`"returns base64"`, []string{"r1:toolResult:path"}},
		{`"encoding base64"`, nil},     // both words in r1, not the phrase (PostgreSQL narrows by words)
		{`"cache abandonedidea"`, nil}, // nor in u1
		{"re:plat[y]pus", []string{"r1:toolResult:path"}},
		{`re:digest\(\) returns b[a-z]+64`, []string{"r1:toolResult:path"}},
		{"is:offpath abandonedidea", []string{"a1:text:offpath", "u1:text:offpath"}},
		{"-is:offpath abandonedidea", nil},
		{"label:keeper quokka", []string{"a2:thinking:path"}},
		{"label:keeper", []string{"a2:thinking:path"}},
		{"label:other quokka", nil},
		{"project:weather recentword", []string{"u3:text:path"}},
		{"project:nothere recentword", nil},
		{"-project:weather recentword", nil},
		{"before:2025-01-01 recentword", nil},
		{"zz", nil},                                          // too short for the index: checked on the texts
		{"ok", []string{"a2:thinking:path", "b1:bash:path"}}, // "quokka" holds it
		{"ok role:bash", []string{"b1:bash:path"}},
		{"ΑΘΗΝΆΣ", []string{"u3:text:path"}}, // σ and ς are one letter (pi lower-cases a final Σ as ς)
		{"ΔΌΣ", []string{"u3:text:path"}},
		{"θηνάσ", []string{"u3:text:path"}},
		{"re:5 µsecond", []string{"u3:text:path"}}, // the micro sign: case ignored, Greek mu (as in pi)
	}
	for _, tc := range cases {
		got := hitIDs(find(t, c, tc.q))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.q, got, tc.want)
		}
	}
	h := find(t, c, "platypus")[0]
	if h.Key != "s1" || h.SessionID != "s1" || h.Role != "tool" || h.Timestamp == nil || h.Session != "Gecko session" || len(h.Ranges) != 1 {
		t.Errorf("hit: %+v", h)
	}
	// Live: an appended entry is found once the catalog caught up; a
	// rewritten file leaves no stale hit.
	sessiontest.Append(t, file, sessiontest.Lines(sessiontest.User("u4", "n1", 12, "freshword arrives")))
	c.lib.Refresh(file)
	wait(t, c)
	c.facts.mu.Lock()
	for id, cf := range c.facts.m {
		if cf.path == file {
			t.Errorf("file %d's facts from before the save are still cached once the catalog caught up", id)
		}
	}
	c.facts.mu.Unlock()
	if got := hitIDs(find(t, c, "freshword")); !slices.Equal(got, []string{"u4:text:path"}) {
		t.Errorf("appended: %v", got)
	}
	os.WriteFile(file, []byte(sessiontest.Lines(`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}`,
		sessiontest.User("z1", "", 1, "only this now"))), 0o644)
	c.lib.Refresh(file)
	wait(t, c)
	if got := find(t, c, "freshword"); len(got) != 0 {
		t.Errorf("stale hits after a rewrite: %v", hitIDs(got))
	}
	if got := hitIDs(find(t, c, "only")); !slices.Equal(got, []string{"z1:text:path"}) {
		t.Errorf("rewritten: %v", got)
	}
	os.Remove(file)
	c.lib.Refresh(file)
	wait(t, c)
	if got := find(t, c, "only"); len(got) != 0 {
		t.Errorf("hits of a deleted file: %v", hitIDs(got))
	}
}

func TestSearch(t *testing.T) {
	engines(t, testSearch)
	t.Run("scan", func(t *testing.T) { testSearch(t, "") })
}

// forgetting is a store whose Facts calls during first (a save landing
// while a search reads a file's facts).
type forgetting struct {
	Store
	during func()
}

func (f forgetting) Facts(ctx context.Context, id int64) (store.Facts, error) {
	f.during()
	return f.Store.Facts(ctx, id)
}

// TestFactCacheRace: facts read while a save of their file lands are not
// cached (they may predate it); facts read without one are.
func TestFactCacheRace(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		root, file := handRoot(t)
		st := openStore(t, dsn)
		_, stop := start(t, root, st, nil)
		defer stop()
		ctx := context.Background()
		files, _, err := st.Files(ctx, "")
		if err != nil || len(files) != 1 {
			t.Fatalf("files: %v %v", files, err)
		}
		id := files[0].ID
		var fc factCache
		if f, err := fc.get(ctx, forgetting{Store: st, during: func() { fc.forget(file) }}, id, file); err != nil || len(f.Places) == 0 {
			t.Fatalf("no places read: %+v %v", f, err)
		}
		if _, ok := fc.m[id]; ok {
			t.Error("facts read while the file was saved were cached")
		}
		fc.get(ctx, st, id, file)
		if _, ok := fc.m[id]; !ok {
			t.Error("facts read undisturbed were not cached")
		}
		fc.forget("elsewhere.jsonl")
		if _, ok := fc.m[id]; !ok {
			t.Error("another file's save dropped these facts")
		}
		fc.forget("elsewhere.jsonl", file)
		if _, ok := fc.m[id]; ok {
			t.Error("the file's save left its facts cached")
		}
	})
}

// TestSearchStoreClosed: a search that meets a closed store answers by
// scanning the files instead of failing.
func TestSearchStoreClosed(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		root, _ := handRoot(t)
		st := openStore(t, dsn)
		c, stop := start(t, root, st, nil)
		defer stop()
		if got := hitIDs(find(t, c, "quokka")); !slices.Equal(got, []string{"a2:thinking:path"}) {
			t.Fatalf("before: %v", got)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		q, _ := search.Parse("quokka")
		res, err := c.Search(context.Background(), q, 20, "")
		if got := hitIDs(res.Hits); err != nil || !slices.Equal(got, []string{"a2:thinking:path"}) || !res.Scanned {
			t.Errorf("with the store closed: %v %v scanned %v", got, err, res.Scanned)
		}
	})
}

// TestPartialAndNext: a finished index is not partial; a page that is
// full says so with Next, and the pages together are every hit once; so
// do pages whose time is up (a page time already up when a search
// starts: each page checks one candidate).
func TestPartialAndNext(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		root, _ := genRoot(t, 3, 120)
		c, stop := run(t, root, dsn)
		defer stop()
		q, _ := search.Parse("the")
		res, err := c.Search(context.Background(), q, 5, "")
		if err != nil || res.Partial || res.Next == nil || len(res.Hits) != 5 {
			t.Fatalf("page 1: %d hits, partial %v, next %v, %v", len(res.Hits), res.Partial, res.Next, err)
		}
		// every hit over the pages of limit, in order; and how many pages
		read := func(limit int) (hits []string, pages int) {
			for cursor := ""; pages < 10000; {
				pages++
				res, err := c.Search(context.Background(), q, limit, cursor)
				if err != nil || res.Partial || len(res.Hits) > 1 && c.opt.PageTime > 0 {
					t.Fatalf("page %d: %d hits, partial %v, %v", pages, len(res.Hits), res.Partial, err)
				}
				for _, h := range res.Hits {
					hits = append(hits, h.Key+"/"+h.EntryID+"/"+h.Type+"/"+h.Snippet) // an entry's tool calls are a hit each
				}
				if res.Next == nil {
					return hits, pages
				}
				cursor = *res.Next
			}
			return hits, pages
		}
		all, _ := read(7)
		seen := map[string]bool{}
		for _, k := range all {
			if seen[k] {
				t.Fatalf("%s on two pages", k)
			}
			seen[k] = true
		}
		scanned, sstop := start(t, root, nil, nil)
		defer sstop()
		if want := len(allHits(t, scanned, "the")); len(all) != want {
			t.Errorf("%d hits over the pages, a scan finds %d", len(all), want)
		}
		c.opt.PageTime = time.Nanosecond
		if got, pages := read(20); pages < len(all) || !slices.Equal(got, all) {
			t.Errorf("pages whose time is up: %d gave %d hits; pages of 7 gave %d", pages, len(got), len(all))
		}
	})
}

// TestForkCopies: the entries a fork copied are one hit, naming the fork.
func TestForkCopies(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		root, file := handRoot(t)
		lib := library.NewLibrary(root)
		lib.Refresh(file)
		forked, err := lib.Fork("s1", "r1")
		if err != nil {
			t.Fatal(err)
		}
		c, stop := run(t, root, dsn)
		defer stop()
		hs := find(t, c, "platypus")
		if len(hs) != 1 {
			t.Fatalf("%d hits: %v", len(hs), hitIDs(hs))
		}
		h := hs[0]
		if h.Key != "s1" || len(h.Copies) != 1 || h.Copies[0].SessionID != forked.ID || h.Copies[0].Place != PlacePath {
			t.Errorf("hit %+v, copies %+v", h, h.Copies)
		}
		if got := find(t, c, "recentword"); len(got) != 1 || len(got[0].Copies) != 0 {
			t.Errorf("an entry the fork did not copy: %+v", got)
		}
	})
}

// TestOffPathLive: on and off the path, the store finds what reading
// every file finds, and still does after a branch from a session's first
// entry takes the rest of it off the path (a live change: the store
// narrows by the places it saved, the hits are checked on the tree).
func TestOffPathLive(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		root, files := genRoot(t, 4, 120)
		c, stop := run(t, root, dsn)
		defer stop()
		compare := func(when string) {
			t.Helper()
			scanned, sstop := start(t, root, nil, nil)
			defer sstop()
			for _, q := range []string{"is:offpath", "is:offpath the", "-is:offpath the", "is:offpath role:user e"} {
				a, b := allHits(t, c, q), allHits(t, scanned, q)
				if !slices.Equal(a, b) {
					t.Errorf("%s, %q: the store finds %d hits, a scan %d", when, q, len(a), len(b))
				}
				if when == "after the branch" && q == "is:offpath" && len(a) == 0 {
					t.Errorf("%q: no hits", q)
				}
			}
		}
		compare("at the start")
		s, err := c.lib.SessionOf(files[1])
		if err != nil {
			t.Fatal(err)
		}
		sessiontest.Append(t, files[1], sessiontest.Lines(sessiontest.User("branchnew", s.Entries[1].ID, 999, "a fresh branch")))
		c.lib.Refresh(files[1])
		wait(t, c)
		compare("after the branch")
	})
}
