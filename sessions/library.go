package sessions

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/piweb/piweb/internal/js"
)

// DefaultRoot returns the sessions root as pi finds it:
// $PI_CODING_AGENT_SESSION_DIR, else $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions.
func DefaultRoot() string {
	if d := os.Getenv("PI_CODING_AGENT_SESSION_DIR"); d != "" {
		return expandHome(d)
	}
	if d := os.Getenv("PI_CODING_AGENT_DIR"); d != "" {
		return filepath.Join(expandHome(d), "sessions")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".pi", "agent", "sessions")
	}
	return filepath.Join(home, ".pi", "agent", "sessions")
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// ProjectDir returns the folder name pi uses for a working directory ("--home-user-x--").
func ProjectDir(cwd string) string {
	s := cwd
	if len(s) > 0 && (s[0] == '/' || s[0] == '\\') {
		s = s[1:] // pi removes one leading separator
	}
	s = strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(s)
	return "--" + s + "--"
}

// Meta summarises one session for the sessions list.
type Meta struct {
	ID            string    `json:"id"`
	File          string    `json:"file"`
	Project       string    `json:"project"` // the project folder name under the root
	Cwd           string    `json:"cwd"`
	Name          string    `json:"name,omitempty"`
	FirstMessage  string    `json:"firstMessage"`
	Version       int       `json:"version"`
	Created       time.Time `json:"created"`
	Modified      time.Time `json:"modified"` // last user/assistant activity, as pi sorts
	FileModified  time.Time `json:"fileModified"`
	Size          int64     `json:"size"`
	Entries       int       `json:"entries"`
	Messages      int       `json:"messages"`
	Branches      int       `json:"branches"` // entries with more than one child
	Leaves        int       `json:"leaves"`   // entries without children
	Tokens        int64     `json:"tokens"`
	Cost          float64   `json:"cost"`
	Models        []string  `json:"models"`
	ParentSession string    `json:"parentSession,omitempty"`
	ParentID      string    `json:"parentId,omitempty"` // the parent session's id, when it is in the library
	Diagnostics   int       `json:"diagnostics"`
}

// Meta computes the session's summary.
func (s *Session) Meta() Meta {
	if c := s.meta; c != nil && c.gen == s.gen {
		m := c.m
		m.Models = slices.Clone(m.Models)
		return m
	}
	return s.computeMeta()
}

// cacheMeta stores the current Meta. Only the code that changes the session
// calls it (under the library's write lock), so Meta itself never writes.
func (s *Session) cacheMeta() {
	s.meta = &metaCache{gen: s.gen, m: s.computeMeta()}
}

// metaCache holds the Meta of one generation, so listing sessions does not walk every entry each time.
type metaCache struct {
	gen uint64
	m   Meta
}

// computeMeta walks the entries to build the summary.
func (s *Session) computeMeta() Meta {
	m := Meta{ID: s.Header.ID, File: s.File, Cwd: s.Header.Cwd, Name: s.Name(), FirstMessage: s.FirstMessage,
		Version: s.Header.Version, FileModified: s.ModTime, Size: s.Size, Entries: len(s.Entries),
		ParentSession: s.Header.ParentSession, Diagnostics: len(s.Diags), Models: []string{}}
	if m.FirstMessage == "" {
		m.FirstMessage = "(no messages)"
	}
	m.Project = filepath.Base(filepath.Dir(s.File))
	if t := js.ParseDate(s.Header.Timestamp); t != NoTime {
		m.Created = time.UnixMilli(t).UTC()
	}
	var last int64
	seen := map[string]bool{}
	for i := range s.Entries {
		e := &s.Entries[i]
		switch n := len(s.children[i]); {
		case n == 0:
			m.Leaves++
		case n > 1:
			m.Branches++
		}
		m.Tokens += e.Tokens
		m.Cost += e.Cost
		if e.Type != TypeMessage {
			continue
		}
		m.Messages++
		if (e.Role == RoleUser || e.Role == RoleAssistant) && e.Time != NoTime && e.Time > last {
			last = e.Time
		}
		if mod := e.Model(); mod != "" && !seen[mod] {
			seen[mod] = true
			m.Models = append(m.Models, mod)
		}
	}
	switch {
	case last > 0:
		m.Modified = time.UnixMilli(last).UTC()
	case !m.Created.IsZero():
		m.Modified = m.Created
	default:
		m.Modified = s.ModTime
	}
	return m
}

// Library is the in-memory index of every session under a root. It is safe
// for concurrent use: readers take a read lock through View.
type Library struct {
	Root string

	mu       sync.RWMutex
	byFile   map[string]*Session
	byID     map[string]*Session
	problems map[string]error // files that are not sessions or could not be read
}

// NewLibrary returns an empty library for root.
func NewLibrary(root string) *Library {
	return &Library{Root: root, byFile: map[string]*Session{}, byID: map[string]*Session{}, problems: map[string]error{}}
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
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range jobs {
				s, err := loadIn(root, f)
				results <- result{f, s, err}
			}
		}()
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
		l.put(r.file, r.s, r.err)
	}
	return l, nil
}

// SessionFiles lists the *.jsonl files in root and in its immediate
// subfolders (pi's layout), sorted. Files that are symlinks are left out, as
// are folders that lead outside root (see Within).
func SessionFiles(root string) ([]string, error) {
	var files []string
	top, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	for _, d := range top {
		p := filepath.Join(root, d.Name())
		if IsSessionFileName(d.Name()) && d.Type().IsRegular() {
			files = append(files, p)
			continue
		}
		if !d.IsDir() && d.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if !Within(root, p) {
			continue
		}
		sub, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, f := range sub {
			if IsSessionFileName(f.Name()) && f.Type().IsRegular() {
				files = append(files, filepath.Join(p, f.Name()))
			}
		}
	}
	slices.Sort(files)
	return files, nil
}

