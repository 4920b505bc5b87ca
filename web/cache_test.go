package web

import (
	"fmt"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
)

// TestLRUBudget: the caches drop their least recently used values past
// their count or their bytes, keep the newest whatever its cost, and
// count a value put again at its new cost.
func TestLRUBudget(t *testing.T) {
	c := newLRU[string, int](4, 100)
	keys := func() string { return fmt.Sprint(c.keys, c.size) }
	c.put("a", 1, 40)
	c.put("b", 2, 40)
	c.get("a")
	c.put("c", 3, 40) // past 100 bytes: b, the least recently used, goes
	if got := keys(); got != "[a c] 80" {
		t.Errorf("after c: %s", got)
	}
	c.put("a", 1, 10) // a grew smaller
	if got := keys(); got != "[c a] 50" {
		t.Errorf("after a again: %s", got)
	}
	c.put("big", 4, 500) // the newest stays, alone
	if got := keys(); got != "[big] 500" || c.get("big") != 4 || c.get("c") != 0 {
		t.Errorf("after big: %s", got)
	}
	for i := range 6 {
		c.put(fmt.Sprint(i), i, 1)
	}
	if got := keys(); got != "[2 3 4 5] 4" {
		t.Errorf("past the count: %s", got)
	}
	if v := c.getOrPut("6", func() int { return 6 }); v != 6 || keys() != "[3 4 5 6] 3" {
		t.Errorf("getOrPut: %d %s", v, keys())
	}
}

// TestCachesKeepToBudget: the layouts, ledgers and search indexes the tree
// pages of many large sessions leave behind take no more memory than
// their budgets (a layout keeps its session's tree, which the library
// has dropped), and no more than their estimated costs say.
func TestCachesKeepToBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations are not the heap this measures")
	}
	root := t.TempDir()
	const n, entries = 6, 20000
	for i := range n {
		writeSession(t, root, "--w--", fmt.Sprintf("s%d.jsonl", i),
			sessiontest.String(int64(i+1), entries, sessiontest.Options{ID: fmt.Sprintf("big%d", i)}))
	}
	writeSession(t, root, "--w--", "tiny.jsonl", sessiontest.String(99, 20, sessiontest.Options{ID: "tiny"}))
	lib := openLib(t, root)
	lib.SetCacheLimit(1 << 20) // the library keeps next to no tree: the last read only
	srv := newServer(t, lib, nil)
	const layouts, ledgers, searches = 20 << 20, 8 << 20, 6 << 20
	caches := func() *layoutCache {
		c := newLayoutCache(16, layouts, ledgers)
		c.search.budget = searches
		return c
	}
	srv.layouts = caches()
	h := srv.Handler()
	before := sessiontest.LiveHeap()
	for i := range n {
		for _, page := range []string{"/s/big%d", "/s/big%d?q=the"} { // a search keeps the session's texts
			if rec := get(t, h, fmt.Sprintf(page, i)); rec.Code != 200 {
				t.Fatalf("%s: %d", fmt.Sprintf(page, i), rec.Code)
			}
		}
	}
	if rec := get(t, h, "/s/tiny"); rec.Code != 200 { // the library's last tree, not a large one
		t.Fatalf("tiny: %d", rec.Code)
	}
	kept := sessiontest.LiveHeap()
	// Each cache emptied in turn: what the heap gives back is what it kept
	// (the layouts first: a searched one keeps its search index too).
	c := srv.layouts
	srv.layouts = caches()
	for _, cache := range []struct {
		name    string
		budget  int64
		drop    func() (n int, estimate int64)
		atLeast int
	}{
		{"layouts", layouts, func() (int, int64) { n, e := len(c.keys), c.size; c.clear(); return n, e }, 2},
		{"ledgers", ledgers, func() (int, int64) { n, e := len(c.ledgers.keys), c.ledgers.size; c.ledgers.clear(); return n, e }, 2},
		{"search indexes", searches, func() (int, int64) { n, e := len(c.search.keys), c.search.size; c.search.clear(); return n, e }, 1},
	} {
		held, estimate := cache.drop()
		now := sessiontest.LiveHeap()
		freed := kept - now
		kept = now
		t.Logf("%d %s kept %d KB, estimated at %d KB (budget %d KB)", held, cache.name, freed>>10, estimate>>10, cache.budget>>10)
		if held < cache.atLeast || freed <= 0 {
			t.Errorf("%d %s kept, %d bytes freed, want %d or more, and bytes", held, cache.name, freed, cache.atLeast)
		}
		if slack := int64(64 << 10); freed > cache.budget+slack || freed > estimate+slack { // (the heap of the server's own goroutines moves by a few KB)
			t.Errorf("the %s keep %d KB, past their budget (%d KB) or their estimate (%d KB)", cache.name, freed>>10, cache.budget>>10, estimate>>10)
		}
	}
	t.Logf("%d KB kept besides", (kept-before)>>10)
}

