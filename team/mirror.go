// Package team is the team server's side of piweb push: a mirror, in a
// folder of the server's own, of the session files every machine pushed
// to the store, kept current as pushes arrive (PostgreSQL's LISTEN/NOTIFY),
// for a library.Library to read as it reads a local root.
//
// The mirror's layout is pi's: a folder per project, the session files in
// it, each named for the machine it came from and its own name
// (<project>/<machine>@<file>.jsonl; a machine's files outside any project
// folder lie at the top). So a project worked on from two machines is one
// folder, the project of a session (its folder) is the one pi gave it, and
// Machine tells whose a file is.
//
// How it stays right. The store holds each pushed file as a generation of
// bytes (see push.File). The mirror notes the generation each of
// its files was written from (a small state file beside them). A file of
// the generation the store holds is appended to from its own size (what
// it holds is a part of that generation, however a crash cut it); a file
// of another generation, or none, is written again whole into a new file
// that then replaces it (rename), so a reader sees the old copy or the new
// one, never a mix. A file the store holds nothing of yet is not made.
// Notices can be lost (the connection drops, the server restarts): each
// time the mirror listens again, and every few minutes, it looks at every
// file.
package team

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/push"
)

// Store is where the pushed files are: store.DB on PostgreSQL.
type Store interface {
	PushedFiles(ctx context.Context, machines ...string) ([]push.File, error)
	PushedFileByID(ctx context.Context, id int64) (push.File, bool, error)
	Chunks(ctx context.Context, id, gen, from int64, fn func(off int64, data []byte) error) error
	Listen(ctx context.Context, ready func(), fn func(id int64)) error
}

// Options configure a Mirror.
type Options struct {
	// Changed is called with the path of each mirror file after it was
	// written (Library.Refresh).
	Changed func(path string)
	// Resync is how often Run looks at every file, notices or not
	// (default 5 min).
	Resync time.Duration
	Logger *slog.Logger
}

// stateName is the mirror's state file: the generation each file was written from.
const stateName = ".piweb-mirror.json"

// Mirror is a folder of copies of the pushed files. Its methods are safe
// for concurrent use; files are written one at a time.
type Mirror struct {
	st  Store
	dir string
	opt Options
	log *slog.Logger

	write sync.Mutex // one file written at a time

	mu       sync.Mutex
	gens     map[string]int64  // by stateKey: the generation the mirror file holds
	machines map[string]string // mirror file path -> its machine
}

// stateKey names a pushed file in the state.
func stateKey(machine, path string) string { return machine + "\x00" + path }

// stateFile is the state file's content.
type stateFile struct {
	Files []stateEntry `json:"files"`
}

type stateEntry struct {
	Machine string `json:"machine"`
	Path    string `json:"path"`
	Gen     int64  `json:"gen"`
}

// Open returns the mirror in dir (made when missing), as its state file
// says it is; a state file that does not read is as none (every file is
// written again).
func Open(st Store, dir string, opt Options) (*Mirror, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the team mirror: %w", err)
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opt.Resync <= 0 {
		opt.Resync = 5 * time.Minute
	}
	if opt.Changed == nil {
		opt.Changed = func(string) {}
	}
	m := &Mirror{st: st, dir: dir, opt: opt, log: opt.Logger, gens: map[string]int64{}, machines: map[string]string{}}
	data, err := os.ReadFile(filepath.Join(dir, stateName))
	var sf stateFile
	if err == nil && json.Unmarshal(data, &sf) == nil {
		for _, e := range sf.Files {
			if target, err := m.place(e.Machine, e.Path); err == nil {
				m.gens[stateKey(e.Machine, e.Path)] = e.Gen
				m.machines[target] = e.Machine
			}
		}
	}
	m.removeTemps()
	return m, nil
}

// Machine returns the machine the mirror file at path came from ("" for
// none the mirror wrote).
func (m *Mirror) Machine(path string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.machines[path]
}

