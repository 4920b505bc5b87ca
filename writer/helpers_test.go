package writer

import (
	"io"
	"os"
	"path/filepath"

	"github.com/piweb/piweb/sessions"
)

// Writers of one Session outside the library, for tests: each confined to
// the root the library read s in, or to the file's own folder.

// rootOf is the folder a writer given s is confined to.
func rootOf(s *sessions.Session) string {
	if r := s.Root(); r != "" {
		return r
	}
	return filepath.Dir(s.File)
}

// ownIndex is the index of a session nobody else changes.
func ownIndex(s *sessions.Session) Index {
	if s == nil || s.File == "" {
		return nil
	}
	return func(fn func(*sessions.Session)) { fn(s) }
}

// label appends to s's file a label entry setting (or, for a blank label,
// clearing) the label of entry targetID, and returns the new entry's id.
func label(s *sessions.Session, targetID, text string) (string, error) {
	return Append(rootOf(s), s.File, ownIndex(s), []string{targetID}, LabelLine(targetID, text))
}

// rewind appends to s's file a child of entry targetID ("" for before the
// first entry) so pi resumes there, and returns the new entry's id.
func rewind(s *sessions.Session, targetID, summary string, guard Guard) (string, error) {
	return Append(rootOf(s), s.File, ownIndex(s), []string{targetID}, RewindLine(targetID, summary, guard))
}

// forkOf forks s's file at entryID (see Fork).
func forkOf(s *sessions.Session, entryID string) (newID, newFile string, err error) {
	if s == nil {
		return "", "", errNotFile
	}
	return Fork(rootOf(s), s.File, entryID)
}

// upgradeOf upgrades s's file (see Upgrade).
func upgradeOf(s *sessions.Session) (backup string, err error) {
	if s == nil || s.File == "" {
		return "", errNotFile
	}
	return Upgrade(rootOf(s), s.File)
}

// upgradeFile upgrades the file at path, confined to its folder.
func upgradeFile(path string) (backup string, err error) {
	return Upgrade(filepath.Dir(path), path)
}

// createExclusive creates path holding data, atomically and only if it
// does not exist, in path's folder (see createIn).
func createExclusive(path string, data []byte, perm os.FileMode) error {
	return createIn(filepath.Dir(path), path, data, perm)
}

// saveOf saves data beside s's file (see SaveBeside).
func saveOf(s *sessions.Session, name string, data []byte) (string, error) {
	return saveOfTo(s, name, WriteData(data))
}

// saveOfTo saves what write writes beside s's file (see SaveBeside).
func saveOfTo(s *sessions.Session, name string, write func(io.Writer) error) (string, error) {
	if s == nil {
		return "", errNotFile
	}
	return SaveBeside(rootOf(s), s.File, name, write)
}
