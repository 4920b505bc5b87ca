package watcher

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
)

// TestStressAppends has a writer append 5000 entries (some branching, some
// lines split across two writes) while the watcher follows the file, then
// checks the library's incremental index against a fresh load, and that the
// append events named every entry exactly once, in file order.
func TestStressAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test")
	}
	root := t.TempDir()
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("x0000"))
	// A short debounce re-reads the file many times while it is being written.
	h := start(t, root, Options{Debounce: 2 * time.Millisecond, Rescan: -1}, nil)

	const n = 5000
	rng := rand.New(rand.NewPCG(1, 2))
	ids := []string{"x0000"}
	var lines []string
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("x%04d", i)
		parent := ids[len(ids)-1]
		if i%50 == 0 {
			parent = ids[rng.IntN(len(ids))] // a branch
		}
		ids = append(ids, id)
		lines = append(lines, entry(id, parent)+"\n")
	}

	writerDone := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			writerDone <- err
			return
		}
		defer f.Close()
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			switch {
			case i%97 == 0:
				// Split inside the JSON, so the first part is never a valid line.
				k := 1 + rng.IntN(len(l)-3)
				if _, err := f.WriteString(l[:k]); err != nil {
					writerDone <- err
					return
				}
				time.Sleep(time.Millisecond)
				l = l[k:]
			case i%13 == 0 && i+1 < len(lines):
				i++
				l += lines[i] // two lines in one write
			}
			if _, err := f.WriteString(l); err != nil {
				writerDone <- err
				return
			}
			if i%100 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		writerDone <- nil
	}()

	last := ids[len(ids)-1]
	evs := h.collect("events up to the last entry", func(evs []library.Change) bool {
		return len(evs) > 0 && evs[len(evs)-1].Leaf == last
	})
	select {
	case err := <-writerDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		t.Fatal("the writer did not finish")
	}

	// Events: appends only, naming each new entry once, in order.
	var got []string
	reloads := 0
	for _, e := range evs {
		switch e.Kind {
		case library.KindAppend:
			if len(got) > 0 && e.OldLeaf != got[len(got)-1] {
				t.Errorf("append %s: OldLeaf %q; want the previous leaf %q", show1(e), e.OldLeaf, got[len(got)-1])
			}
			got = append(got, e.NewIDs...)
		case library.KindReload:
			// Only a read torn exactly before a newline does this (see TestPartialLine);
			// the client re-reads, so the ids before it need not be checked.
			reloads++
			got = got[:0]
		default:
			t.Fatalf("unexpected event %s", show1(e))
		}
	}
	t.Logf("%d entries in %d events (%d reloads)", n, len(evs), reloads)
	if reloads == 0 {
		if !slices.Equal(got, ids[1:]) {
			t.Errorf("append events named %d ids; want the %d appended, each once, in order", len(got), n)
		}
	} else if len(got) > 0 && !slices.Equal(got, ids[len(ids)-len(got):]) {
		t.Errorf("append events after the last reload do not name the last %d ids in order", len(got))
	}

	// The incrementally maintained session equals a fresh load of the file.
	fresh, err := sessions.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	err = h.lib.View("S", func(s *sessions.Session) error {
		if !slices.Equal(entryIDs(s), ids) || !slices.Equal(entryIDs(fresh), ids) {
			t.Errorf("ids: library %d, fresh load %d; want the %d written, in order", s.Len(), fresh.Len(), len(ids))
		}
		if s.Leaf() != fresh.Leaf() || leafID(s) != last {
			t.Errorf("leaf: library %d (%q), fresh load %d; want %q", s.Leaf(), leafID(s), fresh.Leaf(), last)
		}
		for i := range s.Len() {
			if s.Parent(i) != fresh.Parent(i) || !slices.Equal(s.Children(i), fresh.Children(i)) {
				t.Fatalf("entry %d (%s): library parent %d children %v; fresh load parent %d children %v",
					i, s.Entries[i].ID, s.Parent(i), s.Children(i), fresh.Parent(i), fresh.Children(i))
			}
		}
		if !slices.Equal(s.Roots(), fresh.Roots()) {
			t.Errorf("roots: library %v; fresh load %v", s.Roots(), fresh.Roots())
		}
		if !slices.Equal(s.Diags, fresh.Diags) {
			t.Errorf("diagnostics: library %v; fresh load %v", s.Diags, fresh.Diags)
		}
		if a, b := s.Meta(), fresh.Meta(); !reflect.DeepEqual(a, b) {
			t.Errorf("meta:\nlibrary    %+v\nfresh load %+v", a, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func entryIDs(s *sessions.Session) []string {
	out := make([]string, 0, s.Len())
	for _, e := range s.Entries {
		out = append(out, e.ID)
	}
	return out
}
