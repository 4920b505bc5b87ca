package sessions

// Writers: the only code in piweb that changes session files. Every change to
// an existing file is one appended line (Label, Rewind); forks and saved
// exports are new files; Upgrade is the one function that replaces a file,
// and only when the user asks for it.
//
// pi appends with appendFileSync and no lock, so another pi process may append
// at any moment. A writer therefore builds its line from the file as it is
// right before it appends (from the library's index only when the file is
// verifiably what it indexed, else by reading it again), and writes only if
// the file did not move in between (see appendEntry). The library runs
// piweb's own writes to one file one at a time, and refreshes its index
// (publishing the change) before the next one starts.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/piweb/piweb/internal/js"
)

// Guard describes the session state a user's page saw; the zero value checks nothing.
type Guard struct {
	Leaf string // id of the leaf the page showed
	Size int64  // Session.Size the page was rendered from
}

// RewindType is the customType of the record Rewind appends when there is no summary.
const RewindType = "piweb.rewind"

// appendAttempts bounds how often a writer re-reads a file that keeps growing.
const appendAttempts = 50

// builder makes the line to append from the session as it is now (cur)
// and returns it with the new entry's id, or refuses.
type builder func(cur *Session) (line []byte, id string, err error)

// labelLine builds the label entry setting (or, for a blank label, clearing) the label of targetID.
func labelLine(targetID, label string) builder {
	// As pi's tree view does: trim, and write a clear with no label key at all
	// (appendLabelChange(id, undefined)). The entry hangs off the current leaf
	// and adds nothing to the context, so pi resumes with the same context. With
	// an id-less last line there is no leaf to hang it off (pi would omit
	// parentId and resume from nothing), so Label refuses; a Rewind repairs that.
	label = js.Trim(label)
	return func(cur *Session) ([]byte, string, error) {
		if _, ok := cur.Lookup(targetID); !ok || targetID == "" {
			return nil, "", &Error{Kind: ErrNoEntry, Entry: targetID}
		}
		leaf := cur.Entries[cur.Leaf()] // the target exists, so there are entries
		if leaf.ID == "" {
			return nil, "", &Error{Kind: ErrNoLeafID, Entry: targetID,
				Detail: fmt.Sprintf("line %d; a label would change where pi resumes: rewind to an entry first", leaf.Line)}
		}
		id := newEntryID(cur.taken)
		o := js.Object{{K: "type", V: json.RawMessage(`"label"`)}, {K: "id", V: js.Quote(id)}, {K: "parentId", V: js.Quote(leaf.ID)},
			{K: "timestamp", V: js.Quote(js.NowISO())}, {K: "targetId", V: js.Quote(targetID)}}
		if label != "" {
			o = append(o, js.KV{K: "label", V: js.Quote(label)})
		}
		return o.JSON(), id, nil
	}
}

// rewindLine builds the child of targetID ("" for before the first entry) that makes pi resume there.
func rewindLine(targetID, summary string, guard Guard) builder {
	// A non-blank summary is written as pi's own branch_summary (branchWithSummary),
	// which puts it into the context. Otherwise a custom RewindType entry records
	// the abandoned leaf and adds nothing. A non-zero guard refuses with ErrStale
	// when the leaf is no longer guard.Leaf or the file shrank below guard.Size:
	// the abandoned leaf (fromId) and the user's summary would describe another state.
	return func(cur *Session) ([]byte, string, error) {
		parent := json.RawMessage("null")
		if targetID != "" {
			if _, ok := cur.Lookup(targetID); !ok {
				return nil, "", &Error{Kind: ErrNoEntry, Entry: targetID}
			}
			parent = js.Quote(targetID)
		}
		if guard != (Guard{}) {
			leaf := leafID(cur)
			if leaf != guard.Leaf || cur.Size < guard.Size {
				return nil, "", &Error{Kind: ErrStale, Entry: targetID, Detail: fmt.Sprintf("the leaf is %q, the page saw %q", leaf, guard.Leaf)}
			}
		}
		from, err := cur.piLeafID()
		if err != nil {
			return nil, "", err
		}
		id := newEntryID(cur.taken)
		ts := js.Quote(js.NowISO())
		var o js.Object
		if js.Trim(summary) != "" {
			o = js.Object{{K: "type", V: json.RawMessage(`"branch_summary"`)}, {K: "id", V: js.Quote(id)}, {K: "parentId", V: parent},
				{K: "timestamp", V: ts}, {K: "fromId", V: from}, {K: "summary", V: js.Quote(summary)}}
		} else {
			data := js.Object{{K: "fromId", V: from}}
			o = js.Object{{K: "type", V: json.RawMessage(`"custom"`)}, {K: "customType", V: js.Quote(RewindType)}, {K: "data", V: data.JSON()},
				{K: "id", V: js.Quote(id)}, {K: "parentId", V: parent}, {K: "timestamp", V: ts}}
		}
		return o.JSON(), id, nil
	}
}

