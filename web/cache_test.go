package web

import (
	"fmt"
	"testing"

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

// TestCachesKeepToBudget: the layouts and ledgers the tree pages of many
// large sessions leave behind take no more memory than their budgets
// (a layout keeps its session's tree, which the library has dropped),
// and no more than their estimated costs say.
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
	lib := openLib(t, root)
	lib.SetCacheLimit(1 << 20) // the library keeps next to no tree
	srv := newServer(t, lib, nil)
	const layouts, ledgers = 16 << 20, 8 << 20
	srv.layouts = newLayoutCache(16, layouts, ledgers)
	h := srv.Handler()
	before := sessiontest.LiveHeap()
	for i := range n {
		if rec := get(t, h, fmt.Sprintf("/s/big%d", i)); rec.Code != 200 {
			t.Fatalf("big%d: %d", i, rec.Code)
		}
	}
	kept := sessiontest.LiveHeap()
	c := srv.layouts
	nLayouts, nLedgers, estimated := len(c.keys), len(c.ledgers.keys), c.size+c.ledgers.size
	srv.layouts = newLayoutCache(16, layouts, ledgers)
	cached := kept - sessiontest.LiveHeap()
	t.Logf("%d tree pages of %d entries: %d KB kept, %d KB of it by %d cached values estimated at %d KB",
		n, entries, (kept-before)>>10, cached>>10, nLayouts+nLedgers, estimated>>10)
	if nLayouts < 2 || nLedgers < 2 {
		t.Errorf("%d layouts and %d ledgers kept, want 2 or more of each", nLayouts, nLedgers)
	}
	if cached > layouts+ledgers || cached > estimated {
		t.Errorf("the caches keep %d KB, past their budgets (%d KB) or their estimate (%d KB)", cached>>10, (layouts+ledgers)>>10, estimated>>10)
	}
}

// TestLiveStepsBudget: the live answers kept are dropped, oldest first,
// once their rows pass the budget in bytes, never the one just computed;
// an answer counted twice, or dropped before it was counted, is not
// counted again.
func TestLiveStepsBudget(t *testing.T) {
	l := liveSteps{budget: 100 << 10}
	step := func(key string, rows int) liveKey {
		k := liveKey{key: key}
		st := l.get(k)
		st.snap = &snapshot{rows: make([]rowSig, rows)}
		l.settle(k, st)
		l.settle(k, st)
		return k
	}
	kept := func() (out []string) {
		for _, k := range l.order {
			out = append(out, k.key)
		}
		return out
	}
	step("a", 2000) // 32 KB of rows
	step("b", 2000)
	step("c", 2000)
	if got := fmt.Sprint(kept(), l.size>>10); got != "[a b c] 94" {
		t.Errorf("three steps: %s", got)
	}
	step("d", 2000) // past 100 KB: a goes
	if got := fmt.Sprint(kept(), l.size>>10); got != "[b c d] 94" {
		t.Errorf("a fourth: %s", got)
	}
	step("huge", 100000) // kept alone
	if got := fmt.Sprint(kept(), l.size>>10); got != "[huge] 1562" {
		t.Errorf("a huge step: %s", got)
	}
	late := l.get(liveKey{key: "late"})
	step("big", 7000) // past the budget alone: huge goes, and late, not yet counted
	l.settle(liveKey{key: "late"}, late)
	if got := fmt.Sprint(kept(), l.size); got != "[big] 112256" {
		t.Errorf("late: %s", got)
	}
}
