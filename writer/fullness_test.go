//go:build linux

package writer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// TestAppendFullDisk: when the disk cannot take a line, the writer fails
// with ErrNoSpace before writing a byte, and the file is exactly as it was
// (a torn piece of a line would glue pi's next line onto it).
func TestAppendFullDisk(t *testing.T) {
	s, p := readtest.Load(t, sessiontest.Lines(sessiontest.Header, sessiontest.User("u1", "", 1, "hi"), sessiontest.Asst("a1", "u1", 2, "ok")))
	before, _ := os.ReadFile(p)
	fallocate = func(*os.File, int64, int64) error { return syscall.ENOSPC }
	defer func() { fallocate = realFallocate }()
	if _, err := label(s, "u1", strings.Repeat("x", 10<<10)); !errors.Is(err, sessions.ErrNoSpace) {
		t.Fatalf("Label on a full disk: %v, want ErrNoSpace", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
		t.Fatalf("the file changed:\n%q", after[len(before):])
	}
	// A write(2) that fails with nothing written is also reported so.
	fallocate = realFallocate
	writeFile = func(*os.File, []byte) (int, error) { return 0, syscall.ENOSPC }
	defer func() { writeFile = realWriteFile }()
	if _, err := rewind(s, "u1", "", Guard{}); !errors.Is(err, sessions.ErrNoSpace) {
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
	if err := os.WriteFile(p, []byte(sessiontest.Lines(sessiontest.Header, sessiontest.User("u1", "", 1, "hi"), sessiontest.Asst("a1", "u1", 2, "ok"))), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sessions.Load(p)
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
	if _, err := label(s, "u1", strings.Repeat("x", 10<<10)); !errors.Is(err, sessions.ErrNoSpace) {
		t.Fatalf("Label on a full tmpfs: %v, want ErrNoSpace", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
		t.Fatalf("the file changed on a full disk: %d bytes appended", len(after)-len(before))
	}
	os.Remove(filepath.Join(dir, "fill"))
	if _, err := readtest.Update(s); err != nil {
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

// TestNewerVersionReadOnly: a file in a version after 3 (pi's experimental
// formats) is read, never written to.
func TestNewerVersionReadOnly(t *testing.T) {
	for _, v := range []string{"4", "99"} {
		s, p := readtest.Load(t, sessiontest.Lines(strings.Replace(sessiontest.Header, `"version":3`, `"version":`+v, 1), sessiontest.User("u1", "", 1, "hi")))
		before, _ := os.ReadFile(p)
		var e *sessions.Error
		if _, err := label(s, "u1", "x"); !errors.As(err, &e) || !errors.Is(err, sessions.ErrReadOnly) || e.Version != s.Header.Version {
			t.Errorf("version %s: Label: %v, want ErrReadOnly with the version", v, err)
		}
		if _, err := rewind(s, "u1", "", Guard{}); !errors.Is(err, sessions.ErrReadOnly) {
			t.Errorf("version %s: Rewind: %v, want ErrReadOnly", v, err)
		}
		if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
			t.Errorf("version %s: the file was written to", v)
		}
	}
}
