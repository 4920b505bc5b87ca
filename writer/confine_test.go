//go:build unix

package writer

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// cfWriters are the writers, each given a handle on the indexed session.
var cfWriters = []struct {
	name    string
	content string
	write   func(h *sessions.Session) error
}{
	{"Label", sessiontest.ConfineV3, func(h *sessions.Session) error { _, err := label(h, "a1", "x"); return err }},
	{"Rewind", sessiontest.ConfineV3, func(h *sessions.Session) error { _, err := rewind(h, "a1", "", Guard{}); return err }},
	{"Fork", sessiontest.ConfineV3, func(h *sessions.Session) error { _, _, err := forkOf(h, "a1"); return err }},
	{"Upgrade", sessiontest.ConfineV2, func(h *sessions.Session) error { _, err := upgradeOf(h); return err }},
}

// cfIndexed makes a root with one session file, reads it as the library
// does (LoadIn), and returns the root, the file, a writer handle on it and
// the outside folder.
func cfIndexed(t *testing.T, content string) (root, file string, h *sessions.Session, out string) {
	t.Helper()
	root, file, out = sessiontest.ConfineRoot(t, content)
	h, err := sessions.LoadIn(root, file)
	if err != nil {
		t.Fatal(err)
	}
	return root, file, h, out
}

func TestWritersRefusePathsLeavingTheRoot(t *testing.T) {
	for _, w := range cfWriters {
		t.Run(w.name+"/unchanged tree", func(t *testing.T) {
			_, file, h, _ := cfIndexed(t, w.content)
			before := sessiontest.Files(t, filepath.Dir(file))
			if err := w.write(h); err != nil {
				t.Fatalf("%s in an untouched root: %v", w.name, err)
			}
			if after := sessiontest.Files(t, filepath.Dir(file)); len(after) == len(before) && after[file] == before[file] {
				t.Errorf("%s wrote nothing", w.name)
			}
		})
		for _, sw := range sessiontest.Swaps {
			t.Run(w.name+"/"+sw.Name, func(t *testing.T) {
				_, file, h, out := cfIndexed(t, w.content)
				root := filepath.Dir(filepath.Dir(file))
				sw.Do(t, file, out)
				beforeOut, beforeRoot := sessiontest.Files(t, out), sessiontest.Files(t, root)
				err := w.write(h)
				if !errors.Is(err, sessions.ErrOutsideRoot) {
					t.Errorf("%s after the swap: %v, want ErrOutsideRoot", w.name, err)
				}
				sessiontest.Unchanged(t, w.name+" outside", out, beforeOut)
				sessiontest.Unchanged(t, w.name+" root", root, beforeRoot)
			})
		}
		t.Run(w.name+"/dot-dot in the file name", func(t *testing.T) {
			_, file, _, out := cfIndexed(t, w.content)
			root := filepath.Dir(filepath.Dir(file))
			sessiontest.Put(t, filepath.Join(out, "s.jsonl"), strings.Replace(sessiontest.ConfineOutside, `"version":3`, `"version":2`, 1))
			// Lexically under the project folder, but climbing out of the root.
			h, err := sessions.LoadIn(root, file)
			if err != nil {
				t.Fatal(err)
			}
			h.File = filepath.Join(root, "--p--", "..", "..", "outside", "s.jsonl")
			before := sessiontest.Files(t, out)
			if err := w.write(h); !errors.Is(err, sessions.ErrOutsideRoot) {
				t.Errorf("%s: %v, want ErrOutsideRoot", w.name, err)
			}
			sessiontest.Unchanged(t, w.name, out, before)
		})
	}
}

// Writers given a Session without a root (read with Load, or made from a
// path) are confined to the file's folder: a link is still refused.
func TestWritersWithoutRootRefuseLinks(t *testing.T) {
	for _, w := range cfWriters {
		t.Run(w.name, func(t *testing.T) {
			_, file, _, out := cfIndexed(t, w.content)
			sessiontest.Swaps[0].Do(t, file, out)
			before := sessiontest.Files(t, out)
			if err := w.write(&sessions.Session{File: file}); !errors.Is(err, sessions.ErrOutsideRoot) {
				t.Errorf("%s: %v, want ErrOutsideRoot", w.name, err)
			}
			sessiontest.Unchanged(t, w.name, out, before)
		})
	}
	t.Run("upgradeFile(path)", func(t *testing.T) {
		_, file, _, out := cfIndexed(t, sessiontest.ConfineV2)
		sessiontest.Swaps[0].Do(t, file, out)
		before := sessiontest.Files(t, out)
		if _, err := upgradeFile(file); !errors.Is(err, sessions.ErrOutsideRoot) {
			t.Errorf("Upgrade: %v, want ErrOutsideRoot", err)
		}
		sessiontest.Unchanged(t, "Upgrade", out, before)
	})
}

// Fork writes its new file beside the source, inside the root, and names
// the source (a string, never opened) as parentSession.
func TestForkStaysBesideSource(t *testing.T) {
	root, file, h, _ := cfIndexed(t, sessiontest.ConfineV3)
	id, nf, err := forkOf(h, "a2")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(nf) != filepath.Dir(file) || !sessions.Within(root, nf) {
		t.Errorf("fork written to %s, want beside %s", nf, file)
	}
	s, err := sessions.LoadIn(root, nf)
	if err != nil {
		t.Fatal(err)
	}
	if s.Header.ID != id || s.Header.ParentSession != file {
		t.Errorf("fork header: id %q parentSession %q", s.Header.ID, s.Header.ParentSession)
	}
	names, _ := os.ReadDir(filepath.Dir(file))
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", n.Name())
		}
	}
}