// Label appends to s's file a label entry setting (or, for a blank label,
// clearing) the label of entry targetID, and returns the new entry's id.
// s must not change meanwhile; the library's Label serialises with its index.
func Label(s *Session, targetID, label string) (string, error) {
	return appendEntry(s.writeRoot(), s.File, s.own(), []string{targetID}, labelLine(targetID, label))
}

// Rewind appends to s's file a child of entry targetID ("" for before the
// first entry) so pi resumes there, and returns the new entry's id.
func Rewind(s *Session, targetID, summary string, guard Guard) (string, error) {
	return appendEntry(s.writeRoot(), s.File, s.own(), []string{targetID}, rewindLine(targetID, summary, guard))
}

// Label sets (or, with a blank label, clears) the label of entry targetID
// of the session with key, and returns the new entry's id.
func (l *Library) Label(key, targetID, label string) (string, error) {
	return l.append(key, []string{targetID}, labelLine(targetID, label))
}

// Rewind makes pi resume from entry targetID ("" for before the first
// entry) of the session with key, and returns the new entry's id.
func (l *Library) Rewind(key, targetID, summary string, guard Guard) (string, error) {
	return l.append(key, []string{targetID}, rewindLine(targetID, summary, guard))
}

// ErrElsewhere: the library is a read-only copy of sessions that live
// elsewhere (SetReadOnly); the error's Detail names where.
var ErrElsewhere = errors.New("the session is a copy: change it where it lives")

// index runs fn with a session's index held still: the caller's own, or the library's under its read lock.
type index func(fn func(s *Session))

// own is the index of a session nobody else changes.
func (s *Session) own() index {
	if s == nil || s.data != nil || s.File == "" {
		return nil
	}
	return func(fn func(*Session)) { fn(s) }
}

// append appends the line build makes to the file of the session with key,
// after piweb's other writes to that file, then refreshes the index and
// publishes the change before the next write may start.
func (l *Library) append(key string, ids []string, build builder) (string, error) {
	file, root, err := l.locate(key)
	if err != nil {
		return "", err
	}
	unlock := l.lockWrites(file)
	defer unlock()
	idx := func(fn func(*Session)) {
		if s := l.Loaded(file); s != nil {
			fn(s)
		}
	}
	id, err := appendEntry(root, file, idx, ids, build)
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
		return "", "", &Error{Kind: ErrNoSession, Key: key}
	}
	if where := l.readOnly.Load(); where != nil {
		return "", "", &Error{Kind: ErrElsewhere, Key: key, Detail: (*where)(f.path)}
	}
	if f.pinned || f.path == "" {
		return "", "", &Error{Kind: ErrReadOnly, Key: key, Version: f.meta.Version, Detail: "a demo session held in memory"}
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
	var e *Error
	if errors.As(err, &e) && e.Key == "" {
		c := *e
		c.Key = key
		return &c
	}
	return err
}

// piLeafID returns what pi's branchWithSummary records as fromId: its
// leafId after opening the file (the last entry's id as written), or "root"
// when that is null or undefined (no entries, or a last line without id).
func (s *Session) piLeafID() (json.RawMessage, error) {
	root := json.RawMessage(`"root"`)
	l := s.Leaf()
	if l < 0 {
		return root, nil
	}
	if id := s.Entries[l].ID; id != "" {
		return js.Quote(id), nil
	}
	if s.Entries[l].Flags.Has(FlagNotObject) {
		return root, nil
	}
	raw, err := s.Raw(l)
	if err != nil {
		return nil, err
	}
	if v, ok := js.Lookup(raw, "id"); ok && !js.IsNull(v) {
		return v, nil // an id pi keeps but piweb cannot link to (not a string)
	}
	return root, nil
}

// newEntryID returns an id as pi's generateId makes one: the first 8 hex
// digits of a random UUID that taken says is not taken, or a whole UUID
// after 100 collisions.
func newEntryID(taken func(id string) bool) string {
	for range 100 {
		id := uuid.NewString()[:8]
		if !taken(id) {
			return id
		}
	}
	return uuid.NewString()
}

