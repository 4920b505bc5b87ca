//go:build unix

package sessions

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Confinement tests: real symlinks in temporary folders. A "root" holds the
// sessions; an "outside" folder holds files that must never be read as
// sessions nor written to.

const (
	cfV3 = `{"type":"session","version":3,"id":"S","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0}},"stopReason":"stop","timestamp":2}}
`
	// The same session id with other content, as planted outside the root.
	cfOutside = `{"type":"session","version":3,"id":"S","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/secret"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"secret","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"secret 2","timestamp":2}}
`
	cfV2 = `{"type":"session","version":2,"id":"S","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"hookMessage","content":"x","timestamp":2}}
`
)

// cfWrite writes content to path, creating its folder.
func cfWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cfLink makes link a symlink to target.
func cfLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// cfTree returns every file and link under dir with its content or target.
func cfTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[p] = "-> " + target
			return err
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			out[p] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cfSame fails unless dir holds what before recorded.
func cfSame(t *testing.T, what, dir string, before map[string]string) {
	t.Helper()
	after := cfTree(t, dir)
	for p, c := range after {
		if b, ok := before[p]; !ok {
			t.Errorf("%s: %s was created", what, p)
		} else if b != c {
			t.Errorf("%s: %s was changed:\n%s", what, p, c)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s: %s was removed", what, p)
		}
	}
}

func TestSessionFilesRefusesLinks(t *testing.T) {
	base := t.TempDir()
	root, out := filepath.Join(base, "root"), filepath.Join(base, "outside")
	proj := filepath.Join(root, "--p--")
	cfWrite(t, filepath.Join(proj, "a.jsonl"), cfV3)
	cfWrite(t, filepath.Join(root, "top.jsonl"), strings.Replace(cfV3, `"S"`, `"T"`, 1))
	cfWrite(t, filepath.Join(out, "x.jsonl"), strings.Replace(cfOutside, `"S"`, `"X"`, 1))
	cfWrite(t, filepath.Join(out, "--o--", "y.jsonl"), strings.Replace(cfOutside, `"S"`, `"Y"`, 1))
	cfLink(t, filepath.Join(out, "x.jsonl"), filepath.Join(proj, "out.jsonl"))               // file link out of the root
	cfLink(t, "a.jsonl", filepath.Join(proj, "in.jsonl"))                                    // file link inside: still a link
	cfLink(t, filepath.Join(out, "x.jsonl"), filepath.Join(root, "topout.jsonl"))            // a link in the root itself
	cfLink(t, filepath.Join(out, "--o--"), filepath.Join(root, "--out--"))                   // folder link out of the root
	cfLink(t, filepath.Join("..", "..", "outside", "--o--"), filepath.Join(root, "--rel--")) // relative, still out
	cfLink(t, proj, filepath.Join(root, "--abs--"))                                          // absolute link, even to inside
	cfLink(t, "--p--", filepath.Join(root, "--alias--"))                                     // relative link inside: followed
	cfLink(t, filepath.Join(base, "nowhere"), filepath.Join(root, "--dangling--"))

	got, err := SessionFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "--alias--", "a.jsonl"), filepath.Join(proj, "a.jsonl"), filepath.Join(root, "top.jsonl")}
	if !slices.Equal(got, want) {
		t.Errorf("SessionFiles:\n got %q\nwant %q", got, want)
	}
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

