//go:build unix

package watcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/library"
)

// Folders and files that lead out of the sessions root, made while the
// watcher runs, are never indexed; sessions whose path comes to lead out of
// it are removed.
func TestLinksOutOfTheRoot(t *testing.T) {
	base := t.TempDir()
	root, out := filepath.Join(base, "root"), filepath.Join(base, "outside")
	p := project(root, "--w--", "s")
	writeFile(t, p, header("S")+"\n"+chain("e1"))
	writeFile(t, project(out, "--o--", "x"), header("X")+"\n"+chain("x1"))
	h := start(t, root, Options{Rescan: 50 * time.Millisecond}, nil)

	// A folder link out of the root, then a session written through it.
	if err := os.Symlink(filepath.Join(out, "--o--"), filepath.Join(root, "--out--")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, project(out, "--o--", "y"), header("Y")+"\n"+chain("y1"))
	// A file link out of the root, in the root and in a project folder.
	if err := os.Symlink(project(out, "--o--", "x"), filepath.Join(root, "top.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(project(out, "--o--", "x"), project(root, "--w--", "link")); err != nil {
		t.Fatal(err)
	}
	// A sentinel session made after them, then a few rescans.
	q := project(root, "--ok--", "q")
	writeFile(t, q, header("Q")+"\n"+chain("q1"))
	h.collect("the sentinel session", func(evs []library.Change) bool {
		return len(evs) > 0 && evs[len(evs)-1].Key == "Q"
	})
	time.Sleep(300 * time.Millisecond)
	for _, m := range h.lib.List() {
		if m.ID != "S" && m.ID != "Q" {
			t.Errorf("indexed %s from %s", m.ID, m.File)
		}
	}
	for _, e := range h.seen {
		if e.Key == "X" || e.Key == "Y" {
			t.Errorf("published %s", show1(e))
		}
	}

	// The watched project folder is swapped for a link to a folder outside
	// holding a file of the same name: the session leaves the library.
	writeFile(t, project(out, "--evil--", "s"), header("S")+"\n"+chain("e1", "secret"))
	if err := os.Rename(filepath.Dir(p), filepath.Join(base, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "--evil--"), filepath.Dir(p)); err != nil {
		t.Fatal(err)
	}
	evs := h.collect("S removed", func(evs []library.Change) bool {
		return len(evs) > 0 && evs[len(evs)-1].Key == "S" && evs[len(evs)-1].Kind == library.KindRemove
	})
	for _, e := range evs {
		if slicesContains(e.NewIDs, "secret") || e.Leaf == "secret" {
			t.Errorf("published the outside file's entries: %s", show1(e))
		}
	}
	time.Sleep(300 * time.Millisecond) // several rescans
	for _, m := range h.lib.List() {
		if m.ID == "S" || strings.Contains(m.File, "--w--") {
			t.Errorf("still indexed: %s from %s", m.ID, m.File)
		}
	}
	// The refused path is forgotten: rescans do not report it again and again.
	for {
		select {
		case e := <-h.events:
			t.Errorf("event after the removal: %s", show1(e))
			continue
		default:
		}
		break
	}
}

func slicesContains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