// place returns where the mirror keeps machine's file at path (under its
// sessions root, slash-separated): <project>/<machine>@<name>, or
// <machine>@<name> for a file outside any project folder. A path that
// could lead elsewhere, or does not name a session file, is refused.
func (m *Mirror) place(machine, path string) (string, error) {
	segs := strings.Split(path, "/")
	if machine == "" || len(segs) > 2 {
		return "", fmt.Errorf("pushed file %q of %q: not a session file's place", path, machine)
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || strings.HasPrefix(s, ".") || strings.ContainsAny(s, "\\\x00") {
			return "", fmt.Errorf("pushed file %q of %q: not a session file's place", path, machine)
		}
	}
	name := segs[len(segs)-1]
	if !library.IsSessionFileName(name) {
		return "", fmt.Errorf("pushed file %q of %q: not a session file's name", path, machine)
	}
	name = escape(machine) + "@" + name
	if len(name) > 240 {
		h := sha256.Sum256([]byte(name))
		name = hex.EncodeToString(h[:12]) + ".jsonl"
	}
	if len(segs) == 2 {
		return filepath.Join(m.dir, segs[0], name), nil
	}
	return filepath.Join(m.dir, name), nil
}

// escape makes a machine's name safe in a file name: bytes other than
// letters, digits, '.', '_' and '-' as %XX (so '@' and '/' never appear).
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' && i > 0 || c == '_' || c == '-' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// Sync brings every mirror file up to date with the store. A file that
// cannot be mirrored (its place is refused, its folder cannot be written)
// is logged and left; a store that fails ends the sync with its error.
func (m *Mirror) Sync(ctx context.Context) error {
	rows, err := m.st.PushedFiles(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := m.apply(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// SyncFile brings the mirror of pushed file id up to date.
func (m *Mirror) SyncFile(ctx context.Context, id int64) error {
	r, ok, err := m.st.PushedFileByID(ctx, id)
	if err != nil || !ok {
		return err
	}
	return m.apply(ctx, r)
}

// apply brings the mirror of r up to date: appended to, written again, or
// left as it is.
func (m *Mirror) apply(ctx context.Context, r push.File) error {
	if r.Sent == 0 {
		return nil
	}
	target, err := m.place(r.Machine, r.Path)
	if err != nil {
		m.log.Warn("team mirror: a pushed file is left out", "err", err)
		return nil
	}
	m.write.Lock()
	defer m.write.Unlock()
	key := stateKey(r.Machine, r.Path)
	m.mu.Lock()
	gen, known := m.gens[key]
	m.mu.Unlock()
	if known && gen == r.Gen {
		if fi, err := os.Stat(target); err == nil && fi.Mode().IsRegular() && fi.Size() <= r.Sent {
			if fi.Size() == r.Sent {
				return nil
			}
			err := m.appendFrom(ctx, target, r, fi.Size())
			if err == nil {
				m.opt.Changed(target)
			}
			return m.fileErr(target, err)
		}
	}
	if written, err := m.rewrite(ctx, target, r); err != nil || !written {
		return m.fileErr(target, err)
	}
	m.mu.Lock()
	m.gens[key] = r.Gen
	m.machines[target] = r.Machine
	m.mu.Unlock()
	if err := m.saveState(); err != nil {
		m.log.Warn("team mirror: saving its state (files are written again at the next start)", "err", err)
	}
	m.opt.Changed(target)
	return nil
}

// fileErr returns a failure of the store as it is; a failure to write the
// mirror's own file is logged and the sync goes on.
func (m *Mirror) fileErr(target string, err error) error {
	var we *writeError
	if errors.As(err, &we) {
		m.log.Error("team mirror: cannot write a file", "file", target, "err", we.err)
		return nil
	}
	return err
}

// writeError is a failure to write the mirror (not the store's).
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// appendFrom appends what the store holds of r past from to target.
func (m *Mirror) appendFrom(ctx context.Context, target string, r push.File, from int64) error {
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return &writeError{err}
	}
	defer f.Close()
	err = m.st.Chunks(ctx, r.ID, r.Gen, from, func(_ int64, data []byte) error {
		if _, err := f.Write(data); err != nil {
			return &writeError{err}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return &writeError{err}
	}
	return nil
}

// tempPrefix starts the names of files being written (hidden: no library reads them).
const tempPrefix = ".piweb-mirror-"

// rewrite writes the whole of what the store holds of r into a new file
// that then replaces target, and reports whether it did: not when the
// store holds nothing of r's generation any more (replaced meanwhile by
// one the next notice brings).
func (m *Mirror) rewrite(ctx context.Context, target string, r push.File) (bool, error) {
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return false, &writeError{err}
	}
	f, err := os.CreateTemp(filepath.Dir(target), tempPrefix+"*")
	if err != nil {
		return false, &writeError{err}
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	n := int64(0)
	err = m.st.Chunks(ctx, r.ID, r.Gen, 0, func(_ int64, data []byte) error {
		if _, err := f.Write(data); err != nil {
			return &writeError{err}
		}
		n += int64(len(data))
		return nil
	})
	if err != nil || n == 0 {
		return false, err
	}
	if err := f.Close(); err != nil {
		return false, &writeError{err}
	}
	if err := os.Rename(f.Name(), target); err != nil {
		return false, &writeError{err}
	}
	done = true
	return true, nil
}

// removeTemps removes the files a write that did not finish left.
func (m *Mirror) removeTemps() {
	for _, pat := range []string{filepath.Join(m.dir, tempPrefix+"*"), filepath.Join(m.dir, "*", tempPrefix+"*")} {
		found, _ := filepath.Glob(pat)
		for _, f := range found {
			os.Remove(f)
		}
	}
}

// saveState writes the state file (a new file renamed over the old).
func (m *Mirror) saveState() error {
	m.mu.Lock()
	sf := stateFile{Files: make([]stateEntry, 0, len(m.gens))}
	for k, g := range m.gens {
		machine, path, _ := strings.Cut(k, "\x00")
		sf.Files = append(sf.Files, stateEntry{Machine: machine, Path: path, Gen: g})
	}
	m.mu.Unlock()
	data, err := json.Marshal(sf)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(m.dir, tempPrefix+"*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), filepath.Join(m.dir, stateName))
}

// Run keeps the mirror current until ctx is done: it listens for pushes,
// mirrors each file pushed to, and looks at every file each time it
// listens again and every opt.Resync. A store that fails is tried again
// after a growing pause. It returns nil when ctx is done.
func (m *Mirror) Run(ctx context.Context) error {
	w := &worker{m: m, ids: map[int64]bool{}, kick: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { w.listen(ctx) })
	wg.Go(func() { w.work(ctx) })
	<-ctx.Done()
	return nil
}

// worker is Run's state: what is to be mirrored.
type worker struct {
	m    *Mirror
	mu   sync.Mutex
	all  bool
	ids  map[int64]bool
	kick chan struct{}
}

func (w *worker) queue(id int64) {
	w.mu.Lock()
	if id == 0 {
		w.all = true
	} else {
		w.ids[id] = true
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// listen follows the store's notices, listening again after a failure.
func (w *worker) listen(ctx context.Context) {
	pause := time.Duration(0)
	for {
		err := w.m.st.Listen(ctx, func() { pause = 0; w.queue(0) }, w.queue)
		if ctx.Err() != nil {
			return
		}
		pause = min(max(2*pause, 500*time.Millisecond), 30*time.Second)
		w.m.log.Warn("team mirror: not hearing pushes; trying again", "in", pause, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
	}
}

// work mirrors what is queued, one file at a time.
func (w *worker) work(ctx context.Context) {
	resync := time.NewTicker(w.m.opt.Resync)
	defer resync.Stop()
	pause := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-resync.C:
			w.queue(0)
			continue
		}
		w.mu.Lock()
		all, ids := w.all, w.ids
		w.all, w.ids = false, map[int64]bool{}
		w.mu.Unlock()
		var err error
		if all {
			err = w.m.Sync(ctx)
		} else {
			for id := range ids {
				if err = w.m.SyncFile(ctx, id); err != nil {
					break
				}
			}
		}
		if err == nil || ctx.Err() != nil {
			pause = 0
			continue
		}
		pause = min(max(2*pause, 500*time.Millisecond), 30*time.Second)
		w.m.log.Warn("team mirror: the store failed; trying again", "in", pause, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
			w.queue(0)
		}
	}
}
