package library

// The library: every session file under a root, each addressed by its own
// key. It holds little per file (its row of the sessions list, Meta); a
// file's tree is read when a page, an API call or a change needs it and
// kept in a cache bounded in bytes (cache.go), as an immutable snapshot
// that readers use without any lock (Session; Next makes the next one
// when pi appends). Refresh, which the watcher calls on every change and
// the writers after each write, keeps it current and publishes what
// changed (feed.go).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/piweb/piweb/sessions"
)

// Library is every session under a root. It is safe for concurrent use;
// its lock guards only its small maps and is never held across reading a
// file or a caller's work.
type Library struct {
	Root string

	mu       sync.RWMutex
	files    map[string]*file   // by file path
	keys     map[string]*file   // by key
	ids      map[string][]*file // by header id: the files holding that session id
	problems map[string]problem // files that are not sessions or could not be read

	cache    cache
	writing  sync.Map // file path -> *sync.Mutex: piweb's own writes to a file, one at a time
	feed     hub
	readOnly atomic.Pointer[func(path string) string] // set: every writer refuses (SetReadOnly)

	version  uint64    // counts changes to the maps, rows and problems (l.mu)
	listed   listCache // List's answer at a version
	pointsMu sync.Mutex
	points   map[pointKey]string // fork points (ForkPoint)
}

// listCache is the sorted list of rows at one version of the library, and
// each parent's forks.
type listCache struct {
	mu      sync.Mutex
	version uint64
	metas   []sessions.Meta
	forks   map[string][]int // parent key -> positions in metas
}

// file is one session file the library knows.
type file struct {
	path string

	// Guarded by the library's mu.
	key  string
	meta sessions.Meta // as last read, without what the library adds (metaLocked)
	gen  uint64
	mod  time.Time // the modification time meta describes
	tail bool      // its last entry came from an unterminated line

	read sync.Mutex                       // one read of the file at a time
	snap atomic.Pointer[sessions.Session] // its tree, when loaded (see cache.go)
}

// problem is a file under the root that could not be indexed, as it was when tried.
type problem struct {
	err  error
	size int64
	mod  int64 // modification time, ns
}

// NewLibrary returns an empty library for root.
func NewLibrary(root string) *Library {
	l := &Library{Root: root, files: map[string]*file{}, keys: map[string]*file{},
		ids: map[string][]*file{}, problems: map[string]problem{}}
	l.feed.size = defaultFeedBuffer
	l.cache.limit = DefaultCacheBytes
	return l
}

// OpenLibrary reads every *.jsonl file in the project folders under root
// (and directly in root), in parallel.
func OpenLibrary(root string) (*Library, error) {
	l := NewLibrary(root)
	files, err := SessionFiles(root)
	if err != nil {
		return l, err
	}
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for f := range jobs {
				l.Refresh(f) // nobody subscribes yet: nothing is published
			}
		})
	}
	for _, f := range files {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	return l, nil
}

// SetCacheLimit bounds the bytes the loaded trees are estimated to hold
// (DefaultCacheBytes unless set); the least recently used go first.
func (l *Library) SetCacheLimit(n int64) {
	l.cache.mu.Lock()
	l.cache.limit = n
	l.cache.mu.Unlock()
	l.cache.trim(nil)
}

// SetReadOnly makes every writer of the library (Label, Rewind, Fork,
// Upgrade, SaveBeside) refuse with ErrElsewhere: its files are copies of
// sessions that live elsewhere (a team server's mirror of other machines'
// files), to be changed there. where names the place a file's session
// lives (a machine), for the error's Detail.
func (l *Library) SetReadOnly(where func(path string) string) { l.readOnly.Store(&where) }

// load reads file for the library: inside the root, when there is one.
func (l *Library) load(path string) (*sessions.Session, error) {
	if l.Root == "" {
		return sessions.Load(path)
	}
	return sessions.LoadIn(l.Root, path)
}

// Seed adds the file of the list row m, as read in an earlier run (the
// catalog's store), without reading it; its tree is read when needed. A
// file the library holds already is left as it is.
func (l *Library) Seed(m sessions.Meta) {
	l.mu.Lock()
	if _, ok := l.files[m.File]; ok {
		l.mu.Unlock()
		return
	}
	m.Key, m.CopyOf, m.ParentID, m.ParentKey = "", "", "", ""
	f := &file{path: m.File, meta: m, gen: sessions.NewGen(), mod: m.FileModified, tail: m.Unterminated}
	all := l.putLocked(f)
	l.mu.Unlock()
	l.publish(all...)
}

