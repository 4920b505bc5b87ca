package usage

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/piweb/piweb/ledger"
	"github.com/piweb/piweb/sessions"
)

// Library is what Files reads: the sessions of a root (library.Library).
type Library interface {
	List() []sessions.Meta
	View(key string, fn func(*sessions.Session) error) error
}

// Files is a Source that reads the session files of a library: each
// file's usage records are read once per version of the file (its
// generation) and kept; the copies between files of a fork lineage are
// found again on every call, as files come and go. Safe for concurrent use.
type Files struct {
	lib     Library
	machine string

	mu    sync.Mutex
	files map[string]*fileUse // by file path
}

// NewFiles returns a Source over lib's sessions, all on the named machine.
func NewFiles(lib Library, machine string) *Files {
	return &Files{lib: lib, machine: machine, files: map[string]*fileUse{}}
}

// fileUse is what one version of a session file recorded.
type fileUse struct {
	gen, epoch uint64
	meta       sessions.Meta
	items      []record
	// ledger reads the file's usage; kept once the file changed after its
	// first reading (pi is writing to it), so that each later append is
	// read alone.
	ledger *ledger.Ledger
	refs   map[ref]int32 // the position in items of each record's ref; made when a fork needs it
	once   sync.Once     // makes refs
}

// ref names an entry across copies: a copy keeps the id and timestamp.
type ref struct {
	id   string
	time int64 // Unix ms; the entry's timestamp as written
}

// record is one entry that carries usage, or one assistant message.
type record struct {
	Record
	ref    ref
	active bool // on the path to the file's last entry
}

// Rows returns the rows the filter selects, every usage record counted
// once (see the package doc), sorted by start, session and model.
func (f *Files) Rows(ctx context.Context, flt Filter) ([]Row, error) {
	uses, err := f.current(ctx)
	if err != nil {
		return nil, err
	}
	copied, active := lineage(uses)
	type key struct {
		start          time.Time
		session, model string
	}
	sums := map[key]*Row{}
	for k, u := range uses {
		m := &u.meta
		if len(flt.Projects) > 0 && !slices.Contains(flt.Projects, m.Project) ||
			len(flt.Machines) > 0 && !slices.Contains(flt.Machines, f.machine) ||
			len(flt.Sessions) > 0 && !slices.Contains(flt.Sessions, m.Key) {
			continue
		}
		for i := range u.items {
			rec := &u.items[i]
			if copied[k] != nil && copied[k][i] || !flt.MatchTime(rec.Start) ||
				len(flt.Models) > 0 && !slices.Contains(flt.Models, rec.Model) {
				continue
			}
			kk := key{rec.Start, m.Key, rec.Model}
			r := sums[kk]
			if r == nil {
				r = &Row{Start: rec.Start, Session: m.Key, SessionID: m.ID, Project: m.Project, Machine: f.machine, Model: rec.Model}
				sums[kk] = r
			}
			r.Sums.Add(rec.Sums)
			if !rec.active && !(active[k] != nil && active[k][i]) {
				r.Abandoned.Add(rec.Sums)
			}
			if rec.Errored {
				r.Errors++
			}
			if rec.Aborted {
				r.Aborted++
			}
		}
	}
	rows := make([]Row, 0, len(sums))
	for _, r := range sums {
		rows = append(rows, *r)
	}
	SortRows(rows)
	return rows, nil
}

// SortRows sorts rows by start, session, model and machine.
func SortRows(rows []Row) {
	slices.SortFunc(rows, func(a, b Row) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		if c := strings.Compare(a.Session, b.Session); c != 0 {
			return c
		}
		if c := strings.Compare(a.Model, b.Model); c != 0 {
			return c
		}
		return strings.Compare(a.Machine, b.Machine)
	})
}

// Sessions describes the sessions with the given keys that the library holds.
func (f *Files) Sessions(_ context.Context, keys []string) (map[string]Session, error) {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	out := map[string]Session{}
	for _, m := range f.lib.List() {
		if want[m.Key] {
			out[m.Key] = sessionOf(&m)
		}
	}
	return out, nil
}

// sessionOf returns what the reports show of the session m describes.
func sessionOf(m *sessions.Meta) Session {
	return Session{Key: m.Key, ID: m.ID, Project: m.Project, Cwd: m.Cwd, Name: m.Name, FirstMessage: m.FirstMessage, Modified: m.Modified}
}

