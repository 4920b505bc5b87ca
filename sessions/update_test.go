package sessions

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
)

const (
	updHeader = `{"type":"session","version":3,"id":"S1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}`
	updE1     = `{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`
	updE2     = `{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"again","timestamp":2}}`
)

func updateIDs(s *Session) []string {
	var out []string
	for _, e := range s.Entries {
		out = append(out, e.ID)
	}
	return out
}

func updateDiagKinds(s *Session) []string {
	var out []string
	for _, d := range s.Diags {
		out = append(out, d.Kind)
	}
	return out
}

// A header read from an unterminated first line must not be read again as a
// second header once its line is completed.
func TestUpdateUnterminatedHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(updHeader), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := s.Update(); err != nil || d.Changed() {
		t.Fatalf("Update of an unchanged file = %+v, %v; want no change", d, err)
	}
	sessiontest.Append(t, path, "\n"+updE1+"\n")
	d, err := s.Update()
	if err != nil {
		t.Fatal(err)
	}
	if !d.Changed() || !slices.Equal(updateIDs(s), []string{"e1"}) {
		t.Fatalf("after completing the header: delta %+v, ids %v; want a change and [e1]", d, updateIDs(s))
	}
	if k := updateDiagKinds(s); len(k) != 0 {
		t.Errorf("diagnostics %v; want none (the header line was re-read as an extra header)", k)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(); !errors.Is(err, ErrNotSession) {
		t.Errorf("Update of a file truncated to nothing: err %v; want ErrNotSession", err)
	}
}

// A valid unterminated last line is an entry; Update must not report a
// reload while the file is unchanged, and must pick up its completion.
func TestUpdateUnterminatedTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(updHeader+"\n"+updE1), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if d, err := s.Update(); err != nil || d.Changed() {
			t.Fatalf("Update of an unchanged file = %+v, %v; want no change", d, err)
		}
	}
	sessiontest.Append(t, path, "\n"+updE2+"\n")
	d, err := s.Update()
	if err != nil {
		t.Fatal(err)
	}
	if !d.Changed() || !slices.Equal(updateIDs(s), []string{"e1", "e2"}) {
		t.Fatalf("after completing the line: delta %+v, ids %v; want a change and [e1 e2]", d, updateIDs(s))
	}
	if k := updateDiagKinds(s); slices.Contains(k, DiagUnterminated) {
		t.Errorf("diagnostics %v still report an unterminated line", k)
	}
	if s.Entries[0].Flags.Has(FlagUnterminated) {
		t.Error("entry e1 still flagged unterminated")
	}
}

// A same-size edit in the middle of the file, written in place, is noticed
// by the modification time moving; an unchanged file is not read again.
func TestUpdateSameSizeInPlace(t *testing.T) {
	s, path := tLoad(t, updHeader+"\n"+updE1+"\n"+updE2+"\n")
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// e1's id becomes x1 (and e2 an orphan): same length, in the middle.
	if _, err := f.WriteAt([]byte(`"x1"`), int64(len(updHeader)+1+len(`{"type":"message","id":`))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	later := s.ModTime.Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	d, err := s.Update()
	if err != nil {
		t.Fatal(err)
	}
	if !d.Reloaded || !slices.Equal(updateIDs(s), []string{"x1", "e2"}) {
		t.Fatalf("after a same-size edit: delta %+v, ids %v; want a reload and [x1 e2]", d, updateIDs(s))
	}
	if d, err := s.Update(); err != nil || d.Changed() {
		t.Fatalf("second Update = %+v, %v; want no change", d, err)
	}
}
