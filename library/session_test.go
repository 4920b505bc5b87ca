package library

import (
	"errors"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

func TestLibrarySkipsNonSessions(t *testing.T) {
	root := t.TempDir()
	good := sessiontest.File(t, root, "--w--/2026-01-01T00-00-00-000Z_s1.jsonl", sessiontest.Lines(sessiontest.Header, sessiontest.User("a1", "", 1, "hi")))
	bad := sessiontest.File(t, root, "--w--/other.jsonl", sessiontest.Lines(`{"level":"info"}`))
	sessiontest.File(t, root, "--w--/notes.txt", "hello")
	sessiontest.File(t, root, "--w--/.hidden.jsonl", sessiontest.Lines(sessiontest.Header))
	sessiontest.File(t, root, "--w--/deeper/s.jsonl", sessiontest.Lines(strings.Replace(sessiontest.Header, "s1", "s3", 1)))
	top := sessiontest.File(t, root, "top.jsonl", sessiontest.Lines(strings.Replace(sessiontest.Header, "s1", "s2", 1)))
	l, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 2 {
		t.Errorf("Len = %d, want 2", l.Len())
	}
	if f, ok := l.File("s1"); !ok || f != good {
		t.Errorf("File(s1) = %q, %v", f, ok)
	}
	if f, ok := l.File("s2"); !ok || f != top {
		t.Errorf("File(s2) = %q, %v", f, ok)
	}
	probs := l.Problems()
	if len(probs) != 1 || !errors.Is(probs[bad], sessions.ErrNotSession) {
		t.Errorf("Problems = %v, want only %s", probs, bad)
	}
	if got := len(l.List()); got != 2 {
		t.Errorf("List has %d sessions", got)
	}
}