// TestLiveStepsBudget: the live answers kept are dropped, least recently
// used first, once their rows pass the budget in bytes, never the one
// just computed; an answer dropped before it was counted is not counted.
func TestLiveStepsBudget(t *testing.T) {
	l := newLRU[liveKey, *liveStep](liveKept, 100<<10)
	step := func(key string, rows int) {
		k := liveKey{key: key}
		st := l.getOrPut(k, func() *liveStep { return &liveStep{} })
		st.snap = &snapshot{rows: make([]rowSig, rows)}
		l.setCost(k, st.bytes())
		l.setCost(k, st.bytes())
	}
	kept := func() string {
		var keys []string
		for _, k := range l.keys {
			keys = append(keys, k.key)
		}
		return fmt.Sprint(keys, l.size)
	}
	step("a", 2000) // 32 KB of rows
	step("b", 2000)
	step("c", 2000)
	if got := kept(); got != "[a b c] 96768" {
		t.Errorf("three steps: %s", got)
	}
	step("d", 2000) // past 100 KB: a goes
	if got := kept(); got != "[b c d] 96768" {
		t.Errorf("a fourth: %s", got)
	}
	step("huge", 100000) // kept alone
	if got := kept(); got != "[huge] 1600256" {
		t.Errorf("a huge step: %s", got)
	}
	late := liveKey{key: "late"}
	l.getOrPut(late, func() *liveStep { return &liveStep{} })
	step("big", 7000) // past the budget alone: huge goes, and late, not yet counted
	l.setCost(late, 256)
	if got := kept(); got != "[big] 112256" {
		t.Errorf("late: %s", got)
	}
}

// TestLRUIdle: a value unused for cacheIdle is dropped, the least recently
// used first; one used since stays, and the sweep is set again for it.
func TestLRUIdle(t *testing.T) {
	c := newLRU[string, int](4, 0)
	c.put("a", 1, 10)
	c.put("b", 2, 10)
	c.put("c", 3, 10)
	now := time.Now()
	for k, ago := range map[string]time.Duration{"a": cacheIdle + time.Second, "b": cacheIdle, "c": time.Minute} {
		e := c.m[k]
		e.used = now.Add(-ago)
		c.m[k] = e
	}
	if next := c.dropIdleAt(now); next != cacheIdle-time.Minute || fmt.Sprint(c.keys, c.size) != "[c] 10" {
		t.Errorf("after the sweep: %v %d, next in %v", c.keys, c.size, next)
	}
	if c.get("c") != 3 || c.m["c"].used.Before(now) {
		t.Error("a value got is not marked used")
	}
	if next := c.dropIdleAt(now.Add(cacheIdle + time.Second)); next != 0 || len(c.keys) != 0 || c.size != 0 {
		t.Errorf("all idle: %v %d, next in %v", c.keys, c.size, next)
	}
}