// putLocked adds f to the maps (l.mu held) and returns the changes of keys.
func (l *Library) putLocked(f *file) []Change {
	l.version++
	delete(l.problems, f.path)
	id := f.meta.ID
	var out []Change
	for _, o := range slices.Clone(l.ids[id]) {
		// A file of the same session that is gone from disk was moved here
		// (a rename within the tree, an atomic save): this file takes over.
		if _, err := os.Stat(o.path); errors.Is(err, fs.ErrNotExist) {
			out = append(out, l.dropLocked(o)...)
		}
	}
	l.files[f.path] = f
	l.ids[id] = append(l.ids[id], f)
	return merge(append(out, l.rekeyLocked(id, nil)...))
}

// setLocked makes s f's current reading (l.mu held). A reading whose row
// is the one the library had (a tree read for a page, of an unchanged
// file) leaves the version as it was: the sessions list stays drawn.
func (l *Library) setLocked(f *file, s *sessions.Session) {
	m := s.Meta()
	if !sameRow(f.meta, m) {
		l.version++
	}
	f.meta, f.gen, f.mod, f.tail = m, s.Gen(), s.ModTime, m.Unterminated
	f.snap.Store(s)
}

// merge turns a key that is removed and then comes back in one batch of
// changes into one reload of that key, in the removal's place.
func merge(cs []Change) []Change {
	out := cs[:0:0]
	for _, c := range cs {
		if c.Kind == KindNew {
			if k := slices.IndexFunc(out, func(o Change) bool { return o.Key == c.Key && o.Kind == KindRemove }); k >= 0 {
				c.Kind, c.OldLeaf = KindReload, out[k].OldLeaf
				out[k] = c
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// dropLocked removes f from the maps and returns the changes of keys.
func (l *Library) dropLocked(f *file) []Change {
	l.version++
	delete(l.files, f.path)
	id := f.meta.ID
	l.ids[id] = slices.DeleteFunc(l.ids[id], func(o *file) bool { return o == f })
	if len(l.ids[id]) == 0 {
		delete(l.ids, id)
	}
	l.cache.drop(f)
	return l.rekeyLocked(id, f)
}

// rekeyLocked gives each file holding session id its key, after a file of
// that id came or went (gone, when not nil). Keys are stable: the header id
// goes to the one file that holds it under pi's own name for it
// (…_<id>.jsonl; among several such, or none, the first path in order),
// and every other copy gets the id with a short hash of its path, which
// does not change while the file stays where it is. It returns what
// changed, as the feed reports it: a key that left its file is a removal,
// unless another file took it (a reload of that key), and a key that came
// is new.
func (l *Library) rekeyLocked(id string, gone *file) []Change {
	files := l.ids[id]
	slices.SortFunc(files, func(a, b *file) int {
		ca, cb := piNamed(a.path, id), piNamed(b.path, id)
		switch {
		case ca && !cb:
			return -1
		case cb && !ca:
			return 1
		}
		return strings.Compare(a.path, b.path)
	})
	var out []Change
	before := map[string]*file{} // key -> its old holder, for the keys of this id
	if gone != nil && gone.key != "" {
		before[gone.key] = gone
		delete(l.keys, gone.key)
		gone.key = ""
	}
	for _, f := range files {
		if f.key != "" {
			before[f.key] = f
			delete(l.keys, f.key)
		}
	}
	for k, f := range files {
		key := id
		if k > 0 {
			key = copyKey(id, l.rel(f.path))
		}
		f.key = key
		l.keys[key] = f
	}
	l.version++
	for k, old := range before {
		if now, ok := l.keys[k]; !ok {
			out = append(out, Change{Key: k, File: old.path, Kind: KindRemove, OldLeaf: old.meta.Leaf})
		} else if now != old {
			out = append(out, Change{Key: k, File: now.path, Kind: KindReload, Gen: now.gen, Leaf: now.meta.Leaf, OldLeaf: old.meta.Leaf})
		}
	}
	for _, f := range files {
		if before[f.key] == nil {
			out = append(out, Change{Key: f.key, File: f.path, Kind: KindNew, Gen: f.gen, Leaf: f.meta.Leaf})
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int { return kindOrder(a.Kind) - kindOrder(b.Kind) })
	return out
}

// kindOrder puts removals first, so a key that moves is gone before it comes back.
func kindOrder(k string) int {
	if k == KindRemove {
		return 0
	}
	return 1
}

// piNamed reports whether file has pi's name for session id: <timestamp>_<id>.jsonl.
func piNamed(file, id string) bool {
	return strings.HasSuffix(filepath.Base(file), "_"+id+".jsonl")
}

// rel returns file relative to the root (the file itself when it is not below it).
func (l *Library) rel(file string) string {
	if r, err := filepath.Rel(l.Root, file); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return file
}

// unsafeKey matches what a key may not hold.
var unsafeKey = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// copyKey is the key of a copy of session id stored at rel: the id (made
// safe for a URL) and a short hash of the path.
func copyKey(id, rel string) string {
	sum := sha256.Sum256([]byte(rel))
	base := unsafeKey.ReplaceAllString(id, "-")
	if len(base) > 64 {
		base = base[:64]
	}
	return base + "~" + hex.EncodeToString(sum[:4])
}

// List returns the metadata of every session, most recent activity first
// (made once for each state of the library; the caller gets its own copy).
func (l *Library) List() []sessions.Meta {
	metas, _, _ := l.listed.get(l)
	out := slices.Clone(metas)
	for i := range out {
		out[i].Models = slices.Clone(out[i].Models)
	}
	return out
}

// Forks returns the metadata of the sessions forked from the one with key
// (their header's parentSession is its file), most recent first.
func (l *Library) Forks(key string) []sessions.Meta {
	metas, forks, _ := l.listed.get(l)
	var out []sessions.Meta
	for _, k := range forks[key] {
		m := metas[k]
		m.Models = slices.Clone(m.Models)
		out = append(out, m)
	}
	return out
}

// Listed returns what List does without copying it (shared: the caller
// must not change it), and the library's version it is of. The version
// changes with every change to the sessions' rows or to the problems, and
// before the change is published: a reader told of a change sees a new one.
func (l *Library) Listed() ([]sessions.Meta, uint64) {
	metas, _, v := l.listed.get(l)
	return metas, v
}

// get returns the sorted rows and the forks of each parent as the library
// is now, and its version, made again only when it changed.
func (c *listCache) get(l *Library) ([]sessions.Meta, map[string][]int, uint64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.metas != nil && c.version == l.version {
		return c.metas, c.forks, c.version
	}
	out := make([]sessions.Meta, 0, len(l.files))
	for _, f := range l.files {
		out = append(out, l.metaLocked(f))
	}
	slices.SortFunc(out, func(a, b sessions.Meta) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		return strings.Compare(b.File, a.File)
	})
	forks := map[string][]int{}
	for k := range out {
		if p := out[k].ParentKey; p != "" && p != out[k].Key {
			forks[p] = append(forks[p], k)
		}
	}
	c.metas, c.forks, c.version = out, forks, l.version
	return out, forks, c.version
}

// pointKey names a fork point: the child's and the parent's generations.
type pointKey struct {
	child, parent       string
	childGen, parentGen uint64
}

// ForkPoint returns the entry of session parent that session child was
// forked from: pi's fork copies the path to it with the ids kept, so it is
// the last of the child's first entries that the parent holds too ("" when
// none is). It is worked out once for each state of the two.
func (l *Library) ForkPoint(child, parent string) string {
	l.mu.RLock()
	cf, pf := l.keys[child], l.keys[parent]
	var k pointKey
	if cf != nil && pf != nil {
		k = pointKey{child, parent, cf.gen, pf.gen}
	}
	l.mu.RUnlock()
	if cf == nil || pf == nil {
		return ""
	}
	l.pointsMu.Lock()
	at, ok := l.points[k]
	l.pointsMu.Unlock()
	if ok {
		return at
	}
	cs, err := l.snapshot(cf)
	if err != nil {
		return ""
	}
	ps, err := l.snapshot(pf)
	if err != nil {
		return ""
	}
	at = ""
	for i := range cs.Entries {
		e := &cs.Entries[i]
		if e.Type == sessions.TypeLabel {
			continue // labels are recreated with new ids
		}
		if _, ok := ps.Lookup(e.ID); !ok || e.ID == "" {
			break
		}
		at = e.ID
	}
	at = strings.Clone(at) // kept: not a piece of the tree's block of ids
	l.pointsMu.Lock()
	if len(l.points) > 4096 || l.points == nil {
		l.points = map[pointKey]string{} // older generations' points
	}
	l.points[k] = at
	l.pointsMu.Unlock()
	return at
}

// metaLocked is f's Meta with what the library knows of it: its key, the
// file it is a copy of, and its parent session's key.
func (l *Library) metaLocked(f *file) sessions.Meta {
	m := f.meta
	m.Models = slices.Clone(m.Models)
	m.Key = f.key
	if files := l.ids[m.ID]; len(files) > 1 && files[0] != f {
		m.CopyOf = files[0].key
	}
	if p, ok := l.files[m.ParentSession]; ok && m.ParentSession != "" {
		m.ParentID, m.ParentKey = p.meta.ID, p.key
	}
	return m
}

// Meta returns the metadata of the session with key, as List has it.
func (l *Library) Meta(key string) (sessions.Meta, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	f, ok := l.keys[key]
	if !ok {
		return sessions.Meta{}, &sessions.Error{Kind: sessions.ErrNoSession, Key: key}
	}
	return l.metaLocked(f), nil
}

// MetaOf returns the metadata of the session in path, as List has it.
func (l *Library) MetaOf(path string) (sessions.Meta, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	f, ok := l.files[path]
	if !ok {
		return sessions.Meta{}, false
	}
	return l.metaLocked(f), true
}

// Problems returns the files under the root that could not be indexed, with why.
func (l *Library) Problems() map[string]error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make(map[string]error, len(l.problems))
	for f, p := range l.problems {
		out[f] = p.err
	}
	return out
}

// View calls fn with the session of that key, read from its file when it
// is not loaded. No lock is held while fn runs: the session is a snapshot
// nothing changes (Next makes the next one).
func (l *Library) View(key string, fn func(s *sessions.Session) error) error {
	s, err := l.Session(key)
	if err != nil {
		return err
	}
	return fn(s)
}

// Session returns the current snapshot of the session with key, read from
// its file when it is not loaded.
func (l *Library) Session(key string) (*sessions.Session, error) {
	l.mu.RLock()
	f, ok := l.keys[key]
	l.mu.RUnlock()
	if !ok {
		return nil, &sessions.Error{Kind: sessions.ErrNoSession, Key: key}
	}
	s, err := l.snapshot(f)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &sessions.Error{Kind: sessions.ErrNoSession, Key: key}
		}
		return nil, err
	}
	return s, nil
}

// SessionOf is Session by the file's path.
func (l *Library) SessionOf(path string) (*sessions.Session, error) { return l.readPath(path, true) }

// ViewFile calls fn with the session of the file at path, as View does by key.
func (l *Library) ViewFile(path string, fn func(s *sessions.Session) error) error {
	s, err := l.SessionOf(path)
	if err != nil {
		return err
	}
	return fn(s)
}

// Loaded returns the session of path when its tree is loaded, nil when
// not (no file is read).
func (l *Library) Loaded(path string) *sessions.Session {
	f, ok := l.fileAt(path)
	if !ok {
		return nil
	}
	return f.snap.Load()
}

// Peek is SessionOf for a reader that reads the file once, as the index
// build does: it does not count as a use, so a tree that only it and the
// library's own reading loaded stays cold, and Release drops it.
func (l *Library) Peek(path string) (*sessions.Session, error) { return l.readPath(path, false) }

// readPath is read by the file's path.
func (l *Library) readPath(path string, use bool) (*sessions.Session, error) {
	f, ok := l.fileAt(path)
	if !ok {
		return nil, &sessions.Error{Kind: sessions.ErrNoSession, Key: path}
	}
	return l.read(f, use)
}

// Release drops the loaded tree of the file at path unless a reader used
// it since it was loaded (it is read again when next needed).
func (l *Library) Release(path string) {
	if f, ok := l.fileAt(path); ok {
		l.cache.release(f)
	}
}

// fileAt returns the library's file at path.
func (l *Library) fileAt(path string) (*file, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	f, ok := l.files[path]
	return f, ok
}

// snapshot returns f's loaded tree, or reads it, as Refresh does; a use.
func (l *Library) snapshot(f *file) (*sessions.Session, error) { return l.read(f, true) }

// read returns f's loaded tree, or reads it, as Refresh does; use marks
// it used (warm: Release keeps it).
func (l *Library) read(f *file, use bool) (*sessions.Session, error) {
	s := f.snap.Load()
	if s == nil {
		// The tree refresh read is the one returned: it is cold, and may
		// be released (another reader's Release) before f.snap is read again.
		var err error
		if _, s, err = l.refresh(f.path, true); err != nil {
			return nil, err
		}
	}
	if s != nil {
		if use {
			l.cache.touch(f)
		}
		return s, nil
	}
	// Replaced by another file object (a rename) meanwhile: read it by path.
	l.mu.RLock()
	cur, ok := l.files[f.path]
	l.mu.RUnlock()
	if ok && cur != f {
		return l.read(cur, use)
	}
	return nil, fmt.Errorf("%s: %w", f.path, fs.ErrNotExist)
}

// File returns the file of the session with key.
func (l *Library) File(key string) (string, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	f, ok := l.keys[key]
	if !ok {
		return "", false
	}
	return f.path, true
}

// Key returns the key of the session stored in file.
func (l *Library) Key(path string) (string, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	f, ok := l.files[path]
	if !ok {
		return "", false
	}
	return f.key, true
}

// Current reports whether the library is up to date with file as fi
// describes it: its session (or its problem) was read at this size and
// modification time. The watcher's rescans re-read only files that are not.
func (l *Library) Current(path string, fi os.FileInfo) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if f, ok := l.files[path]; ok {
		return f.meta.Size == fi.Size() && f.mod.Equal(fi.ModTime()) && !f.tail
	}
	if p, ok := l.problems[path]; ok {
		return p.size == fi.Size() && p.mod == fi.ModTime().UnixNano()
	}
	return false
}

