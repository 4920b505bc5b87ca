package library

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/writer"
)

// The library's writers: each takes the file's write lock, writes, and
// refreshes the library, which publishes the change.

// Label sets (or, with a blank label, clears) the label of entry targetID
// of the session with key, and returns the new entry's id.
func (l *Library) Label(key, targetID, label string) (string, error) {
	return l.append(key, []string{targetID}, writer.LabelLine(targetID, label))
}

// Rewind makes pi resume from entry targetID ("" for before the first
// entry) of the session with key, and returns the new entry's id.
func (l *Library) Rewind(key, targetID, summary string, guard writer.Guard) (string, error) {
	return l.append(key, []string{targetID}, writer.RewindLine(targetID, summary, guard))
}

// append appends the line build makes to the file of the session with key,
// after piweb's other writes to that file, then refreshes the index and
// publishes the change before the next write may start.
func (l *Library) append(key string, ids []string, build writer.Builder) (string, error) {
	file, root, err := l.locate(key)
	if err != nil {
		return "", err
	}
	unlock := l.lockWrites(file)
	defer unlock()
	idx := func(fn func(*sessions.Session)) {
		if s := l.Loaded(file); s != nil {
			fn(s)
		}
	}
	id, err := writer.Append(root, file, idx, ids, build)
	if err != nil {
		return "", withKey(err, key)
	}
	if _, err := l.Refresh(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return id, withKey(err, key)
	}
	return id, nil
}

// locate returns the file of the session with key and the root writers are confined to.
func (l *Library) locate(key string) (file, root string, err error) {
	l.mu.RLock()
	f, ok := l.keys[key]
	l.mu.RUnlock()
	if !ok {
		return "", "", &sessions.Error{Kind: sessions.ErrNoSession, Key: key}
	}
	if where := l.readOnly.Load(); where != nil {
		return "", "", &sessions.Error{Kind: sessions.ErrElsewhere, Key: key, Detail: (*where)(f.path)}
	}
	if f.path == "" {
		return "", "", &sessions.Error{Kind: sessions.ErrReadOnly, Key: key, Version: f.meta.Version, Detail: "the session names no file"}
	}
	root = l.Root
	if root == "" {
		root = filepath.Dir(f.path)
	}
	return f.path, root, nil
}

// lockWrites waits until no other write of piweb's to file is under way and
// returns the func that lets the next one start.
func (l *Library) lockWrites(file string) func() {
	m, _ := l.writing.LoadOrStore(file, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// withKey fills in the session key of a writer's Error.
func withKey(err error, key string) error {
	var e *sessions.Error
	if errors.As(err, &e) && e.Key == "" {
		c := *e
		c.Key = key
		return &c
	}
	return err
}

// Forked is a session a fork wrote.
type Forked struct {
	ID   string // the new session's id
	File string // its file
	Key  string // its key in the library
}

// Fork writes the path to entryID of the session with key as a new session
// file beside it, indexes and publishes it.
func (l *Library) Fork(key, entryID string) (Forked, error) {
	file, root, err := l.locate(key)
	if err != nil {
		return Forked{}, err
	}
	unlock := l.lockWrites(file)
	defer unlock()
	id, nf, err := writer.Fork(root, file, entryID)
	if err != nil {
		return Forked{}, withKey(err, key)
	}
	c, err := l.Refresh(nf)
	if err != nil {
		return Forked{ID: id, File: nf}, withKey(err, key)
	}
	return Forked{ID: id, File: nf, Key: c.Key}, nil
}

// Upgrade migrates the file of the session with key from version 1 or 2 to
// version 3 as pi would (see the function Upgrade), then reads it again and
// publishes the change.
func (l *Library) Upgrade(key string) (backup string, err error) {
	file, root, err := l.locate(key)
	if err != nil {
		return "", err
	}
	unlock := l.lockWrites(file)
	defer unlock()
	if backup, err = writer.Upgrade(root, file); err != nil {
		return "", withKey(err, key)
	}
	if _, err := l.Refresh(file); err != nil {
		return backup, withKey(err, key)
	}
	return backup, nil
}

// SaveBeside saves data beside the file of the session with key, as the
// function SaveBeside does; a saved session file is indexed and published.
func (l *Library) SaveBeside(key, name string, data []byte) (string, error) {
	return l.SaveBesideTo(key, name, writer.WriteData(data))
}

// SaveBesideTo is SaveBeside with the contents written by write, so a large
// export is never held whole; when write fails, nothing is saved. The
// library is not locked while write runs.
func (l *Library) SaveBesideTo(key, name string, write func(io.Writer) error) (string, error) {
	file, root, err := l.locate(key)
	if err != nil {
		return "", err
	}
	path, err := writer.SaveBeside(root, file, name, write)
	if err != nil {
		return "", withKey(err, key)
	}
	if IsSessionFileName(path) {
		l.Refresh(path) // a session of its own now: list it at once
	}
	return path, nil
}

// OpenRead opens file for reading, inside the library's root.
func (l *Library) OpenRead(file string) (*os.File, error) {
	if l.Root == "" {
		return os.Open(file)
	}
	f, _, err := sessions.OpenIn(l.Root, file, os.O_RDONLY)
	return f, err
}