func TestWithin(t *testing.T) {
	base := t.TempDir()
	root, out := filepath.Join(base, "root"), filepath.Join(base, "outside")
	cfWrite(t, filepath.Join(root, "--p--", "a.jsonl"), cfV3)
	cfWrite(t, filepath.Join(out, "x.jsonl"), cfOutside)
	cfLink(t, out, filepath.Join(root, "--out--"))
	cfLink(t, "--p--", filepath.Join(root, "--alias--"))
	cfLink(t, filepath.Join("..", "outside"), filepath.Join(root, "--rel--"))
	// A root reached through a link is the user's choice: it is followed.
	rootLink := filepath.Join(base, "rootlink")
	cfLink(t, root, rootLink)

	for _, tt := range []struct {
		root, path string
		want       bool
	}{
		{root, filepath.Join(root, "--p--"), true},
		{root, filepath.Join(root, "--p--", "a.jsonl"), true},
		{root, filepath.Join(root, "--alias--"), true},
		{rootLink, filepath.Join(rootLink, "--p--"), true},
		{root, filepath.Join(root, "--out--"), false},
		{root, filepath.Join(root, "--out--", "x.jsonl"), false},
		{root, filepath.Join(root, "--rel--"), false},
		{root, filepath.Join(root, "--p--", "..", "..", "outside"), false},
		{root, filepath.Join(root, "..", "outside", "x.jsonl"), false},
		{root, out, false},
		{root, filepath.Join(root, "--missing--"), false},
	} {
		if got := Within(tt.root, tt.path); got != tt.want {
			t.Errorf("Within(%s, %s) = %v, want %v", tt.root, tt.path, got, tt.want)
		}
	}
}

func TestOpenIn(t *testing.T) {
	base := t.TempDir()
	root, out := filepath.Join(base, "root"), filepath.Join(base, "outside")
	proj := filepath.Join(root, "--p--")
	cfWrite(t, filepath.Join(proj, "a.jsonl"), cfV3)
	cfWrite(t, filepath.Join(out, "x.jsonl"), cfOutside)
	cfLink(t, filepath.Join(out, "x.jsonl"), filepath.Join(proj, "out.jsonl"))
	cfLink(t, "a.jsonl", filepath.Join(proj, "in.jsonl"))
	cfLink(t, out, filepath.Join(root, "--out--"))
	if err := os.Mkdir(filepath.Join(proj, "dir.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(proj, "fifo.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name, path string
		want       error // nil: opens
	}{
		{"regular file", filepath.Join(proj, "a.jsonl"), nil},
		{"link to a file outside", filepath.Join(proj, "out.jsonl"), ErrOutsideRoot},
		{"link to a file inside", filepath.Join(proj, "in.jsonl"), ErrOutsideRoot},
		{"file in a folder linked outside", filepath.Join(root, "--out--", "x.jsonl"), ErrOutsideRoot},
		{"dot-dot out of the root", filepath.Join(proj, "..", "..", "outside", "x.jsonl"), ErrOutsideRoot},
		{"dot-dot inside the root", filepath.Join(proj, "..", "--p--", "a.jsonl"), nil},
		{"the root itself", root, ErrOutsideRoot},
		{"a folder", filepath.Join(proj, "dir.jsonl"), ErrOutsideRoot},
		{"a FIFO (must not block)", filepath.Join(proj, "fifo.jsonl"), ErrOutsideRoot},
		{"missing", filepath.Join(proj, "none.jsonl"), fs.ErrNotExist},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, flag := range []int{os.O_RDONLY, os.O_WRONLY | os.O_APPEND} {
				done := make(chan error, 1)
				go func() {
					f, _, err := OpenIn(root, tt.path, flag)
					if err == nil {
						f.Close()
					}
					done <- err
				}()
				select {
				case err := <-done:
					if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
						t.Errorf("flag %#x: %v, want %v", flag, err, tt.want)
					}
				case <-time.After(guard):
					t.Fatalf("flag %#x: OpenIn blocked", flag)
				}
			}
		})
	}
	before := cfTree(t, out)
	if _, err := Load(filepath.Join(proj, "out.jsonl")); err != nil {
		t.Fatalf("Load (unconfined, for piweb inspect) of a link: %v", err)
	}
	cfSame(t, "OpenIn", out, before)
}

// cfSwap is a change made to the tree after the library indexed it.
type cfSwap struct {
	name string
	do   func(t *testing.T, file, out string) // file: the indexed session file; out: the outside folder
}

