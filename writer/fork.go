package writer

import (
	"path/filepath"
	"strings"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/share"
)

// Fork writes the path to entryID of the session file at file (inside
// root) as a new session file beside it, as pi's createBranchedSession does.
func Fork(root, file, entryID string) (newID, newFile string, err error) {
	// The source is re-read first. The new file is "<timestamp>_<id>.jsonl", its
	// header names the source as parentSession, and it is created atomically and
	// exclusively: an existing file is never overwritten. Unlike pi, piweb writes
	// it even when the path holds no user or assistant message yet.
	if file == "" {
		return "", "", errNotFile
	}
	src, err := filepath.Abs(file)
	if err != nil {
		return "", "", err
	}
	snap, err := readPinned(root, src)
	if err != nil {
		return "", "", err
	}
	defer snap.Close()
	cur := snap.Session
	if entryID == "" {
		return "", "", &sessions.Error{Kind: sessions.ErrNoEntry, Detail: "no entry to fork at"}
	}
	b, err := share.Branch(cur, entryID, share.Redact{})
	if err != nil {
		return "", "", err
	}
	b.Header = js.SetMember(b.Header, "parentSession", js.Quote(src))
	ts, _ := js.Lookup(b.Header, "timestamp")
	name := strings.NewReplacer(":", "-", ".", "-").Replace(js.Str(ts)) + "_" + b.ID + ".jsonl"
	st, err := snap.File.Stat()
	if err != nil {
		return "", "", err
	}
	newFile = filepath.Join(filepath.Dir(src), name)
	if err := createIn(root, newFile, b.JSONL(), st.Mode().Perm()); err != nil {
		return "", "", err
	}
	return b.ID, newFile, nil
}
