package sessions

// The library: the index of every session file under a root, each file
// addressed by its own key, kept current by Refresh (which the watcher
// calls on every change and the writers call after each write), and the one
// place that publishes what changed (see feed.go).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Library is the in-memory index of every session under a root. It is safe
// for concurrent use: readers take a read lock through View.
type Library struct {
	Root string

	mu       sync.RWMutex
	files    map[string]*Session   // by file path
	keys     map[string]*Session   // by key
	ids      map[string][]*Session // by header id: the files holding that session id
	key      map[*Session]string   // each session's key
	problems map[string]problem    // files that are not sessions or could not be read

	writing sync.Map // file path -> *sync.Mutex: piweb's own writes to a file, one at a time
	feed    hub
}

// problem is a file under the root that could not be indexed, as it was when tried.
type problem struct {
	err  error
	size int64
	mod  int64 // modification time, ns
}

// NewLibrary returns an empty library for root.
func NewLibrary(root string) *Library {
	l := &Library{Root: root, files: map[string]*Session{}, keys: map[string]*Session{},
		ids: map[string][]*Session{}, key: map[*Session]string{}, problems: map[string]problem{}}
	l.feed.size = defaultFeedBuffer
	return l
}

// OpenLibrary indexes every *.jsonl file in the project folders under root
// (and directly in root), reading files in parallel.
func OpenLibrary(root string) (*Library, error) {
	l := NewLibrary(root)
	files, err := SessionFiles(root)
	if err != nil {
		return l, err
	}
	type result struct {
		file string
		s    *Session
		err  error
	}
	jobs := make(chan string)
	results := make(chan result)
	var wg sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for f := range jobs {
				s, err := loadIn(root, f)
				results <- result{f, s, err}
			}
		})
	}
	go func() {
		for _, f := range files {
			jobs <- f
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	for r := range results {
		l.mu.Lock()
		l.putLocked(r.file, r.s, r.err) // nobody subscribes yet: the changes are not published
		l.mu.Unlock()
	}
	return l, nil
}

// load reads file for the library: inside the root, when there is one.
func (l *Library) load(file string) (*Session, error) { return l.loadEach(file, nil, nil) }

// loadEach is load calling each with every entry it reads (see loadOpenEach).
func (l *Library) loadEach(file string, each func(pos int, e *Entry, line []byte), tap Tap) (*Session, error) {
	if l.Root == "" {
		return loadEach(file, each, tap)
	}
	return loadInEach(l.Root, file, each, tap)
}

// putLocked indexes s as file (or records err for it) and returns the
// changes of keys this caused. l.mu is held.
func (l *Library) putLocked(file string, s *Session, err error) []Change {
	var out []Change
	if old, ok := l.files[file]; ok {
		out = l.dropLocked(file, old)
	}
	delete(l.problems, file)
	if err != nil {
		p := problem{err: err}
		if fi, serr := os.Stat(file); serr == nil {
			p.size, p.mod = fi.Size(), fi.ModTime().UnixNano()
		}
		l.problems[file] = p
		return out
	}
	id := s.Header.ID
	for _, o := range slices.Clone(l.ids[id]) {
		// A file of the same session that is gone from disk was moved here
		// (a rename within the tree, an atomic save): this file takes over.
		if _, err := os.Stat(o.File); errors.Is(err, fs.ErrNotExist) {
			out = append(out, l.dropLocked(o.File, o)...)
		}
	}
	l.files[file] = s
	l.ids[id] = append(l.ids[id], s)
	return merge(append(out, l.rekeyLocked(id, nil)...))
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

// dropLocked removes file's session from the maps and returns the changes of keys.
func (l *Library) dropLocked(file string, s *Session) []Change {
	delete(l.files, file)
	id := s.Header.ID
	l.ids[id] = slices.DeleteFunc(l.ids[id], func(o *Session) bool { return o == s })
	if len(l.ids[id]) == 0 {
		delete(l.ids, id)
	}
	return l.rekeyLocked(id, s)
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
func (l *Library) rekeyLocked(id string, gone *Session) []Change {
	files := l.ids[id]
	slices.SortFunc(files, func(a, b *Session) int {
		ca, cb := piNamed(a.File, id), piNamed(b.File, id)
		switch {
		case ca && !cb:
			return -1
		case cb && !ca:
			return 1
		}
		return strings.Compare(a.File, b.File)
	})
	var out []Change
	before := map[string]*Session{} // key -> its old holder, for the keys of this id
	if gone != nil {
		if k, ok := l.key[gone]; ok {
			before[k] = gone
			delete(l.keys, k)
			delete(l.key, gone)
		}
	}
	for _, s := range files {
		if k, ok := l.key[s]; ok {
			before[k] = s
			delete(l.keys, k)
		}
	}
	for k, s := range files {
		key := id
		if k > 0 {
			key = copyKey(id, l.rel(s.File))
		}
		l.key[s] = key
		l.keys[key] = s
	}
	for k, old := range before {
		if now, ok := l.keys[k]; !ok {
			out = append(out, Change{Key: k, File: old.File, Kind: KindRemove, OldLeaf: leafID(old)})
		} else if now != old {
			out = append(out, Change{Key: k, File: now.File, Kind: KindReload, Gen: now.gen, Leaf: leafID(now), OldLeaf: leafID(old)})
		}
	}
	for _, s := range files {
		if k := l.key[s]; before[k] == nil {
			out = append(out, Change{Key: k, File: s.File, Kind: KindNew, Gen: s.gen, Leaf: leafID(s)})
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

// leafID returns the id of the entry pi resumes from, or "".
func leafID(s *Session) string {
	if i := s.Leaf(); i >= 0 {
		return s.Entries[i].ID
	}
	return ""
}

// Add indexes a session parsed elsewhere (demo sessions) and publishes it.
func (l *Library) Add(s *Session) {
	l.mu.Lock()
	ch := l.putLocked(s.File, s, nil)
	l.mu.Unlock()
	l.publish(ch...)
}

// List returns the metadata of every session, most recent activity first.
func (l *Library) List() []Meta {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]Meta, 0, len(l.files))
	for _, s := range l.files {
		out = append(out, l.metaLocked(s))
	}
	slices.SortFunc(out, func(a, b Meta) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		return strings.Compare(b.File, a.File)
	})
	return out
}

// metaLocked is s's Meta with what the library knows of it: its key, the
// file it is a copy of, and its parent session's key.
func (l *Library) metaLocked(s *Session) Meta {
	m := s.Meta()
	m.Key = l.key[s]
	if files := l.ids[m.ID]; len(files) > 1 && files[0] != s {
		m.CopyOf = l.key[files[0]]
	}
	if p, ok := l.files[m.ParentSession]; ok && m.ParentSession != "" {
		m.ParentID, m.ParentKey = p.Header.ID, l.key[p]
	}
	return m
}

// Meta returns the metadata of the session with key, as List has it.
func (l *Library) Meta(key string) (Meta, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s, ok := l.keys[key]
	if !ok {
		return Meta{}, &Error{Kind: ErrNoSession, Key: key}
	}
	return l.metaLocked(s), nil
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

// View calls fn with the session of that key under a read lock; fn must not keep s.
func (l *Library) View(key string, fn func(s *Session) error) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s, ok := l.keys[key]
	if !ok {
		return &Error{Kind: ErrNoSession, Key: key}
	}
	return fn(s)
}

// File returns the file of the session with key.
func (l *Library) File(key string) (string, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s, ok := l.keys[key]
	if !ok {
		return "", false
	}
	return s.File, true
}

// Key returns the key of the session stored in file.
func (l *Library) Key(file string) (string, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s, ok := l.files[file]
	if !ok {
		return "", false
	}
	return l.key[s], true
}

// Current reports whether the library is up to date with file as fi
// describes it: its session (or its problem) was read at this size and
// modification time. The watcher's rescans re-read only files that are not.
func (l *Library) Current(file string, fi os.FileInfo) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if s, ok := l.files[file]; ok {
		return s.Size == fi.Size() && s.ModTime.Equal(fi.ModTime()) && !s.hasTail
	}
	if p, ok := l.problems[file]; ok {
		return p.size == fi.Size() && p.mod == fi.ModTime().UnixNano()
	}
	return false
}

// Grew reports whether the file is a session the library holds and fi is
// larger than what it read of it: an append, most likely, rather than a
// rewrite (which truncates first).
func (l *Library) Grew(file string, fi os.FileInfo) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s, ok := l.files[file]
	return ok && fi.Size() > s.Size
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
// appended bytes are parsed incrementally; a new file is indexed; a
// rewritten one is read again; a vanished one is dropped. It publishes what
// changed and returns it (the change of the file's own session: its key,
// kind and generation; Kind "" when nothing changed).
func (l *Library) Refresh(file string) (Change, error) {
	ch, all, err := l.refresh(file, nil, nil, nil)
	l.publish(all...)
	return ch, err
}

// Each is what RefreshEach read.
type Each struct {
	// Epoch is the epoch of the session the read put in the library, 0
	// when fn's entries are not that session's: the library held the
	// file already or another read put it in meanwhile, the file is not
	// a session, or it is a version 1 file (fn is never called for one).
	Epoch uint64
	// Entries is how many entries the read found: fn had each of them
	// but those whose line ReadLinesAsWritten skips.
	Entries int
}

// RefreshEach is Refresh for a file the library does not hold yet (the
// first fill), calling fn during the read with each entry as the read
// accepts it, while its line is fresh in memory: its position, its index
// record and its line as written, as ReadLinesAsWritten from 0 would give
// them once the read is done. fn must not keep e or line, and must not
// call the library. Unless Each.Epoch is not 0 and is the session's
// epoch, what fn was given is not the session's and is to be dropped.
func (l *Library) RefreshEach(file string, fn func(pos int, e *Entry, line []byte)) (Each, error) {
	return l.RefreshEachTap(file, fn, nil)
}

// RefreshEachTap is RefreshEach also showing tap (when not nil) the
// members of each line as the read parses them, before fn has the line's
// entry (see Tap).
func (l *Library) RefreshEachTap(file string, fn func(pos int, e *Entry, line []byte), tap Tap) (Each, error) {
	var got Each
	_, all, err := l.refresh(file, fn, tap, &got)
	l.publish(all...)
	return got, err
}

// refresh is Refresh without publishing: it returns the file's change and
// every change to publish (keys of other files of the same id can move too).
// With got, a file the library does not hold yet is read with each and
// got says what went in.
func (l *Library) refresh(file string, each func(pos int, e *Entry, line []byte), tap Tap, got *Each) (Change, []Change, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, known := l.files[file]
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		delete(l.problems, file)
		if !known {
			return Change{}, nil, fs.ErrNotExist
		}
		all := l.dropLocked(file, s)
		return own(all, file), all, fs.ErrNotExist
	}
	if !known {
		l.mu.Unlock()
		ns, err := l.loadEach(file, each, tap) // a first read can be long: readers need not wait for it
		l.mu.Lock()
		if cur, ok := l.files[file]; ok {
			return Change{Key: l.key[cur], File: file, Gen: cur.gen}, nil, nil // indexed meanwhile
		}
		all := l.putLocked(file, ns, err)
		if got != nil && err == nil && ns.Header.Version >= 2 {
			got.Epoch, got.Entries = ns.epoch, len(ns.Entries)
		}
		return own(all, file), all, err
	}
	oldLeaf := leafID(s)
	d, err := s.update(false)
	if errors.Is(err, errNeedsReload) {
		// Rewritten, truncated or replaced: re-read it without holding the
		// lock, then swap the result in unless another refresh already did.
		l.mu.Unlock()
		fresh, lerr := l.load(file)
		l.mu.Lock()
		if l.files[file] != s {
			if cur, ok := l.files[file]; ok {
				return Change{Key: l.key[cur], File: file, Gen: cur.gen}, nil, nil
			}
			return Change{}, nil, fs.ErrNotExist
		}
		if err = lerr; err == nil {
			if fresh.Header.ID != s.Header.ID {
				all := l.putLocked(file, fresh, nil) // another session renamed over this file
				return own(all, file), all, nil
			}
			*s = *fresh // keep the pointer: the maps hold it
			d = Delta{Reloaded: true}
		}
	}
	if err != nil {
		all := l.putLocked(file, nil, err)
		for k := range all {
			if all[k].File == file && all[k].Kind == KindRemove {
				all[k].Error = err.Error() // why the session went
			}
		}
		return own(all, file), all, err
	}
	if !d.Changed() {
		return Change{Key: l.key[s], File: file, Gen: s.gen}, nil, nil
	}
	c := Change{Key: l.key[s], File: file, Kind: KindAppend, Gen: s.gen, Leaf: leafID(s), OldLeaf: oldLeaf}
	for _, i := range d.New {
		if s.Entries[i].ID == "" {
			c.NewIDs = nil
			d.Reloaded = true // entries without an id cannot be named: clients re-read
			break
		}
		c.NewIDs = append(c.NewIDs, s.Entries[i].ID)
	}
	if d.Reloaded {
		c.Kind, c.NewIDs = KindReload, nil
	}
	return c, []Change{c}, nil
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
func (l *Library) Remove(file string) {
	l.mu.Lock()
	var all []Change
	if s, ok := l.files[file]; ok {
		all = l.dropLocked(file, s)
	}
	delete(l.problems, file)
	l.mu.Unlock()
	l.publish(all...)
}

// Len returns the number of sessions indexed.
func (l *Library) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.files)
}
