package sessions

// Confinement: every file piweb reads or writes for the library lies inside
// the sessions root. Paths are checked lexically (no ".." out of the root)
// and on disk through os.Root, which resolves each path component relative to
// an open directory and refuses any that leads outside it, including a folder
// swapped for a symlink after the path was listed. Session files themselves
// must be regular files, not symlinks, even to a file inside the root.
//
// A Session read by the Library carries the root; writers given a Session
// without one (read with Load, or made by hand) are confined to the file's
// own directory.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideRoot is returned for a path that is not a regular file inside the sessions root.
var ErrOutsideRoot = errors.New("not a regular file inside the sessions root (symlinks and paths leading out of it are refused)")

// Root returns the folder the library read s in ("" when read with Load or made by hand).
func (s *Session) Root() string { return s.root }

// openFile opens the session's file for reading, inside its root when it has one.
func (s *Session) openFile() (*os.File, error) {
	if s.root == "" {
		return os.Open(s.File)
	}
	f, _, err := OpenIn(s.root, s.File, os.O_RDONLY)
	return f, err
}

// LoadIn reads and indexes the session file at path, which must be a regular file inside root.
func LoadIn(root, path string) (*Session, error) {
	f, st, err := OpenIn(root, path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return LoadOpen(f, st, path, root)
}

// RelIn returns path relative to root, or ErrOutsideRoot when, read
// lexically, it is root itself or lies outside it.
func RelIn(root, path string) (string, error) {
	r, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	p, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(r, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s: %w", path, ErrOutsideRoot)
	}
	return rel, nil
}

// Outside wraps an error from resolving path in root: a path that does not
// exist stays fs.ErrNotExist (the file went away); a permission problem stays
// one; anything else (a link out of the root, an absolute link, a component
// that is not a folder) is ErrOutsideRoot.
func Outside(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return err
	}
	return fmt.Errorf("%s: %w: %w", path, ErrOutsideRoot, err)
}

// OpenIn opens path with flag (never creating it) if it is a regular file,
// not a symlink, inside root, and returns it with its info from the open
// descriptor. No component of the path can lead out of root, even if the
// folders change while it is opened; a name that is or becomes a symlink,
// even to a file inside root, is refused, and nothing is read or written
// through it.
func OpenIn(root, path string, flag int) (*os.File, os.FileInfo, error) {
	rel, err := RelIn(root, path)
	if err != nil {
		return nil, nil, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	// Checked before opening as well as after: opening a FIFO would block,
	// and opening a device can have effects of its own.
	lst, err := r.Lstat(rel)
	if err != nil {
		return nil, nil, Outside(path, err)
	}
	if !lst.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %w (it is a %s)", path, ErrOutsideRoot, kind(lst.Mode()))
	}
	if openInRace != nil {
		openInRace(path)
	}
	f, err := r.OpenFile(rel, flag&^(os.O_CREATE|os.O_TRUNC|os.O_EXCL), 0)
	if err != nil {
		return nil, nil, Outside(path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	// os.Root follows a final symlink that stays inside root: the descriptor
	// must be the file the name itself holds.
	if lst, err = r.Lstat(rel); err != nil || !st.Mode().IsRegular() || !os.SameFile(st, lst) {
		f.Close()
		// Replaced between the check and the open: refused, and reported as
		// a file that changed (409), whether a save or a swap did it.
		return nil, nil, &Error{Kind: ErrChanged, Err: ErrOutsideRoot, Detail: path + " was replaced while being opened"}
	}
	return f, st, nil
}

// openInRace, when set by a test, runs between OpenIn's check and its open.
var openInRace func(path string)

// kind names a file mode for an error message.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "folder"
	}
	return "special file"
}

// Within reports whether path exists inside root: it lies below root when
// read lexically, and resolves there with symlinks followed only while they
// stay inside root (absolute links are refused), as os.Root resolves it.
func Within(root, path string) bool {
	rel, err := RelIn(root, path)
	if err != nil {
		return false
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return false
	}
	defer r.Close()
	_, err = r.Stat(rel)
	return err == nil
}
