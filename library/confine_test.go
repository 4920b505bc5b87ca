//go:build unix

package library

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// TestLibraryRefusesLinks: the library indexes only the files
// SessionFiles lists, never one reached through a link out of the root.
func TestLibraryRefusesLinks(t *testing.T) {
	root := sessiontest.LinkedRoot(t)
	lib, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range lib.List() {
		if m.ID == "X" || m.ID == "Y" || strings.Contains(m.FirstMessage, "secret") {
			t.Errorf("the library indexed %s (%s) from outside the root", m.ID, m.File)
		}
	}
	if n := lib.Len(); n != 3 {
		t.Errorf("library holds %d files, want 3", n)
	}
}

// cfIndexed makes a root with one session file, indexes it, and returns the
// library, the file, a handle on the session and the outside folder.
func cfIndexed(t *testing.T, content string) (lib *Library, file string, h *sessions.Session, out string) {
	t.Helper()
	root, file, out := sessiontest.ConfineRoot(t, content)
	lib, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := lib.View("S", func(s *sessions.Session) error { h = s; return nil }); err != nil {
		t.Fatal(err)
	}
	return lib, file, h, out
}

// The library drops a session whose file comes to lie outside the root, and
// a session it holds never reads through a swapped path.
func TestLibraryRefusesSwappedPaths(t *testing.T) {
	for _, sw := range sessiontest.Swaps {
		t.Run(sw.Name, func(t *testing.T) {
			lib, file, _, out := cfIndexed(t, sessiontest.ConfineV3)
			if err := lib.View("S", func(s *sessions.Session) error {
				sw.Do(t, file, out)
				if _, err := s.Raw(1); !errors.Is(err, sessions.ErrOutsideRoot) {
					t.Errorf("Raw through the swapped path: %v, want ErrOutsideRoot", err)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := lib.Refresh(file); !errors.Is(err, sessions.ErrOutsideRoot) {
				t.Errorf("Refresh: %v, want ErrOutsideRoot", err)
			}
			if err := lib.View("S", func(*sessions.Session) error { return nil }); !errors.Is(err, sessions.ErrNoSession) {
				t.Errorf("the session is still served: %v", err)
			}
			if err := lib.Problems()[file]; !errors.Is(err, sessions.ErrOutsideRoot) {
				t.Errorf("Problems()[file] = %v, want ErrOutsideRoot", err)
			}
			// Seen as a new file, it is refused too.
			lib2 := NewLibrary(lib.Root)
			if _, err := lib2.Refresh(file); !errors.Is(err, sessions.ErrOutsideRoot) {
				t.Errorf("Refresh of an unknown file: %v, want ErrOutsideRoot", err)
			}
			if lib2.Len() != 0 {
				t.Errorf("a fresh library indexed the swapped file")
			}
		})
	}
}

// A session re-read in full (the file was rewritten) keeps its root.
func TestReloadKeepsRoot(t *testing.T) {
	lib, file, _, out := cfIndexed(t, sessiontest.ConfineV3)
	lines := strings.SplitAfter(sessiontest.ConfineV3, "\n")
	sessiontest.Put(t, file, lines[0]+lines[1]) // truncated: a full re-read
	c, err := lib.Refresh(file)
	if err != nil || c.Kind != KindReload {
		t.Fatalf("Refresh after a rewrite: %+v, %v; want a reload", c, err)
	}
	sessiontest.Swaps[0].Do(t, file, out)
	if _, err := lib.Refresh(file); !errors.Is(err, sessions.ErrOutsideRoot) {
		t.Errorf("Refresh after the reload and a swap: %v, want ErrOutsideRoot", err)
	}
}

func TestSessionFilesRefusesLinks(t *testing.T) {
	root := sessiontest.LinkedRoot(t)
	proj := filepath.Join(root, "--p--")
	got, err := SessionFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "--alias--", "a.jsonl"), filepath.Join(proj, "a.jsonl"), filepath.Join(root, "top.jsonl")}
	if !slices.Equal(got, want) {
		t.Errorf("SessionFiles:\n got %q\nwant %q", got, want)
	}
}