// createIn never creates a file outside the root, whatever the folders hold.
func TestCreateIn(t *testing.T) {
	base := t.TempDir()
	root, out := filepath.Join(base, "root"), filepath.Join(base, "outside")
	proj := filepath.Join(root, "--p--")
	sessiontest.Put(t, filepath.Join(proj, "a.jsonl"), sessiontest.ConfineV3)
	sessiontest.Put(t, filepath.Join(out, "x.jsonl"), sessiontest.ConfineOutside)
	sessiontest.Symlink(t, out, filepath.Join(root, "--out--"))
	sessiontest.Symlink(t, filepath.Join(out, "x.jsonl"), filepath.Join(proj, "link.jsonl"))
	sessiontest.Symlink(t, filepath.Join(out, "new.jsonl"), filepath.Join(proj, "dangling.jsonl"))
	beforeOut := sessiontest.Files(t, out)
	for _, tt := range []struct {
		name, path string
		want       error
	}{
		{"in a folder linked outside", filepath.Join(root, "--out--", "new.jsonl"), sessions.ErrOutsideRoot},
		{"dot-dot out of the root", filepath.Join(proj, "..", "..", "outside", "new.jsonl"), sessions.ErrOutsideRoot},
		{"over a link to a file outside", filepath.Join(proj, "link.jsonl"), fs.ErrExist},
		{"over a dangling link to outside", filepath.Join(proj, "dangling.jsonl"), fs.ErrExist},
		{"over an existing file", filepath.Join(proj, "a.jsonl"), fs.ErrExist},
		{"a new file", filepath.Join(proj, "new.jsonl"), nil},
	} {
		err := createIn(root, tt.path, []byte("data\n"), 0o644)
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	sessiontest.Unchanged(t, "createIn", out, beforeOut)
	if b, err := os.ReadFile(filepath.Join(proj, "a.jsonl")); err != nil || string(b) != sessiontest.ConfineV3 {
		t.Errorf("existing file changed: %q, %v", b, err)
	}
}

func TestSaveBeside(t *testing.T) {
	_, file, h, out := cfIndexed(t, sessiontest.ConfineV3)
	dir := filepath.Dir(file)
	for i, want := range []string{"e.html", "e-2.html", "e-3.html"} {
		p, err := saveOf(h, "e.html", []byte{byte('a' + i)})
		if err != nil || p != filepath.Join(dir, want) {
			t.Fatalf("save %d: %q, %v; want %s", i, p, err, want)
		}
		if b, _ := os.ReadFile(p); string(b) != string(rune('a'+i)) {
			t.Errorf("%s holds %q", p, b)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v, want the session file's 0644", p, st.Mode().Perm())
		}
	}
	beforeOut, beforeDir := sessiontest.Files(t, out), sessiontest.Files(t, filepath.Dir(dir))
	for _, name := range []string{"x/../../../outside/e.html", "../e.html", "..", ".", "", ".hidden", `a\b`, "a/b"} {
		if p, err := saveOf(h, name, []byte("x")); !errors.Is(err, sessions.ErrOutsideRoot) {
			t.Errorf("saveOf(%q): %q, %v; want ErrOutsideRoot", name, p, err)
		}
	}
	for _, sw := range sessiontest.Swaps[:3] {
		_, file, h, out := cfIndexed(t, sessiontest.ConfineV3)
		sw.Do(t, file, out)
		before := sessiontest.Files(t, out)
		if p, err := saveOf(h, "e.html", []byte("x")); !errors.Is(err, sessions.ErrOutsideRoot) {
			t.Errorf("%s: %q, %v; want ErrOutsideRoot", sw.Name, p, err)
		}
		sessiontest.Unchanged(t, sw.Name, out, before)
	}
	sessiontest.Unchanged(t, "outside", out, beforeOut)
	sessiontest.Unchanged(t, "root", filepath.Dir(dir), beforeDir)
}

// TestSaveBesideTo: a save written through a func lands whole, and one
// whose func fails leaves nothing behind.
func TestSaveBesideTo(t *testing.T) {
	_, file, h, _ := cfIndexed(t, sessiontest.ConfineV3)
	dir := filepath.Dir(file)
	before := sessiontest.Files(t, dir)
	_, err := saveOfTo(h, "e.html", func(w io.Writer) error {
		io.WriteString(w, "half a page")
		return errors.New("the request went away")
	})
	if err == nil {
		t.Fatal("a failed write saved a file")
	}
	sessiontest.Unchanged(t, "after a failed save", dir, before)
	p, err := saveOfTo(h, "e.html", func(w io.Writer) error {
		for range 1000 {
			io.WriteString(w, "0123456789")
		}
		return nil
	})
	if b, _ := os.ReadFile(p); err != nil || len(b) != 10000 || string(b[:10]) != "0123456789" {
		t.Errorf("saved %q (%d bytes), %v", p, len(b), err)
	}
}