// taken reports whether s holds an entry with id.
func (s *Session) taken(id string) bool {
	_, ok := s.Lookup(id)
	return ok
}

// errNotFile is returned when a writer gets a session that was not read from a file.
var errNotFile = &Error{Kind: ErrReadOnly, Detail: "the session was not read from a file"}

// appendEntry appends the line built by build to file (inside root) as one whole line.
//
// It builds from the file as it is now: on the first try from the index
// (idx, when given) if the file still holds exactly what it indexed (see
// verified; ids names the entries build relies on), else by reading the file
// again. build checks its preconditions and makes the line from that
// state, and the line is appended only if the file has not changed since:
// when another writer appended meanwhile, the file is read again and build
// runs again, so parentId and the checks always describe the file the line
// lands in. The index is only read, and only while idx holds it still; the
// append itself runs outside it.
func appendEntry(root, file string, idx index, ids []string, build builder) (string, error) {
	if idx == nil || file == "" {
		return "", errNotFile
	}
	var snap *pinned
	defer func() {
		if snap != nil {
			snap.close()
		}
	}()
	for attempt := range appendAttempts {
		var (
			at        *os.File // the file as the line was built for it, and its size then
			size      int64
			line      []byte
			id        string
			err       error
			fromIndex bool
		)
		if attempt == 0 {
			idx(func(s *Session) {
				if at, size = s.verified(root, ids); at != nil {
					fromIndex = true
					if err = checkWritable(s); err == nil {
						line, id, err = build(s)
					}
				}
			})
			if at != nil {
				defer at.Close()
			}
		}
		if !fromIndex {
			if snap, err = snap.advance(root, file); err != nil {
				return "", err
			}
			at, size = snap.f, snap.size
			if err = checkWritable(snap.s); err == nil {
				line, id, err = build(snap.s)
			}
		}
		if err != nil {
			return "", err
		}
		done, err := appendLine(root, file, at, size, line)
		if err != nil {
			return "", err
		}
		if done {
			return id, nil
		}
	}
	return "", &Error{Kind: ErrBusy, Detail: file}
}

// checkWritable refuses files in a format piweb does not append to:
// versions 1 and 2, which pi rewrites when it opens them, and versions
// newer than 3 (pi's experimental formats), which piweb cannot vouch for.
func checkWritable(s *Session) error {
	if v := s.Header.Version; v != 3 {
		return &Error{Kind: ErrReadOnly, Version: v, Detail: fmt.Sprintf("%s is version %d", s.File, v)}
	}
	return nil
}

// pinned is a session read from exactly the first size bytes of an open file.
type pinned struct {
	s    *Session
	f    *os.File
	size int64
	root string // the folder the file must lie in (see openIn)
}

// verified returns s's file, open, and the size s indexed, when the file at
// s.File is still exactly what s indexed: the same size and modification
// time, the same header and last indexed bytes, and the lines of the last
// entry and of the entries named by ids (when s has them) where s has them,
// with those ids. Otherwise, or when s holds no index, it returns nil and
// the writer reads the file again. pi only appends; a rewrite of the same
// size moves the modification time, which Update also relies on.
func (s *Session) verified(root string, ids []string) (*os.File, int64) {
	if len(s.Entries) == 0 || s.hasTail || s.Header.ID == "" || len(s.head) == 0 || s.byID.base == nil {
		return nil, 0
	}
	f, st, err := openIn(root, s.File, os.O_RDONLY)
	if err != nil {
		return nil, 0
	}
	ok := st.Size() == s.Size && st.ModTime().Equal(s.ModTime) && s.sameBytes(f, st.Size())
	check := []int{len(s.Entries) - 1}
	for _, id := range ids {
		if i, found := s.byID.get(id); found {
			check = append(check, i)
		}
	}
	r := &Reader{s: s, f: f}
	for k := 0; ok && k < len(check); k++ {
		_, err := r.Raw(check[k]) // the line still parses, with the id s has for it
		ok = err == nil
	}
	if !ok {
		f.Close()
		return nil, 0
	}
	return f, s.Size
}