// IsSessionFileName reports whether a file name is one pi lists (*.jsonl).
func IsSessionFileName(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, ".")
}

// Within reports whether path exists inside root: it lies below root when
// read lexically, and resolves there with symlinks followed only while they
// stay inside root (absolute links are refused), as os.Root resolves it.
func Within(root, path string) bool {
	rel, err := relIn(root, path)
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

// load reads file for the library: inside the root, when there is one.
func (l *Library) load(file string) (*Session, error) {
	if l.Root == "" {
		return Load(file)
	}
	return loadIn(l.Root, file)
}

func (l *Library) put(file string, s *Session, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.putLocked(file, s, err)
}

func (l *Library) putLocked(file string, s *Session, err error) {
	if old, ok := l.byFile[file]; ok {
		delete(l.byFile, file)
		l.releaseID(old, old.Header.ID)
	}
	delete(l.problems, file)
	if err != nil {
		l.problems[file] = err
		return
	}
	l.byFile[file] = s
	l.claimID(s)
}

// claimID gives s its id unless another file holding the same id is newer:
// with two files of one session id, the most recently modified wins the id.
func (l *Library) claimID(s *Session) {
	if other, ok := l.byID[s.Header.ID]; !ok || other == s || other.ModTime.Before(s.ModTime) {
		l.byID[s.Header.ID] = s
	}
}

// releaseID takes id from s, if s held it, and hands it to the newest other
// indexed file with that id.
func (l *Library) releaseID(s *Session, id string) {
	if l.byID[id] != s {
		return
	}
	delete(l.byID, id)
	for _, o := range l.byFile {
		if o != s && o.Header.ID == id {
			l.claimID(o)
		}
	}
}

// Add indexes a session parsed elsewhere (demo sessions).
func (l *Library) Add(s *Session) { l.put(s.File, s, nil) }

// List returns the metadata of every session, most recent activity first.
func (l *Library) List() []Meta {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]Meta, 0, len(l.byFile))
	ids := map[string]string{} // file -> id, for fork lineage
	for f, s := range l.byFile {
		ids[f] = s.Header.ID
	}
	for _, s := range l.byFile {
		m := s.Meta()
		if m.ParentSession != "" {
			m.ParentID = ids[m.ParentSession]
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Meta) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		return strings.Compare(b.File, a.File)
	})
	return out
}

// Problems returns the files under the root that could not be indexed, with why.
func (l *Library) Problems() map[string]error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make(map[string]error, len(l.problems))
	for f, err := range l.problems {
		out[f] = err
	}
	return out
}

// View calls fn with the session of that id under a read lock; fn must not keep s.
func (l *Library) View(id string, fn func(s *Session) error) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s, ok := l.byID[id]
	if !ok {
		return ErrNoSession
	}
	return fn(s)
}

// ErrNoSession is returned for a session id the library does not hold.
var ErrNoSession = errors.New("no such session")

// File returns the file of session id.
func (l *Library) File(id string) (string, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s, ok := l.byID[id]
	if !ok {
		return "", false
	}
	return s.File, true
}

// Refresh re-reads file after a change on disk: appended bytes are parsed
// incrementally; a new file is indexed; a vanished file is dropped.
// It returns the session's id (the old one for a removal) and what changed.
func (l *Library) Refresh(file string) (id string, d Delta, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, known := l.byFile[file]
	if _, statErr := os.Stat(file); errors.Is(statErr, fs.ErrNotExist) {
		if known {
			l.removeLocked(file)
			return s.Header.ID, Delta{Reloaded: true, OldLeaf: s.Leaf()}, fs.ErrNotExist
		}
		delete(l.problems, file)
		return "", d, fs.ErrNotExist
	}
	if !known {
		l.mu.Unlock()
		ns, err := l.load(file) // a first read can be long: readers need not wait for it
		l.mu.Lock()
		if cur, ok := l.byFile[file]; ok {
			return cur.Header.ID, Delta{Reloaded: true, OldLeaf: -1}, nil // indexed meanwhile
		}
		l.putLocked(file, ns, err)
		if err != nil {
			return "", d, err
		}
		return ns.Header.ID, Delta{Reloaded: true, OldLeaf: -1}, nil
	}
	oldID := s.Header.ID
	d, err = s.update(false)
	if errors.Is(err, errNeedsReload) {
		// Rewritten, truncated or replaced: re-read it without holding the
		// lock, then swap the result in unless another refresh already did.
		d = Delta{Reloaded: true, OldLeaf: s.Leaf()}
		l.mu.Unlock()
		fresh, lerr := l.load(file)
		l.mu.Lock()
		if l.byFile[file] != s {
			if cur, ok := l.byFile[file]; ok {
				return cur.Header.ID, d, nil
			}
			return oldID, d, fs.ErrNotExist
		}
		if err = lerr; err == nil {
			*s = *fresh // keep the pointer: the id map and the file map hold it
		}
	}
	if err != nil {
		l.removeLocked(file)
		l.problems[file] = err
		return oldID, d, err
	}
	if s.Header.ID != oldID {
		l.releaseID(s, oldID)
		l.claimID(s)
	}
	return s.Header.ID, d, nil
}

// Remove drops file from the library.
func (l *Library) Remove(file string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.removeLocked(file)
}

func (l *Library) removeLocked(file string) {
	if s, ok := l.byFile[file]; ok {
		delete(l.byFile, file)
		l.releaseID(s, s.Header.ID)
	}
	delete(l.problems, file)
}

// Len returns the number of sessions indexed.
func (l *Library) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.byFile)
}