var cfSwaps = []cfSwap{
	{"session file replaced by a link out of the root", func(t *testing.T, file, out string) {
		cfWrite(t, filepath.Join(out, filepath.Base(file)), cfOutside)
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		cfLink(t, filepath.Join(out, filepath.Base(file)), file)
	}},
	{"session file replaced by a link to a file inside the root", func(t *testing.T, file, out string) {
		other := filepath.Join(filepath.Dir(file), "other.txt")
		cfWrite(t, other, cfV3)
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		cfLink(t, "other.txt", file)
	}},
	{"project folder replaced by a link out of the root", func(t *testing.T, file, out string) {
		dir := filepath.Dir(file)
		cfWrite(t, filepath.Join(out, "--p--", filepath.Base(file)), cfOutside)
		if err := os.Rename(dir, dir+".old"); err != nil {
			t.Fatal(err)
		}
		cfLink(t, filepath.Join(out, "--p--"), dir)
	}},
	{"project folder replaced by a relative link out of the root", func(t *testing.T, file, out string) {
		dir := filepath.Dir(file)
		cfWrite(t, filepath.Join(out, "--p--", filepath.Base(file)), cfOutside)
		if err := os.Rename(dir, dir+".old"); err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(filepath.Dir(dir), filepath.Join(out, "--p--"))
		if err != nil {
			t.Fatal(err)
		}
		cfLink(t, rel, dir)
	}},
}

// cfWriters are the writers, each given a handle on the indexed session.
var cfWriters = []struct {
	name    string
	content string
	write   func(h *Session) error
}{
	{"Label", cfV3, func(h *Session) error { _, err := label(h, "a1", "x"); return err }},
	{"Rewind", cfV3, func(h *Session) error { _, err := rewind(h, "a1", "", Guard{}); return err }},
	{"Fork", cfV3, func(h *Session) error { _, _, err := forkOf(h, "a1"); return err }},
	{"Upgrade", cfV2, func(h *Session) error { _, err := upgradeOf(h); return err }},
}

// cfIndexed makes a root with one session file, indexes it, and returns the
// library, the file, a writer handle on it and the outside folder.
func cfIndexed(t *testing.T, content string) (lib *Library, file string, h *Session, out string) {
	t.Helper()
	base := t.TempDir()
	root, out := filepath.Join(base, "root"), filepath.Join(base, "outside")
	file = filepath.Join(root, "--p--", "2026-01-01T00-00-00-000Z_S.jsonl")
	cfWrite(t, file, content)
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	lib, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := lib.View("S", func(s *Session) error { h = s; return nil }); err != nil {
		t.Fatal(err)
	}
	return lib, file, h, out
}

func TestWritersRefusePathsLeavingTheRoot(t *testing.T) {
	for _, w := range cfWriters {
		t.Run(w.name+"/unchanged tree", func(t *testing.T) {
			_, file, h, _ := cfIndexed(t, w.content)
			before := cfTree(t, filepath.Dir(file))
			if err := w.write(h); err != nil {
				t.Fatalf("%s in an untouched root: %v", w.name, err)
			}
			if after := cfTree(t, filepath.Dir(file)); len(after) == len(before) && after[file] == before[file] {
				t.Errorf("%s wrote nothing", w.name)
			}
		})
		for _, sw := range cfSwaps {
			t.Run(w.name+"/"+sw.name, func(t *testing.T) {
				_, file, h, out := cfIndexed(t, w.content)
				root := filepath.Dir(filepath.Dir(file))
				sw.do(t, file, out)
				beforeOut, beforeRoot := cfTree(t, out), cfTree(t, root)
				err := w.write(h)
				if !errors.Is(err, ErrOutsideRoot) {
					t.Errorf("%s after the swap: %v, want ErrOutsideRoot", w.name, err)
				}
				cfSame(t, w.name+" outside", out, beforeOut)
				cfSame(t, w.name+" root", root, beforeRoot)
			})
		}
		t.Run(w.name+"/dot-dot in the file name", func(t *testing.T) {
			_, file, _, out := cfIndexed(t, w.content)
			root := filepath.Dir(filepath.Dir(file))
			cfWrite(t, filepath.Join(out, "s.jsonl"), strings.Replace(cfOutside, `"version":3`, `"version":2`, 1))
			// Lexically under the project folder, but climbing out of the root.
			h := &Session{File: filepath.Join(root, "--p--", "..", "..", "outside", "s.jsonl"), root: root}
			before := cfTree(t, out)
			if err := w.write(h); !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("%s: %v, want ErrOutsideRoot", w.name, err)
			}
			cfSame(t, w.name, out, before)
		})
	}
}