// current returns the usage of every session the library holds now,
// reading only the files that changed since the last call. A file that
// cannot be read now is left out (the sessions page reports it).
func (f *Files) current(ctx context.Context) ([]*fileUse, error) {
	metas := f.lib.List()
	out := make([]*fileUse, len(metas))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(len(metas), max(2, runtime.GOMAXPROCS(0))) {
		wg.Go(func() {
			for i := range next {
				m := &metas[i]
				_ = f.lib.View(m.Key, func(s *sessions.Session) error {
					f.mu.Lock()
					u := f.files[s.File]
					f.mu.Unlock()
					if u == nil || u.gen != s.Gen() || u.meta.Key != m.Key {
						var err error
						if u, err = read(s, *m, u); err != nil {
							return err
						}
					}
					out[i] = u
					return nil
				})
			}
		})
	}
	for i := range metas {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	kept := out[:0]
	f.mu.Lock()
	defer f.mu.Unlock()
	files := make(map[string]*fileUse, len(out))
	for _, u := range out {
		if u != nil {
			files[u.meta.File] = u
			kept = append(kept, u)
		}
	}
	f.files = files
	return kept, nil
}

// read returns the usage records of session s (the library's read lock
// held), which m describes; prev is what an earlier version of the file
// recorded (nil: none read yet).
func read(s *sessions.Session, m sessions.Meta, prev *fileUse) (*fileUse, error) {
	u := &fileUse{gen: s.Gen(), epoch: s.Epoch(), meta: m}
	u.meta.File = s.File
	r, err := s.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	l := ledger.New()
	if prev != nil {
		if prev.ledger != nil {
			l = prev.ledger // it reads only what was appended (all again after a rewrite)
		}
		u.ledger = l
	}
	if err := l.Update(r); err != nil {
		return nil, err
	}
	on := make([]bool, len(s.Entries))
	for _, p := range s.Path(s.Leaf()) {
		on[p] = true
	}
	Records(s, r, l, 0, func(rec *Record) {
		u.items = append(u.items, record{Record: *rec, ref: ref{rec.ID, rec.Time}, active: on[rec.Pos]})
	})
	return u, nil
}

// lineage finds the copies among the files' records: copied[k][i] marks
// record i of uses[k] as a copy of a record in an ancestor of its file
// (along the parentSession headers), which alone counts; active[k][i]
// marks a record that is off the path in its own file but on the path in
// one of its copies, so a branch resumed in a fork is not abandoned.
func lineage(uses []*fileUse) (copied, active [][]bool) {
	copied = make([][]bool, len(uses))
	active = make([][]bool, len(uses))
	byPath := map[string]int{}
	byName := map[string]int{}
	names := map[string]int{} // how many files share a base name
	links := make([]Link, len(uses))
	for k, u := range uses {
		links[k] = LinkOf(u.meta.File, u.meta.ParentSession)
		byPath[links[k].Path] = k
		byName[links[k].Name] = k
		names[links[k].Name]++
	}
	// The file each header's parentSession names: the same path, else, for
	// a root copied from another machine, the one file of that name (pi
	// names files by their session id, unique to the session).
	parent := make([]int, len(uses))
	for k := range uses {
		parent[k] = -1
		l := &links[k]
		if l.Parent == "" {
			continue
		}
		if j, ok := byPath[l.Parent]; ok && j != k {
			parent[k] = j
		} else if names[l.ParentName] == 1 && byName[l.ParentName] != k {
			parent[k] = byName[l.ParentName]
		}
	}
	// Headers that name each other in a loop have no first writer: the
	// loop is cut at the file with the smallest path, which then counts
	// what it holds.
	state := make([]int8, len(uses)) // 0 unseen, 1 on the walk, 2 done
	for k := range uses {
		var walk []int
		v := k
		for v >= 0 && state[v] == 0 {
			state[v] = 1
			walk = append(walk, v)
			v = parent[v]
		}
		if v >= 0 && state[v] == 1 { // the walk came back to v: a loop from v on
			cut := v
			for w := parent[v]; w != v; w = parent[w] {
				if uses[w].meta.File < uses[cut].meta.File {
					cut = w
				}
			}
			parent[cut] = -1
		}
		for _, w := range walk {
			state[w] = 2
		}
	}
	for k, u := range uses {
		// The ancestors, nearest first.
		var up []int
		for p := parent[k]; p >= 0; p = parent[p] {
			up = append(up, p)
		}
		if len(up) == 0 {
			continue
		}
		for i := range u.items {
			rec := &u.items[i]
			if rec.ref.id == "" {
				continue
			}
			// The farthest ancestor that holds the entry wrote it first.
			for a := len(up) - 1; a >= 0; a-- {
				j := up[a]
				at, ok := refsOf(uses[j])[rec.ref]
				if !ok {
					continue
				}
				if copied[k] == nil {
					copied[k] = make([]bool, len(u.items))
				}
				copied[k][i] = true
				if rec.active && !uses[j].items[at].active {
					if active[j] == nil {
						active[j] = make([]bool, len(uses[j].items))
					}
					active[j][at] = true
				}
				break
			}
		}
	}
	return copied, active
}

// refsOf returns where each ref sits in u's records.
func refsOf(u *fileUse) map[ref]int32 {
	u.once.Do(func() {
		u.refs = make(map[ref]int32, len(u.items))
		for i := range u.items {
			if u.items[i].ref.id != "" {
				u.refs[u.items[i].ref] = int32(i)
			}
		}
	})
	return u.refs
}
