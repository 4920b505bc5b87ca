//go:build unix

package sessions

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
)

func TestWithin(t *testing.T) {
	base := t.TempDir()
	root, out := filepath.Join(base, "root"), filepath.Join(base, "outside")
	sessiontest.Put(t, filepath.Join(root, "--p--", "a.jsonl"), sessiontest.ConfineV3)
	sessiontest.Put(t, filepath.Join(out, "x.jsonl"), sessiontest.ConfineOutside)
	sessiontest.Symlink(t, out, filepath.Join(root, "--out--"))
	sessiontest.Symlink(t, "--p--", filepath.Join(root, "--alias--"))
	sessiontest.Symlink(t, filepath.Join("..", "outside"), filepath.Join(root, "--rel--"))
	// A root reached through a link is the user's choice: it is followed.
	rootLink := filepath.Join(base, "rootlink")
	sessiontest.Symlink(t, root, rootLink)

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
	sessiontest.Put(t, filepath.Join(proj, "a.jsonl"), sessiontest.ConfineV3)
	sessiontest.Put(t, filepath.Join(out, "x.jsonl"), sessiontest.ConfineOutside)
	sessiontest.Symlink(t, filepath.Join(out, "x.jsonl"), filepath.Join(proj, "out.jsonl"))
	sessiontest.Symlink(t, "a.jsonl", filepath.Join(proj, "in.jsonl"))
	sessiontest.Symlink(t, out, filepath.Join(root, "--out--"))
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
	before := sessiontest.Files(t, out)
	if _, err := Load(filepath.Join(proj, "out.jsonl")); err != nil {
		t.Fatalf("Load (unconfined, for piweb inspect) of a link: %v", err)
	}
	sessiontest.Unchanged(t, "OpenIn", out, before)
}

// A path swapped between OpenIn's first check and its open is refused too
// (the writers after such a swap: writer's TestWritersRefusePathsLeavingTheRoot).
func TestOpenInRace(t *testing.T) {
	t.Cleanup(func() { openInRace = nil })
	for _, sw := range sessiontest.Swaps {
		t.Run(sw.Name, func(t *testing.T) {
			root, file, out := sessiontest.ConfineRoot(t, sessiontest.ConfineV3)
			swapped := false
			openInRace = func(p string) {
				if p == file && !swapped {
					swapped = true
					sw.Do(t, file, out)
				}
			}
			defer func() { openInRace = nil }()
			if s, err := LoadIn(root, file); !errors.Is(err, ErrOutsideRoot) || !swapped {
				t.Errorf("LoadIn with a swap during the open: %v (swapped: %v), want ErrOutsideRoot", err, swapped)
				if s != nil {
					t.Errorf("read %q", s.FirstMessage)
				}
			}
		})
	}
}
