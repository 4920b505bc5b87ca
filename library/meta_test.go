package library

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/sessions"
)

// TestLibraryKeys checks that every file has its own key: the session id
// for the file pi named for it, the id and a hash of its path for a copy,
// stable as copies come and go, and that a file whose id changes leaves the
// other file its key.
func TestLibraryKeys(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "--p--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	header := func(id string) string {
		return `{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" +
			`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"x","timestamp":1}}` + "\n"
	}
	orig := filepath.Join(dir, "2026-01-01T00-00-00-000Z_same.jsonl")
	backup, other := filepath.Join(dir, "backup.jsonl"), filepath.Join(dir, "a-copy.jsonl")
	for _, f := range []string{orig, backup} {
		if err := os.WriteFile(f, []byte(header("same")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := lib.File("same"); f != orig {
		t.Fatalf("key %q is %s, want the file pi named, %s", "same", f, orig)
	}
	keyOf := func(file string) string {
		t.Helper()
		k, ok := lib.Key(file)
		if !ok {
			t.Fatalf("%s has no key", file)
		}
		return k
	}
	bk := keyOf(backup)
	if !strings.HasPrefix(bk, "same~") || len(bk) != len("same~")+8 {
		t.Fatalf("copy key %q, want same~ and 8 hex digits", bk)
	}
	metas := map[string]sessions.Meta{}
	for _, m := range lib.List() {
		metas[m.Key] = m
	}
	if len(metas) != 2 || metas[bk].CopyOf != "same" || metas["same"].CopyOf != "" || metas[bk].ID != "same" {
		t.Fatalf("List: %+v", metas)
	}
	// Another copy: the keys already given stay.
	if err := os.WriteFile(other, []byte(header("same")), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := lib.Refresh(other)
	if err != nil || c.Kind != KindNew || !strings.HasPrefix(c.Key, "same~") {
		t.Fatalf("Refresh of a new copy: %+v, %v", c, err)
	}
	if keyOf(orig) != "same" || keyOf(backup) != bk || keyOf(other) == bk {
		t.Errorf("keys moved: %s %s %s", keyOf(orig), keyOf(backup), keyOf(other))
	}
	// The copy gets another id: the others keep theirs.
	if err := os.WriteFile(backup, []byte(header("other")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Refresh(backup); err != nil {
		t.Fatal(err)
	}
	if f, _ := lib.File("same"); f != orig {
		t.Errorf("after the copy changed its id, %q is %q, want %s", "same", f, orig)
	}
	if f, _ := lib.File("other"); f != backup {
		t.Errorf("%q is %q, want %s", "other", f, backup)
	}
	if _, ok := lib.File(bk); ok {
		t.Errorf("the copy's old key %q still names a file", bk)
	}
	// The original goes: a copy takes the bare id (a reload of key "same").
	ch, cancel := lib.Subscribe()
	defer cancel()
	if err := os.Remove(orig); err != nil {
		t.Fatal(err)
	}
	lib.Refresh(orig)
	if f, _ := lib.File("same"); f != other {
		t.Errorf("after the original went, %q is %q, want %s", "same", f, other)
	}
	var got []string
	for len(got) < 2 {
		c := <-ch
		got = append(got, c.Kind+" "+c.Key)
	}
	if got[0] != "remove "+keyOf(other)[:0]+copyKey("same", lib.rel(other)) || got[1] != "reload same" {
		t.Errorf("changes %q, want the copy's key removed and a reload of %q", got, "same")
	}
}

// TestListedVersion: Listed's version stays while nothing changes and
// moves with every change to a session or to the unreadable files, so a
// list drawn at one version is never served after a change.
func TestListedVersion(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "--p--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "2026-01-01T00-00-00-000Z_one.jsonl")
	line := `{"type":"session","version":3,"id":"one","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}` + "\n"
	if err := os.WriteFile(good, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	metas, v := lib.Listed()
	if len(metas) != 1 {
		t.Fatalf("%d rows, want 1", len(metas))
	}
	if _, again := lib.Listed(); again != v {
		t.Fatalf("the version moved from %d to %d with no change", v, again)
	}
	step := func(what string, change func()) {
		t.Helper()
		change()
		if _, now := lib.Listed(); now == v {
			t.Errorf("%s: the version stayed %d", what, v)
		} else {
			v = now
		}
	}
	bad := filepath.Join(dir, "2026-01-02T00-00-00-000Z_bad.jsonl")
	step("an unreadable file", func() {
		os.WriteFile(bad, []byte("not json\n"), 0o644)
		lib.Refresh(bad)
	})
	step("the unreadable file gone", func() {
		os.Remove(bad)
		lib.Refresh(bad)
	})
	step("a problem seeded", func() { lib.SeedProblem(bad, os.ErrInvalid, 9, time.Unix(1, 0)) })
	step("the seeded problem removed", func() { lib.Remove(bad) })
	step("an append", func() {
		f, _ := os.OpenFile(good, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"x","timestamp":1}}` + "\n")
		f.Close()
		lib.Refresh(good)
	})
	if metas, _ := lib.Listed(); len(metas) != 1 || metas[0].Messages != 1 {
		t.Errorf("after the append: %+v", metas)
	}
}
