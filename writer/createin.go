package writer

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

	"github.com/piweb/piweb/sessions"
)

// createIn creates path inside root holding data, atomically and only if it
// does not exist: the data is written and synced to a temporary file in the
// same folder, which is then hard-linked to path (failing if path exists).
// Every step resolves its names inside root, so no folder swapped for a
// symlink can make it write elsewhere.
func createIn(root, path string, data []byte, perm os.FileMode) error {
	rel, err := sessions.RelIn(root, path)
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
		return sessions.Outside(path, err)
	}
	defer r.Remove(tmp)
	if err := r.Link(tmp, rel); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; not overwriting it: %w", path, err)
		}
		return fmt.Errorf("creating %s: %w", path, sessions.Outside(path, err))
	}
	syncDirIn(r, filepath.Dir(rel))
	return nil
}

// writeTempIn writes data to a new file named prefix+random+".tmp" in folder
// dir of r, syncs and closes it, and returns its name relative to r.
func writeTempIn(r *os.Root, dir, prefix string, data []byte, perm os.FileMode) (string, error) {
	return writeTempTo(r, dir, prefix, WriteData(data), perm)
}

// WriteData returns a func writing data.
func WriteData(data []byte) func(io.Writer) error {
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

// SaveBeside writes a new file named name, or name-2, name-3, … when that
// is taken, in the folder of the session file at file (inside root), with
// the session file's permissions, holding what write writes, and returns
// its path. The file appears whole or not at all, and never replaces
// another; when write fails, nothing is saved. name must be a plain file name.
func SaveBeside(root, file, name string, write func(io.Writer) error) (string, error) {
	if file == "" {
		return "", errNotFile
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`+"\x00") || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("%w: %q is not a plain file name", sessions.ErrOutsideRoot, name)
	}
	rel, err := sessions.RelIn(root, file)
	if err != nil {
		return "", err
	}
	f, st, err := sessions.OpenIn(root, file, os.O_RDONLY)
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
		return "", sessions.Outside(file, err)
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
			return filepath.Join(filepath.Dir(file), try), nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", sessions.Outside(file, err)
		}
	}
	return "", fmt.Errorf("%s: 100 files of that name exist already: %w", filepath.Join(filepath.Dir(file), name), fs.ErrExist)
}
