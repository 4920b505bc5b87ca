package sessiontest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Confinement fixtures: real symlinks in temporary folders. A "root" holds
// the sessions; an "outside" folder holds files that must never be read as
// sessions nor written to.

const (
	// ConfineV3 is a version 3 session "S" of two messages.
	ConfineV3 = `{"type":"session","version":3,"id":"S","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0}},"stopReason":"stop","timestamp":2}}
`
	// ConfineOutside is the same session id with other content, as planted outside the root.
	ConfineOutside = `{"type":"session","version":3,"id":"S","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/secret"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"secret","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"secret 2","timestamp":2}}
`
	// ConfineV2 is session "S" in version 2, which Upgrade rewrites.
	ConfineV2 = `{"type":"session","version":2,"id":"S","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"hookMessage","content":"x","timestamp":2}}
`
)

// Put writes content to path, creating its folder.
func Put(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Symlink makes link a symlink to target.
func Symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// Files returns every file and link under dir with its content or target.
func Files(t testing.TB, dir string) map[string]string {
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

// Unchanged fails unless dir holds what before (from Files) recorded.
func Unchanged(t testing.TB, what, dir string, before map[string]string) {
	t.Helper()
	after := Files(t, dir)
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

// Swap is a change made to the tree after a session file was indexed.
type Swap struct {
	Name string
	Do   func(t testing.TB, file, out string) // file: the indexed session file; out: the outside folder
}

// Swaps are the ways a session file or its folder comes to lead elsewhere.
var Swaps = []Swap{
	{"session file replaced by a link out of the root", func(t testing.TB, file, out string) {
		Put(t, filepath.Join(out, filepath.Base(file)), ConfineOutside)
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		Symlink(t, filepath.Join(out, filepath.Base(file)), file)
	}},
	{"session file replaced by a link to a file inside the root", func(t testing.TB, file, out string) {
		other := filepath.Join(filepath.Dir(file), "other.txt")
		Put(t, other, ConfineV3)
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		Symlink(t, "other.txt", file)
	}},
	{"project folder replaced by a link out of the root", func(t testing.TB, file, out string) {
		dir := filepath.Dir(file)
		Put(t, filepath.Join(out, "--p--", filepath.Base(file)), ConfineOutside)
		if err := os.Rename(dir, dir+".old"); err != nil {
			t.Fatal(err)
		}
		Symlink(t, filepath.Join(out, "--p--"), dir)
	}},
	{"project folder replaced by a relative link out of the root", func(t testing.TB, file, out string) {
		dir := filepath.Dir(file)
		Put(t, filepath.Join(out, "--p--", filepath.Base(file)), ConfineOutside)
		if err := os.Rename(dir, dir+".old"); err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(filepath.Dir(dir), filepath.Join(out, "--p--"))
		if err != nil {
			t.Fatal(err)
		}
		Symlink(t, rel, dir)
	}},
}

// ConfineRoot makes a root with one session file holding content, and an
// outside folder beside it, and returns the root, the file and the folder.
func ConfineRoot(t testing.TB, content string) (root, file, out string) {
	t.Helper()
	base := t.TempDir()
	root, out = filepath.Join(base, "root"), filepath.Join(base, "outside")
	file = filepath.Join(root, "--p--", "2026-01-01T00-00-00-000Z_S.jsonl")
	Put(t, file, content)
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return root, file, out
}

// LinkedRoot makes a root whose folders hold three sessions ("S" twice,
// once through a link inside the root, and "T") and links of every kind
// leading out of it to sessions "X" and "Y" outside, and returns the root.
func LinkedRoot(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	root, out := filepath.Join(base, "root"), filepath.Join(base, "outside")
	proj := filepath.Join(root, "--p--")
	Put(t, filepath.Join(proj, "a.jsonl"), ConfineV3)
	Put(t, filepath.Join(root, "top.jsonl"), strings.Replace(ConfineV3, `"S"`, `"T"`, 1))
	Put(t, filepath.Join(out, "x.jsonl"), strings.Replace(ConfineOutside, `"S"`, `"X"`, 1))
	Put(t, filepath.Join(out, "--o--", "y.jsonl"), strings.Replace(ConfineOutside, `"S"`, `"Y"`, 1))
	Symlink(t, filepath.Join(out, "x.jsonl"), filepath.Join(proj, "out.jsonl"))               // file link out of the root
	Symlink(t, "a.jsonl", filepath.Join(proj, "in.jsonl"))                                    // file link inside: still a link
	Symlink(t, filepath.Join(out, "x.jsonl"), filepath.Join(root, "topout.jsonl"))            // a link in the root itself
	Symlink(t, filepath.Join(out, "--o--"), filepath.Join(root, "--out--"))                   // folder link out of the root
	Symlink(t, filepath.Join("..", "..", "outside", "--o--"), filepath.Join(root, "--rel--")) // relative, still out
	Symlink(t, proj, filepath.Join(root, "--abs--"))                                          // absolute link, even to inside
	Symlink(t, "--p--", filepath.Join(root, "--alias--"))                                     // relative link inside: followed
	Symlink(t, filepath.Join(base, "nowhere"), filepath.Join(root, "--dangling--"))

	return root
}