// readPinned opens path, a regular file inside root, and indexes the bytes it holds now.
func readPinned(root, path string) (*pinned, error) {
	f, st, err := openIn(root, path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	s, err := loadOpen(f, st, path, root) // exactly st.Size() bytes
	if err != nil {
		f.Close()
		return nil, err
	}
	return &pinned{s: s, f: f, size: st.Size(), root: root}, nil
}

// advance brings the pinned reading up to date with the file at path: lines
// appended since are read incrementally; anything else re-reads the file.
// A nil one reads the file afresh. The old one must not be used after.
func (p *pinned) advance(root, path string) (*pinned, error) {
	if p == nil {
		return readPinned(root, path)
	}
	if p.catchUp(path) {
		return p, nil
	}
	p.close()
	return readPinned(root, path)
}

// catchUp reads the lines appended to the file since it was
// taken. It reports false when the file changed in any other way (replaced,
// truncated, or its last line was unterminated), which needs a full read.
func (p *pinned) catchUp(path string) bool {
	st, err := p.f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	if err != nil || !os.SameFile(st, now) || st.Size() <= p.size || p.s.hasTail || p.s.Size != p.size {
		return false
	}
	size := st.Size()
	if err := p.s.readSized(io.NewSectionReader(p.f, p.size, size-p.size), p.size, size-p.size); err != nil {
		return false
	}
	p.s.rebuild()
	p.size = size
	return true
}

func (p *pinned) close() { p.f.Close() }

// appendLine appends line (without its newline) to path as one write(2)
// with O_APPEND, unless the file is no longer at (the open file the line
// was built for) or no longer size bytes long, in which case it reports
// false and writes nothing. A last line without its newline is repaired by
// prefixing "\n" in the same write; the file is never truncated or
// rewritten, and never created. The space is reserved first, so a full
// disk fails before a byte is written (ErrNoSpace) instead of leaving a
// piece of a line for pi to glue its next line onto.
func appendLine(root, path string, at *os.File, size int64, line []byte) (bool, error) {
	w, _, err := openIn(root, path, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return false, err
	}
	defer w.Close()
	st, err := at.Stat()
	if err != nil {
		return false, err
	}
	wst, err := w.Stat()
	if err != nil {
		return false, err
	}
	if !os.SameFile(st, wst) || wst.Size() != size {
		return false, nil // replaced or appended to since the line was built: read again
	}
	buf := make([]byte, 0, len(line)+2)
	if size > 0 {
		var last [1]byte
		if _, err := at.ReadAt(last[:], size-1); err != nil {
			return false, fmt.Errorf("%s: reading the last byte: %w", path, err)
		}
		if last[0] != '\n' {
			// Another writer may be in the middle of its write: give it time to
			// finish, and repair only a last line that stays unterminated.
			if !settled(at, size) {
				return false, nil
			}
			buf = append(buf, '\n')
		}
	}
	buf = append(append(buf, line...), '\n')
	if err := reserve(w, size, int64(len(buf))); err != nil {
		return false, err
	}
	n, err := writeFile(w, buf)
	if err != nil {
		if noSpace(err) && n == 0 {
			return false, &Error{Kind: ErrNoSpace, Err: err, Detail: path}
		}
		if n > 0 {
			return false, fmt.Errorf("%s: only %d of %d bytes appended: %w", path, n, len(buf), err)
		}
		return false, fmt.Errorf("%s: appending: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return false, fmt.Errorf("%s: appending: %w", path, err)
	}
	return true, nil
}

// writeFile writes b to f in one write(2); tests replace it to see a full disk.
var writeFile = func(f *os.File, b []byte) (int, error) { return f.Write(b) }

// reserve makes sure n bytes can be appended to f at offset off: it
// allocates them on disk without changing the file's size, so the write
// that follows cannot run out of space half-way. Where the file system
// cannot allocate ahead, it checks the free space instead.
func reserve(f *os.File, off, n int64) error {
	err := fallocate(f, off, n)
	if err == nil {
		return nil
	}
	if noSpace(err) {
		return &Error{Kind: ErrNoSpace, Err: err, Detail: f.Name()}
	}
	if free, ok := freeSpace(f); ok && free < n+64<<10 {
		return &Error{Kind: ErrNoSpace, Detail: f.Name()}
	}
	return nil // allocating ahead is not supported here: the free space will do
}

// fallocate allocates n bytes at off in f, keeping its size; tests replace it.
var fallocate = allocate

// settled reports whether f keeps its size for a short grace period.
func settled(f *os.File, size int64) bool {
	for range 10 {
		time.Sleep(10 * time.Millisecond)
		st, err := f.Stat()
		if err != nil || st.Size() != size {
			return false
		}
	}
	return true
}