// Grew reports whether the file is a session the library holds and fi is
// larger than what it read of it: an append, most likely, rather than a
// rewrite (which truncates first).
func (l *Library) Grew(path string, fi os.FileInfo) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	f, ok := l.files[path]
	return ok && fi.Size() > f.meta.Size
}

// Known lists the files the library holds or tried, sessions and problems.
func (l *Library) Known() []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]string, 0, len(l.files)+len(l.problems))
	for f := range l.files {
		out = append(out, f)
	}
	for f := range l.problems {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// Refresh brings the library up to date with file after a change on disk:
// a loaded tree takes the appended bytes only (Next); a file not loaded is
// read when it changed; a new file is read; a vanished one is dropped. It
// publishes what changed and returns it (the change of the file's own
// session: its key, kind and generation; Kind "" when nothing changed).
func (l *Library) Refresh(path string) (Change, error) {
	all, _, err := l.refresh(path, false)
	l.publish(all...)
	return own(all, path), err
}

// refresh is Refresh without publishing; it returns every change to
// publish (keys of other files of the same id can move too). With load,
// a file whose tree is not loaded is read even when it did not change.
// It returns the file's tree too, when it read one or found one loaded.
func (l *Library) refresh(path string, load bool) ([]Change, *sessions.Session, error) {
	l.mu.RLock()
	f, known := l.files[path]
	l.mu.RUnlock()
	if !known {
		return l.add(path)
	}
	f.read.Lock()
	defer f.read.Unlock()
	l.mu.RLock()
	cur := l.files[path]
	l.mu.RUnlock()
	if cur != f {
		if cur == nil {
			return nil, nil, fs.ErrNotExist // dropped meanwhile
		}
		return nil, nil, nil // replaced meanwhile: that one is current
	}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		l.mu.Lock()
		l.forgetProblemLocked(path)
		all := l.dropLocked(f)
		l.mu.Unlock()
		return all, nil, fs.ErrNotExist
	}
	old := f.snap.Load()
	var next *sessions.Session
	var d sessions.Delta
	switch {
	case old != nil:
		next, d, err = old.Next()
		if err == nil && next == old {
			return []Change{{Key: f.key, File: path, Gen: old.Gen()}}, old, nil
		}
	case err == nil && !load && st.Size() == f.meta.Size && st.ModTime().Equal(f.mod) && !f.tail:
		return []Change{{Key: f.key, File: path, Gen: f.gen}}, nil, nil
	default:
		next, err = l.load(path)
		d.Reloaded = true
	}
	if err != nil {
		l.mu.Lock()
		all := l.dropLocked(f)
		l.problemLocked(path, err)
		for k := range all {
			if all[k].File == path && all[k].Kind == KindRemove {
				all[k].Error = err.Error() // why the session went
			}
		}
		l.mu.Unlock()
		return all, nil, err
	}
	l.mu.Lock()
	if next.Header.ID != f.meta.ID && f.meta.ID != "" {
		// Another session renamed over this file: it is a new file to the library.
		all := l.dropLocked(f)
		nf := &file{path: path, meta: next.Meta()}
		all = append(all, l.putLocked(nf)...)
		l.setLocked(nf, next)
		l.mu.Unlock()
		l.cache.put(nf, next)
		return merge(all), next, nil
	}
	oldMeta, oldGen := f.meta, f.gen
	l.setLocked(f, next)
	key := f.key
	unchanged := oldGen == next.Gen() || (old == nil && sameMeta(oldMeta, f.meta))
	if unchanged {
		f.gen = oldGen // read, but as it was: the same generation of the file
	}
	l.mu.Unlock()
	l.cache.put(f, next)
	if unchanged {
		return []Change{{Key: key, File: path, Gen: oldGen}}, next, nil
	}
	c := Change{Key: key, File: path, Kind: KindAppend, Gen: next.Gen(), Leaf: next.LeafID(), OldLeaf: oldMeta.Leaf}
	for _, i := range d.New {
		if next.Entries[i].ID == "" {
			c.NewIDs = nil
			d.Reloaded = true // entries without an id cannot be named: clients re-read
			break
		}
		c.NewIDs = append(c.NewIDs, next.Entries[i].ID)
	}
	if d.Reloaded || old == nil {
		c.Kind, c.NewIDs = KindReload, nil
	}
	return []Change{c}, next, nil
}

