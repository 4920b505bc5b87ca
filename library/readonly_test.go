package library

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/writer"
)

// TestReadOnlyLibrary: a library of copies (SetReadOnly) refuses every
// writer with ErrElsewhere, naming where the session lives, and leaves the
// file as it was.
func TestReadOnlyLibrary(t *testing.T) {
	path := sessiontest.CopyFixture(t, "basic.jsonl")
	before := sessiontest.ReadFile(t, path)
	lib := NewLibrary(filepath.Dir(path))
	if _, err := lib.Refresh(path); err != nil {
		t.Fatal(err)
	}
	key, _ := lib.Key(path)
	lib.SetReadOnly(func(p string) string {
		if p != path {
			t.Errorf("asked where %s lives", p)
		}
		return "laptop"
	})
	writes := map[string]func() error{
		"label":  func() error { _, err := lib.Label(key, "a1000001", "x"); return err },
		"rewind": func() error { _, err := lib.Rewind(key, "a1000001", "", writer.Guard{}); return err },
		"fork":   func() error { _, err := lib.Fork(key, "a1000001"); return err },
		"upgrade": func() error {
			_, err := lib.Upgrade(key)
			return err
		},
		"save beside": func() error {
			_, err := lib.SaveBesideTo(key, "x.jsonl", func(w io.Writer) error { _, err := w.Write([]byte("x")); return err })
			return err
		},
	}
	for name, write := range writes {
		err := write()
		var e *sessions.Error
		if !errors.Is(err, sessions.ErrElsewhere) || !errors.As(err, &e) || e.Detail != "laptop" || e.Key != key {
			t.Errorf("%s: %v, want ErrElsewhere naming laptop", name, err)
		}
	}
	if after := sessiontest.ReadFile(t, path); !bytes.Equal(after, before) {
		t.Error("the file changed")
	}
	if files, _ := SessionFiles(filepath.Dir(path)); len(files) != 1 {
		t.Errorf("files now: %v", files)
	}
}
