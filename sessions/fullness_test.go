//go:build linux

package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestAppendFullDisk: when the disk cannot take a line, the writer fails
// with ErrNoSpace before writing a byte, and the file is exactly as it was
// (a torn piece of a line would glue pi's next line onto it).
func TestAppendFullDisk(t *testing.T) {
	s, p := tLoad(t, tLines(tHeader, tUser("u1", "", 1, "hi"), tAsst("a1", "u1", 2, "ok")))
	before, _ := os.ReadFile(p)
	fallocate = func(*os.File, int64, int64) error { return syscall.ENOSPC }
	defer func() { fallocate = realFallocate }()
	if _, err := label(s, "u1", strings.Repeat("x", 10<<10)); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("Label on a full disk: %v, want ErrNoSpace", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
		t.Fatalf("the file changed:\n%q", after[len(before):])
	}
	// A write(2) that fails with nothing written is also reported so.
	fallocate = realFallocate
	writeFile = func(*os.File, []byte) (int, error) { return 0, syscall.ENOSPC }
	defer func() { writeFile = realWriteFile }()
	if _, err := rewind(s, "u1", "", Guard{}); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("Rewind when write fails: %v, want ErrNoSpace", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
		t.Fatal("the file changed")
	}
}

var realFallocate, realWriteFile = fallocate, writeFile

// TestAppendFullTmpfs fills a real, small tmpfs (root only: the CI runs as
// root) and labels with 10 KB: nothing lands, then after space is freed
// the same label lands whole.
func TestAppendFullTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	defer syscall.Unmount(dir, 0)
	p := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(p, []byte(tLines(tHeader, tUser("u1", "", 1, "hi"), tAsst("a1", "u1", 2, "ok"))), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	// Fill the disk to the last block.
	fill, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := fill.Write(chunk); err != nil {
			break
		}
	}
	for {
		if _, err := fill.Write(chunk[:1]); err != nil {
			break
		}
	}
	fill.Close()
	before, _ := os.ReadFile(p)
	if _, err := label(s, "u1", strings.Repeat("x", 10<<10)); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("Label on a full tmpfs: %v, want ErrNoSpace", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
		t.Fatalf("the file changed on a full disk: %d bytes appended", len(after)-len(before))
	}
	os.Remove(filepath.Join(dir, "fill"))
	if _, err := s.Update(); err != nil {
		t.Fatal(err)
	}
	if _, err := label(s, "u1", strings.Repeat("x", 10<<10)); err != nil {
		t.Fatalf("Label after space was freed: %v", err)
	}
	after, _ := os.ReadFile(p)
	if !bytes.HasSuffix(after, []byte("\n")) || bytes.Count(after, []byte("\n")) != bytes.Count(before, []byte("\n"))+1 {
		t.Fatal("the label did not land as one whole line")
	}
}

// TestConcurrentWritesChain runs many labels and rewinds at once through
// the library: each lands on the file as it is at that moment, so every
// label hangs off the line before it and every rewind records that line
// as the leaf it left (fromId), whatever the interleaving.
func TestConcurrentWritesChain(t *testing.T) {
	root := t.TempDir()
	p := tWrite(t, root, "s.jsonl", tLines(tHeader, tUser("u1", "", 1, "hi"), tAsst("a1", "u1", 2, "ok"), tUser("u2", "a1", 3, "more")))
	lib, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for k := range n {
		wg.Go(func() {
			_, err := lib.Rewind("s1", []string{"u1", "a1", "u2"}[k%3], "", Guard{})
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
		case TypeLabel:
			if e.ParentID != prev {
				t.Errorf("line %d: a label hangs off %s, but the leaf was %s", 5+k, e.ParentID, prev)
			}
		case TypeCustom:
			if e.Data.FromID != prev {
				t.Errorf("line %d: a rewind records %s as the leaf it left, but the leaf was %s", 5+k, e.Data.FromID, prev)
			}
		}
		prev = e.ID
	}
	var fresh *Session
	if fresh, err = Load(p); err != nil {
		t.Fatal(err)
	}
	if err := lib.View("s1", func(s *Session) error {
		tSameIndex(t, s, fresh)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestNewerVersionReadOnly: a file in a version after 3 (pi's experimental
// formats) is read, never written to.
func TestNewerVersionReadOnly(t *testing.T) {
	for _, v := range []string{"4", "99"} {
		s, p := tLoad(t, tLines(strings.Replace(tHeader, `"version":3`, `"version":`+v, 1), tUser("u1", "", 1, "hi")))
		before, _ := os.ReadFile(p)
		var e *Error
		if _, err := label(s, "u1", "x"); !errors.As(err, &e) || !errors.Is(err, ErrReadOnly) || e.Version != s.Header.Version {
			t.Errorf("version %s: Label: %v, want ErrReadOnly with the version", v, err)
		}
		if _, err := rewind(s, "u1", "", Guard{}); !errors.Is(err, ErrReadOnly) {
			t.Errorf("version %s: Rewind: %v, want ErrReadOnly", v, err)
		}
		if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
			t.Errorf("version %s: the file was written to", v)
		}
	}
}