// sameRow reports whether two rows of a file say the same in every field
// (times the same instant: a row from the store has them in UTC).
func sameRow(a, b sessions.Meta) bool {
	for _, m := range []*sessions.Meta{&a, &b} {
		m.Created, m.Modified, m.FileModified = m.Created.UTC(), m.Modified.UTC(), m.FileModified.UTC()
	}
	return reflect.DeepEqual(a, b)
}

// sameMeta reports whether a file read again says what its row said.
func sameMeta(a, b sessions.Meta) bool {
	return a.Size == b.Size && a.Entries == b.Entries && a.Leaf == b.Leaf && a.ID == b.ID && a.Name == b.Name
}

// add reads a file the library does not hold yet.
func (l *Library) add(path string) ([]Change, *sessions.Session, error) {
	s, err := l.load(path)
	l.mu.Lock()
	if cur, ok := l.files[path]; ok { // added meanwhile
		l.mu.Unlock()
		return []Change{{Key: cur.key, File: path, Gen: cur.gen}}, nil, nil
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.forgetProblemLocked(path)
		} else {
			l.problemLocked(path, err)
		}
		l.mu.Unlock()
		return nil, nil, err
	}
	f := &file{path: path}
	f.meta = s.Meta()
	all := l.putLocked(f)
	l.setLocked(f, s)
	l.mu.Unlock()
	l.cache.put(f, s)
	return all, s, nil
}