// Writers given a Session without a root (read with Load, or made from a
// path) are confined to the file's folder: a link is still refused.
func TestWritersWithoutRootRefuseLinks(t *testing.T) {
	for _, w := range cfWriters {
		t.Run(w.name, func(t *testing.T) {
			_, file, _, out := cfIndexed(t, w.content)
			cfSwaps[0].do(t, file, out)
			before := cfTree(t, out)
			if err := w.write(&Session{File: file}); !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("%s: %v, want ErrOutsideRoot", w.name, err)
			}
			cfSame(t, w.name, out, before)
		})
	}
	t.Run("upgradeFile(path)", func(t *testing.T) {
		_, file, _, out := cfIndexed(t, cfV2)
		cfSwaps[0].do(t, file, out)
		before := cfTree(t, out)
		if _, err := upgradeFile(file); !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("Upgrade: %v, want ErrOutsideRoot", err)
		}
		cfSame(t, "Upgrade", out, before)
	})
}

// The library drops a session whose file comes to lie outside the root, and
// a session it holds never reads through a swapped path.
func TestLibraryRefusesSwappedPaths(t *testing.T) {
	for _, sw := range cfSwaps {
		t.Run(sw.name, func(t *testing.T) {
			lib, file, _, out := cfIndexed(t, cfV3)
			if err := lib.View("S", func(s *Session) error {
				sw.do(t, file, out)
				if _, err := s.Raw(1); !errors.Is(err, ErrOutsideRoot) {
					t.Errorf("Raw through the swapped path: %v, want ErrOutsideRoot", err)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := lib.Refresh(file); !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("Refresh: %v, want ErrOutsideRoot", err)
			}
			if err := lib.View("S", func(*Session) error { return nil }); !errors.Is(err, ErrNoSession) {
				t.Errorf("the session is still served: %v", err)
			}
			if err := lib.Problems()[file]; !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("Problems()[file] = %v, want ErrOutsideRoot", err)
			}
			// Seen as a new file, it is refused too.
			lib2 := NewLibrary(lib.Root)
			if _, err := lib2.Refresh(file); !errors.Is(err, ErrOutsideRoot) {
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
	lib, file, _, out := cfIndexed(t, cfV3)
	lines := strings.SplitAfter(cfV3, "\n")
	cfWrite(t, file, lines[0]+lines[1]) // truncated: a full re-read
	c, err := lib.Refresh(file)
	if err != nil || c.Kind != KindReload {
		t.Fatalf("Refresh after a rewrite: %+v, %v; want a reload", c, err)
	}
	cfSwaps[0].do(t, file, out)
	if _, err := lib.Refresh(file); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("Refresh after the reload and a swap: %v, want ErrOutsideRoot", err)
	}
}

// Fork writes its new file beside the source, inside the root, and names
// the source (a string, never opened) as parentSession.
func TestForkStaysBesideSource(t *testing.T) {
	lib, file, h, _ := cfIndexed(t, cfV3)
	id, nf, err := forkOf(h, "a2")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(nf) != filepath.Dir(file) || !Within(lib.Root, nf) {
		t.Errorf("fork written to %s, want beside %s", nf, file)
	}
	s, err := LoadIn(lib.Root, nf)
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
	cfWrite(t, filepath.Join(proj, "a.jsonl"), cfV3)
	cfWrite(t, filepath.Join(out, "x.jsonl"), cfOutside)
	cfLink(t, out, filepath.Join(root, "--out--"))
	cfLink(t, filepath.Join(out, "x.jsonl"), filepath.Join(proj, "link.jsonl"))
	cfLink(t, filepath.Join(out, "new.jsonl"), filepath.Join(proj, "dangling.jsonl"))
	beforeOut := cfTree(t, out)
	for _, tt := range []struct {
		name, path string
		want       error
	}{
		{"in a folder linked outside", filepath.Join(root, "--out--", "new.jsonl"), ErrOutsideRoot},
		{"dot-dot out of the root", filepath.Join(proj, "..", "..", "outside", "new.jsonl"), ErrOutsideRoot},
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
	cfSame(t, "createIn", out, beforeOut)
	if b, err := os.ReadFile(filepath.Join(proj, "a.jsonl")); err != nil || string(b) != cfV3 {
		t.Errorf("existing file changed: %q, %v", b, err)
	}
}

// A path swapped between OpenIn's first check and its open is refused too.
func TestOpenInRace(t *testing.T) {
	t.Cleanup(func() { openInRace = nil })
	for _, sw := range cfSwaps {
		t.Run(sw.name, func(t *testing.T) {
			_, file, h, out := cfIndexed(t, cfV3)
			root := filepath.Dir(filepath.Dir(file))
			swapped := false
			openInRace = func(p string) {
				if p == file && !swapped {
					swapped = true
					sw.do(t, file, out)
				}
			}
			defer func() { openInRace = nil }()
			if s, err := LoadIn(root, file); !errors.Is(err, ErrOutsideRoot) || !swapped {
				t.Errorf("LoadIn with a swap during the open: %v (swapped: %v), want ErrOutsideRoot", err, swapped)
				if s != nil {
					t.Errorf("read %q", s.FirstMessage)
				}
			}
			openInRace = nil
			beforeOut, beforeRoot := cfTree(t, out), cfTree(t, root)
			if _, err := label(h, "a1", "x"); !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("Label after the swap: %v, want ErrOutsideRoot", err)
			}
			cfSame(t, "outside", out, beforeOut)
			cfSame(t, "root", root, beforeRoot)
		})
	}
}

func TestSaveBeside(t *testing.T) {
	_, file, h, out := cfIndexed(t, cfV3)
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
	beforeOut, beforeDir := cfTree(t, out), cfTree(t, filepath.Dir(dir))
	for _, name := range []string{"x/../../../outside/e.html", "../e.html", "..", ".", "", ".hidden", `a\b`, "a/b"} {
		if p, err := saveOf(h, name, []byte("x")); !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("saveOf(%q): %q, %v; want ErrOutsideRoot", name, p, err)
		}
	}
	for _, sw := range cfSwaps[:3] {
		_, file, h, out := cfIndexed(t, cfV3)
		sw.do(t, file, out)
		before := cfTree(t, out)
		if p, err := saveOf(h, "e.html", []byte("x")); !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("%s: %q, %v; want ErrOutsideRoot", sw.name, p, err)
		}
		cfSame(t, sw.name, out, before)
	}
	cfSame(t, "outside", out, beforeOut)
	cfSame(t, "root", filepath.Dir(dir), beforeDir)
}

// TestSaveBesideTo: a save written through a func lands whole, and one
// whose func fails leaves nothing behind.
func TestSaveBesideTo(t *testing.T) {
	_, file, h, _ := cfIndexed(t, cfV3)
	dir := filepath.Dir(file)
	before := cfTree(t, dir)
	_, err := saveOfTo(h, "e.html", func(w io.Writer) error {
		io.WriteString(w, "half a page")
		return errors.New("the request went away")
	})
	if err == nil {
		t.Fatal("a failed write saved a file")
	}
	cfSame(t, "after a failed save", dir, before)
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
