//go:build linux

package library

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/writer"
)

// TestConcurrentWritesChain runs many labels and rewinds at once through
// the library: each lands on the file as it is at that moment, so every
// label hangs off the line before it and every rewind records that line
// as the leaf it left (fromId), whatever the interleaving.
func TestConcurrentWritesChain(t *testing.T) {
	root := t.TempDir()
	p := sessiontest.File(t, root, "s.jsonl", sessiontest.Lines(sessiontest.Header, sessiontest.User("u1", "", 1, "hi"), sessiontest.Asst("a1", "u1", 2, "ok"), sessiontest.User("u2", "a1", 3, "more")))
	lib, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for k := range n {
		wg.Go(func() {
			_, err := lib.Rewind("s1", []string{"u1", "a1", "u2"}[k%3], "", writer.Guard{})
			errs <- err
		})
		wg.Go(func() {
			_, err := lib.Label("s1", "a1", fmt.Sprint("l", k))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 4+2*n {
		t.Fatalf("%d lines, want %d", len(lines), 4+2*n)
	}
	prev := "u2"
	for k, l := range lines[4:] {
		var e struct {
			Type, ID, ParentID string
			Data               struct{ FromID string }
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %d: %v", 5+k, err)
		}
		switch e.Type {
		case sessions.TypeLabel:
			if e.ParentID != prev {
				t.Errorf("line %d: a label hangs off %s, but the leaf was %s", 5+k, e.ParentID, prev)
			}
		case sessions.TypeCustom:
			if e.Data.FromID != prev {
				t.Errorf("line %d: a rewind records %s as the leaf it left, but the leaf was %s", 5+k, e.Data.FromID, prev)
			}
		}
		prev = e.ID
	}
	var fresh *sessions.Session
	if fresh, err = sessions.Load(p); err != nil {
		t.Fatal(err)
	}
	if err := lib.View("s1", func(s *sessions.Session) error {
		readtest.SameIndex(t, s, fresh)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
