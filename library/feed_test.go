package library

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
)

func TestCollapse(t *testing.T) {
	q := []Change{
		{Key: "A", File: "a", Kind: KindAppend, NewIDs: []string{"a1"}, Leaf: "a1", OldLeaf: "a0"},
		{Key: "B", File: "b", Kind: KindNew, Leaf: "b1"},
		{Kind: KindError, Error: "first"},
		{Key: "A", File: "a", Kind: KindAppend, NewIDs: []string{"a2"}, Leaf: "a2", OldLeaf: "a1"},
		{Key: "B", File: "b", Kind: KindRemove, OldLeaf: "b1", Error: "gone"},
		{Kind: KindError, File: "d", Error: "second"},
		{Key: "C", File: "c", Kind: KindRemove},
		{Key: "C", File: "c2", Kind: KindNew, Leaf: "c1"},
		{Kind: KindNew, File: "x"}, // no session: dropped
	}
	want := []Change{
		{Key: "A", File: "a", Kind: KindReload, Leaf: "a2"},
		{Key: "B", File: "b", Kind: KindRemove, Error: "gone"},
		{Key: "C", File: "c2", Kind: KindReload, Leaf: "c1"},
		{Kind: KindError, File: "d", Error: "second"},
	}
	if got := collapse(q); !reflect.DeepEqual(got, want) {
		t.Errorf("collapse:\n got %s\nwant %s", show(got), show(want))
	}
}

func TestSubscribeCancel(t *testing.T) {
	var h hub
	h.size = 8
	a, cancelA := h.subscribe()
	b, cancelB := h.subscribe()
	h.publish(Change{Key: "S", Kind: KindNew, NewIDs: []string{"x"}})
	for _, ch := range []<-chan Change{a, b} {
		select {
		case e := <-ch:
			if e.Key != "S" || e.Kind != KindNew {
				t.Errorf("got %s; want the published event", show1(e))
			}
			if e.NewIDs[0] != "x" {
				t.Errorf("NewIDs %v; want [x] (one subscriber changed another's event)", e.NewIDs)
			}
			e.NewIDs[0] = "changed" // subscribers own their events
		case <-time.After(wait):
			t.Fatal("no event within", wait)
		}
	}
	cancelA()
	cancelA() // twice is harmless
	if _, ok := <-a; ok {
		t.Error("a cancelled subscription's channel is still open")
	}
	h.publish(Change{Key: "T", Kind: KindNew})
	select {
	case e := <-b:
		if e.Key != "T" {
			t.Errorf("got %s; want T", show1(e))
		}
	case <-time.After(wait):
		t.Fatal("the remaining subscriber got nothing")
	}
	h.close()
	if _, ok := <-b; ok {
		t.Error("close left a subscription open")
	}
	cancelB() // after close: harmless
	c, _ := h.subscribe()
	if _, ok := <-c; ok {
		t.Error("subscribing to a closed hub gave an open channel")
	}
	h.publish(Change{Key: "U"}) // no-op after close
}

// wait bounds how long a test waits for a change that must come.
const wait = 15 * time.Second

func show1(c Change) string { return fmt.Sprintf("%+v", c) }

func show(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("\n  " + show1(c))
	}
	return b.String()
}

// A subscriber that never reads does not hold up the library or other
// subscribers, and once it reads, it can re-sync every session it missed.
func TestSlowSubscriber(t *testing.T) {
	root := t.TempDir()
	lib := NewLibrary(root)
	fast, cancelFast := lib.Subscribe()
	defer cancelFast()
	lib.feed.mu.Lock()
	lib.feed.size = 4 // for the next subscriber only
	lib.feed.mu.Unlock()
	slow, cancelSlow := lib.Subscribe()
	defer cancelSlow()

	const n = 20
	files := map[string]string{}
	for i := range n {
		id := fmt.Sprintf("S%02d", i)
		files[id] = sessiontest.File(t, root, id+".jsonl", strings.Replace(sessiontest.Header, `"s1"`, `"`+id+`"`, 1)+"\n"+sessiontest.User("e1", "", 1, "hi")+"\n")
		if _, err := lib.Refresh(files[id]); err != nil {
			t.Fatal(err)
		}
	}
	for id, f := range files {
		sessiontest.Append(t, f, sessiontest.Asst("e2", "e1", 2, "ok")+"\n")
		if c, err := lib.Refresh(f); err != nil || c.Kind != KindAppend || c.Key != id {
			t.Fatalf("Refresh after an append: %+v, %v", c, err)
		}
	}
	// The fast subscriber got every change, in order.
	for k := range 2 * n {
		select {
		case c := <-fast:
			if want := []string{KindNew, KindAppend}[k/n]; c.Kind != want {
				t.Fatalf("fast subscriber: change %d is %s; want %s", k, show1(c), want)
			}
		case <-time.After(wait):
			t.Fatalf("fast subscriber: only %d changes", k)
		}
	}
	// The slow subscriber gets a bounded backlog that brings every session up to date.
	var backlog []Change
	leaf := map[string]string{}
	current := func() bool {
		for id := range files {
			if leaf[id] != "e2" {
				return false
			}
		}
		return true
	}
	deadline := time.After(wait)
	for !current() {
		select {
		case e := <-slow:
			backlog = append(backlog, e)
			leaf[e.Key] = e.Leaf
		case <-deadline:
			t.Fatalf("slow subscriber: leaves %v after %d changes; want e2 for all %d sessions: %s", leaf, len(backlog), n, show(backlog))
		}
	}
	if len(backlog) > n+1 {
		t.Errorf("slow subscriber got %d changes for %d sessions; want at most one per session (+1 in flight): %s", len(backlog), n, show(backlog))
	}
	for _, e := range backlog[1:] {
		if e.Kind != KindReload {
			t.Errorf("slow subscriber got %s after falling behind; want reloads", show1(e))
		}
	}
}