// problemLocked records that path could not be read, and why (l.mu held).
func (l *Library) problemLocked(path string, err error) {
	p := problem{err: err}
	if fi, serr := os.Stat(path); serr == nil {
		p.size, p.mod = fi.Size(), fi.ModTime().UnixNano()
	}
	l.problems[path] = p
	l.version++
}

// forgetProblemLocked drops what the library knew was wrong with path (l.mu held).
func (l *Library) forgetProblemLocked(path string) {
	if _, ok := l.problems[path]; ok {
		delete(l.problems, path)
		l.version++
	}
}

// own returns the change among all that concerns file.
func own(all []Change, file string) Change {
	for _, c := range all {
		if c.File == file {
			return c
		}
	}
	return Change{File: file}
}

// RefreshSettled is Refresh for a change seen on disk: it first waits for
// any write of piweb's own to the file to end, so it never reads one half
// done (its space reserved, its line not yet written).
func (l *Library) RefreshSettled(file string) (Change, error) {
	unlock := l.lockWrites(file)
	defer unlock()
	return l.Refresh(file)
}

// Remove drops file from the library and publishes it.
func (l *Library) Remove(path string) {
	l.mu.Lock()
	var all []Change
	if f, ok := l.files[path]; ok {
		all = l.dropLocked(f)
	}
	l.forgetProblemLocked(path)
	l.mu.Unlock()
	l.publish(all...)
}

// Len returns the number of sessions the library holds.
func (l *Library) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.files)
}

// SeedProblem records, as read in an earlier run (the catalog's store),
// that the file at path could not be read and why, without trying again
// while it keeps that size and modification time.
func (l *Library) SeedProblem(path string, why error, size int64, mod time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.files[path]; !ok {
		l.problems[path] = problem{err: why, size: size, mod: mod.UnixNano()}
		l.version++
	}
}

// Gen returns the generation of what the library holds of path (see
// Session.Gen), and whether it holds it as a session.
func (l *Library) Gen(path string) (uint64, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	f, ok := l.files[path]
	if !ok {
		return 0, false
	}
	return f.gen, true
}
