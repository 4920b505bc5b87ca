package watcher

import (
	"reflect"
	"testing"
	"time"
)

func TestCollapse(t *testing.T) {
	q := []Event{
		{SessionID: "A", File: "a", Kind: KindAppend, NewIDs: []string{"a1"}, Leaf: "a1", OldLeaf: "a0"},
		{SessionID: "B", File: "b", Kind: KindNew, Leaf: "b1"},
		{Kind: KindError, Error: "first"},
		{SessionID: "A", File: "a", Kind: KindAppend, NewIDs: []string{"a2"}, Leaf: "a2", OldLeaf: "a1"},
		{SessionID: "B", File: "b", Kind: KindRemove, OldLeaf: "b1", Error: "gone"},
		{Kind: KindError, File: "d", Error: "second"},
		{SessionID: "C", File: "c", Kind: KindRemove},
		{SessionID: "C", File: "c2", Kind: KindNew, Leaf: "c1"},
		{Kind: KindNew, File: "x"}, // no session: dropped
	}
	want := []Event{
		{SessionID: "A", File: "a", Kind: KindReload, Leaf: "a2"},
		{SessionID: "B", File: "b", Kind: KindRemove, Error: "gone"},
		{SessionID: "C", File: "c2", Kind: KindReload, Leaf: "c1"},
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
	h.publish(Event{SessionID: "S", Kind: KindNew, NewIDs: []string{"x"}})
	for _, ch := range []<-chan Event{a, b} {
		select {
		case e := <-ch:
			if e.SessionID != "S" || e.Kind != KindNew {
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
	h.publish(Event{SessionID: "T", Kind: KindNew})
	select {
	case e := <-b:
		if e.SessionID != "T" {
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
	h.publish(Event{SessionID: "U"}) // no-op after close
}
