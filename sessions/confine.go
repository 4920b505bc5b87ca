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
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideRoot is returned for a path that is not a regular file inside the sessions root.
var ErrOutsideRoot = errors.New("not a regular file inside the sessions root (symlinks and paths leading out of it are refused)")

// Handle returns a Session naming only s's file and root, for the writers
// (Label, Rewind, Fork) to use after the library's lock is released.
func (s *Session) Handle() *Session {
	return &Session{File: s.File, root: s.root}
}

// Upgrade migrates the session's file as the function Upgrade does, refusing files outside its root.
func (s *Session) Upgrade() (backup string, err error) {
	if s == nil || s.data != nil || s.File == "" {
		return "", errNotFile
	}
	return upgradeIn(s.writeRoot(), s.File)
}

// writeRoot is the folder a writer is confined to: the library's root, or the file's own folder.
func (s *Session) writeRoot() string {
	if s.root != "" {
		return s.root
	}
	return filepath.Dir(s.File)
}

// openFile opens the session's file for reading, inside its root when it has one.
func (s *Session) openFile() (*os.File, error) {
	if s.root == "" {
		return os.Open(s.File)
	}
	f, _, err := openIn(s.root, s.File, os.O_RDONLY)
	return f, err
}

// loadIn reads and indexes the session file at path, which must be a regular file inside root.
func loadIn(root, path string) (*Session, error) {
	f, st, err := openIn(root, path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return loadOpen(f, st, path, root)
}

// relIn returns path relative to root, or ErrOutsideRoot when, read
// lexically, it is root itself or lies outside it.
func relIn(root, path string) (string, error) {
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

// outside wraps an error from resolving path in root: a path that does not
// exist stays fs.ErrNotExist (the file went away); a permission problem stays
// one; anything else (a link out of the root, an absolute link, a component
// that is not a folder) is ErrOutsideRoot.
func outside(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return err
	}
	return fmt.Errorf("%s: %w: %w", path, ErrOutsideRoot, err)
}

// openIn opens path with flag (never creating it) if it is a regular file,
// not a symlink, inside root, and returns it with its info from the open
// descriptor. No component of the path can lead out of root, even if the
// folders change while it is opened; a name that is or becomes a symlink,
// even to a file inside root, is refused, and nothing is read or written
// through it.
func openIn(root, path string, flag int) (*os.File, os.FileInfo, error) {
	rel, err := relIn(root, path)
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
		return nil, nil, outside(path, err)
	}
	if !lst.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %w (it is a %s)", path, ErrOutsideRoot, kind(lst.Mode()))
	}
	if openInRace != nil {
		openInRace(path)
	}
	f, err := r.OpenFile(rel, flag&^(os.O_CREATE|os.O_TRUNC|os.O_EXCL), 0)
	if err != nil {
		return nil, nil, outside(path, err)
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

// openInRace, when set by a test, runs between openIn's check and its open.
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

// createIn creates path inside root holding data, atomically and only if it
// does not exist: the data is written and synced to a temporary file in the
// same folder, which is then hard-linked to path (failing if path exists).
// Every step resolves its names inside root, so no folder swapped for a
// symlink can make it write elsewhere.
func createIn(root, path string, data []byte, perm os.FileMode) error {
	rel, err := relIn(root, path)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	tmp, err := writeTempIn(r, filepath.Dir(rel), ".piweb-new-", data, perm)
	if err != nil {
		return outside(path, err)
	}
	defer r.Remove(tmp)
	if err := r.Link(tmp, rel); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; not overwriting it: %w", path, err)
		}
		return fmt.Errorf("creating %s: %w", path, outside(path, err))
	}
	syncDirIn(r, filepath.Dir(rel))
	return nil
}

// writeTempIn writes data to a new file named prefix+random+".tmp" in folder
// dir of r, syncs and closes it, and returns its name relative to r.
func writeTempIn(r *os.Root, dir, prefix string, data []byte, perm os.FileMode) (string, error) {
	return writeTempTo(r, dir, prefix, writeData(data), perm)
}

// writeData returns a func writing data.
func writeData(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// writeTempTo is writeTempIn with the contents written by write (through a
// buffer); when write fails, the file is removed.
func writeTempTo(r *os.Root, dir, prefix string, write func(io.Writer) error, perm os.FileMode) (string, error) {
	var (
		f    *os.File
		name string
		err  error
	)
	for range 100 {
		var b [8]byte
		_, _ = rand.Read(b[:]) // never fails
		name = filepath.Join(dir, prefix+hex.EncodeToString(b[:])+".tmp")
		f, err = r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Remove(name)
		return "", fmt.Errorf("writing %s: %w", filepath.Join(r.Name(), name), err)
	}
	return name, nil
}

// syncDirIn flushes the entries of folder dir of r to disk, where the platform allows it.
func syncDirIn(r *os.Root, dir string) {
	if d, err := r.Open(dir); err == nil {
		_ = d.Sync() // not supported everywhere; the data itself is already synced
		d.Close()
	}
}

// SaveBeside saves data beside the file of the session with key, as the
// function SaveBeside does; a saved session file is indexed and published.
func (l *Library) SaveBeside(key, name string, data []byte) (string, error) {
	return l.SaveBesideTo(key, name, writeData(data))
}

// SaveBesideTo is SaveBeside with the contents written by write, so a large
// export is never held whole; when write fails, nothing is saved. The
// library is not locked while write runs.
func (l *Library) SaveBesideTo(key, name string, write func(io.Writer) error) (string, error) {
	file, root, err := l.locate(key)
	if err != nil {
		return "", err
	}
	path, err := saveBeside(&Session{File: file, root: root}, name, write)
	if err != nil {
		return "", withKey(err, key)
	}
	if IsSessionFileName(path) {
		l.Refresh(path) // a session of its own now: list it at once
	}
	return path, nil
}

// SaveBeside writes data to a new file named name, or name-2, name-3, …
// when that is taken, in the folder of s's file (inside its root), with the
// session file's permissions, and returns its path. The file appears whole
// or not at all, and never replaces another. name must be a plain file name.
func SaveBeside(s *Session, name string, data []byte) (string, error) {
	return saveBeside(s, name, writeData(data))
}

func saveBeside(s *Session, name string, write func(io.Writer) error) (string, error) {
	if s == nil || s.data != nil || s.File == "" {
		return "", errNotFile
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`+"\x00") || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("%w: %q is not a plain file name", ErrOutsideRoot, name)
	}
	root := s.writeRoot()
	rel, err := relIn(root, s.File)
	if err != nil {
		return "", err
	}
	f, st, err := openIn(root, s.File, os.O_RDONLY)
	if err != nil {
		return "", err
	}
	f.Close()
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	dir := filepath.Dir(rel)
	tmp, err := writeTempTo(r, dir, ".piweb-save-", write, st.Mode().Perm())
	if err != nil {
		return "", outside(s.File, err)
	}
	defer r.Remove(tmp)
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for n := 1; n <= 100; n++ {
		try := name
		if n > 1 {
			try = fmt.Sprintf("%s-%d%s", stem, n, ext)
		}
		err := r.Link(tmp, filepath.Join(dir, try))
		if err == nil {
			syncDirIn(r, dir)
			return filepath.Join(filepath.Dir(s.File), try), nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", outside(s.File, err)
		}
	}
	return "", fmt.Errorf("%s: 100 files of that name exist already: %w", filepath.Join(filepath.Dir(s.File), name), fs.ErrExist)
}
