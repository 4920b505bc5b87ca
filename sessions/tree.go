package sessions

import (
	"bytes"
	"io"
	"sync"

	"github.com/google/uuid"
	"github.com/piweb/piweb/internal/js"
)

// Len returns the number of entries (lines after the header that pi keeps).
func (s *Session) Len() int { return len(s.Entries) }

// Lookup returns the position of the entry with id, as pi resolves it (the last one with that id).
func (s *Session) Lookup(id string) (int, bool) {
	return s.byID.get(id)
}

// Parent returns the position of entry i's parent, or -1 for a root.
func (s *Session) Parent(i int) int { return s.parent[i] }

// Children returns the positions of entry i's children in pi's order. Do not modify.
func (s *Session) Children(i int) []int { return s.children.at(i) }

// Roots returns the positions of the root entries in file order. Do not modify.
func (s *Session) Roots() []int { return s.roots }

// Name returns the session name set by the last session_info entry.
func (s *Session) Name() string { return s.name }

// LabelOf returns the label in force for entry i ("" when none).
func (s *Session) LabelOf(i int) string {
	if l := s.LabelOn(i); l >= 0 {
		return s.labelText(l)
	}
	return ""
}

// LabelOn returns the position of the label entry in force for entry i, or
// -1 (an entry without id has none).
func (s *Session) LabelOn(i int) int {
	if id := s.Entries[i].ID; id != "" {
		return s.LabelEntry(id)
	}
	return -1
}

// labelText returns the label a label entry sets as pi shows it: the
// string, or JavaScript's String() of a non-string one (42, [object Object]).
func (s *Session) labelText(l int) string {
	e := &s.Entries[l]
	if e.Flags.Has(FlagLabelJSON) {
		return js.ToString([]byte(e.Text))
	}
	return e.Text
}

// Labels returns the labels in force by target id.
func (s *Session) Labels() map[string]string {
	out := make(map[string]string, len(s.labels))
	for id, l := range s.labels {
		out[id] = s.labelText(l)
	}
	return out
}

// LabelEntry returns the position of the label entry in force for target id, or -1.
func (s *Session) LabelEntry(id string) int {
	if l, ok := s.labels[id]; ok {
		return l
	}
	return -1
}

// LeafID returns the id of the entry pi resumes from, or "".
func (s *Session) LeafID() string {
	if i := s.Leaf(); i >= 0 {
		return s.Entries[i].ID
	}
	return ""
}

// Leaf returns the position of the entry pi resumes from (the last entry in the file), or -1.
func (s *Session) Leaf() int { return len(s.Entries) - 1 }

// EntryCount returns the number of distinct ids, as pi's getEntryCount counts.
func (s *Session) EntryCount() int {
	n := s.byID.n
	for i := range s.Entries {
		if s.Entries[i].ID == "" {
			return n + 1 // pi keys every id-less entry under undefined
		}
	}
	return n
}

// Path returns the positions from a root to entry leaf. It cannot loop:
// cycles were broken when the tree was built.
func (s *Session) Path(leaf int) []int {
	if leaf < 0 || leaf >= len(s.Entries) {
		return nil
	}
	n := 0
	for v := leaf; v >= 0; v = s.parent[v] {
		n++
	}
	path := make([]int, n)
	for v := leaf; v >= 0; v = s.parent[v] {
		n--
		path[n] = v
	}
	return path
}

// Places marks every entry: 0 off the path to the leaf, 1 on it, 2 on it
// but compacted away (before the entries its last compaction keeps: the
// model sees only the summary). Linear in the entries.
func (s *Session) Places() []uint8 {
	out := make([]uint8, len(s.Entries))
	path := s.Path(s.Leaf())
	_, kept := s.lastCompaction(path)
	for k, i := range path {
		out[i] = 1
		if k < kept {
			out[i] = 2
		}
	}
	return out
}

// lastCompaction returns where path's last compaction is in it (-1:
// none) and where the entries it keeps begin: its firstKeptEntryId, or
// the compaction itself when that is not on the path before it.
func (s *Session) lastCompaction(path []int) (comp, kept int) {
	comp = -1
	for k, i := range path {
		if s.Entries[i].Type == TypeCompaction {
			comp = k
		}
	}
	if comp < 0 {
		return -1, 0
	}
	first := s.Entries[path[comp]].FirstKept()
	for k, i := range path[:comp] {
		if id := s.Entries[i].ID; id != "" && id == first {
			return comp, k
		}
	}
	return comp, comp
}

// OnPath returns a set of the positions on the root-to-leaf path.
func (s *Session) OnPath(leaf int) map[int]bool {
	on := map[int]bool{}
	for _, p := range s.Path(leaf) {
		on[p] = true
	}
	return on
}

// Walk visits every entry in pre-order (roots in file order, children in
// pi's order) with its depth, without recursion. fn returns false to skip
// the entry's children.
func (s *Session) Walk(fn func(i, depth int) bool) {
	type item struct{ i, depth int }
	stack := make([]item, 0, 64)
	for r := len(s.roots) - 1; r >= 0; r-- {
		stack = append(stack, item{s.roots[r], 0})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !fn(it.i, it.depth) {
			continue
		}
		c := s.children.at(it.i)
		for k := len(c) - 1; k >= 0; k-- {
			stack = append(stack, item{c[k], it.depth + 1})
		}
	}
}

// SubtreeSize returns the number of entries under i, i included.
func (s *Session) SubtreeSize(i int) int {
	n := 0
	stack := []int{i}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n++
		stack = append(stack, s.children.at(v)...)
	}
	return n
}

// Reader reads entry lines from the session's file.
type Reader struct {
	s *Session
	f io.ReaderAt
	c io.Closer
}

// Open returns a Reader over the session's file.
func (s *Session) Open() (*Reader, error) {
	f, err := s.openFile()
	if err != nil {
		return nil, err
	}
	r := NewReader(s, f)
	r.c = f // closed with r
	return r, nil
}

// NewReader returns a Reader of s that reads its lines from f, which the
// caller closes (tests give one that counts or fails reads).
func NewReader(s *Session, f io.ReaderAt) *Reader { return &Reader{s: s, f: f} }

// Session returns the session r reads.
func (r *Reader) Session() *Session { return r.s }

// Sequential returns a Reader of the same file for reading many entries in
// file order: it reads through a window of the file, 1 MiB at a time,
// rather than one system call per line. Raw's checks still apply to every
// line. Closing it gives its window back for the next (r stays open).
func (r *Reader) Sequential() *Reader { return &Reader{s: r.s, f: &windowAt{f: r.f}} }

// Close closes the underlying file; a Sequential reader gives its window
// back instead (its file is its parent's).
func (r *Reader) Close() error {
	r.release()
	if r.c != nil {
		return r.c.Close()
	}
	return nil
}

// Raw returns the JSON line of entry i, checking it is still the same entry.
func (r *Reader) Raw(i int) ([]byte, error) { return r.line(i, false) }

// RawQuick returns the JSON line of entry i for readers of many lines: it
// checks the line still holds the entry's id, without validating all of it
// as Raw does (the index validated the line when it read it); a line where
// the id is not found as written (an escaped id, a changed file) gets Raw's check.
func (r *Reader) RawQuick(i int) ([]byte, error) { return r.line(i, true) }

// RawQuickInto is RawQuick reading into buf when it is large enough: the
// line returned may be buf's, for a reader of many lines that keeps none.
func (r *Reader) RawQuickInto(buf []byte, i int) ([]byte, error) {
	return r.lineInto(buf, i, true, false)
}

// line reads entry i's line and checks it is still the entry: quickly (its
// id where the index saw one) when quick, else by parsing its members.
func (r *Reader) line(i int, quick bool) ([]byte, error) { return r.lineInto(nil, i, quick, false) }

// lineInto is line reading into buf when it is large enough (the line
// returned may then be buf's), the line as written
// when asWritten (not decoded as pi decodes it: it may hold invalid UTF-8).
func (r *Reader) lineInto(buf []byte, i int, quick, asWritten bool) ([]byte, error) {
	e := &r.s.Entries[i]
	var b []byte
	if cap(buf) >= e.Len {
		b = buf[:e.Len]
	} else {
		b = make([]byte, e.Len)
	}
	if _, err := r.f.ReadAt(b, e.Off); err != nil {
		if err == io.EOF {
			return nil, ErrChanged
		}
		return nil, err
	}
	if !linesEntry(b, e, r.s.Header.Version, quick) {
		return nil, ErrChanged
	}
	if asWritten {
		return b, nil
	}
	return js.ToValidUTF8(b), nil // as pi's decoder reads it
}

// linesEntry reports whether b, read at e's place, is still e's line: it
// holds e's id (quick: as written, or else as JSON.parse reads it). The
// ids of a version 1 file are piweb's, not the line's: not checked.
func linesEntry(b []byte, e *Entry, version int, quick bool) bool {
	if e.ID == "" || version < 2 || quick && holdsID(b, e.ID) {
		return true
	}
	var got rawEntry
	_, err := js.EachMember(b, 0, got.set)
	return err == nil && js.Str(got.id) == e.ID
}

// holdsID reports whether line has an "id" member whose value is id as written.
func holdsID(line []byte, id string) bool {
	k := bytes.Index(line, []byte(`"id"`))
	return k >= 0 && bytes.Contains(line[k:min(len(line), k+len(id)+16)], []byte(`"`+id+`"`))
}

// Raw reads the JSON line of entry i (opening and closing the file).
func (s *Session) Raw(i int) ([]byte, error) {
	r, err := s.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Raw(i)
}

// windowSize is how much of a file a windowAt holds.
const windowSize = 1 << 20

// windowPool keeps windows between readers (Reader.release).
var windowPool = sync.Pool{New: func() any { return new([windowSize]byte) }}

// release gives a Sequential or Gathered reader's window back for another reader;
// r must not be read again.
func (r *Reader) release() {
	if w, ok := r.f.(*windowAt); ok && cap(w.buf) == windowSize {
		windowPool.Put((*[windowSize]byte)(w.buf[:windowSize]))
		w.buf = nil
	}
}

// windowAt serves reads that move forward through a file from a window of
// it, read 1 MiB at a time. A read the window cannot serve (a long line,
// the end of the file, a failed read) goes to the file as it is. A fixed
// window (a span Gathered read once) never moves: any read outside it goes
// to the file.
type windowAt struct {
	f     io.ReaderAt
	buf   []byte
	off   int64 // file offset of buf[0]
	fixed bool
}

func (w *windowAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= w.off && off+int64(len(p)) <= w.off+int64(len(w.buf)) {
		return copy(p, w.buf[off-w.off:]), nil
	}
	if w.fixed {
		return w.f.ReadAt(p, off)
	}
	const size = windowSize
	if len(p) <= size {
		if cap(w.buf) < size {
			w.buf = windowPool.Get().(*[windowSize]byte)[:]
		}
		n, _ := w.f.ReadAt(w.buf[:size], off)
		w.buf, w.off = w.buf[:n], off
		if n >= len(p) {
			return copy(p, w.buf), nil
		}
	}
	return w.f.ReadAt(p, off)
}

// Gathered returns a Reader of the same file for reading the entries at
// positions, in any order: when their lines lie close together (one span
// of at most a window, mostly theirs), the span is read at once rather
// than one system call per line; any other line is read from the file as
// r reads it. Raw's checks still apply to every line. Closing it gives its
// window back; r stays open.
func (r *Reader) Gathered(positions []int) *Reader {
	lo, hi, lines := int64(-1), int64(0), int64(0)
	for _, p := range positions {
		if p < 0 || p >= len(r.s.Entries) {
			continue
		}
		e := &r.s.Entries[p]
		if lo < 0 || e.Off < lo {
			lo = e.Off
		}
		hi = max(hi, e.Off+int64(e.Len))
		lines += int64(e.Len)
	}
	if lo < 0 || len(positions) < 2 || hi-lo > windowSize || hi-lo > 2*lines+64<<10 {
		return &Reader{s: r.s, f: r.f} // far apart: line by line
	}
	buf := windowPool.Get().(*[windowSize]byte)[:hi-lo]
	n, _ := r.f.ReadAt(buf, lo)
	return &Reader{s: r.s, f: &windowAt{f: r.f, buf: buf[:n], off: lo, fixed: true}}
}

// NewEntryID returns an id as pi's generateId makes one: the first 8 hex
// digits of a random UUID that taken says is not taken, or a whole UUID
// after 100 collisions.
func NewEntryID(taken func(id string) bool) string {
	for range 100 {
		id := uuid.NewString()[:8]
		if !taken(id) {
			return id
		}
	}
	return uuid.NewString()
}
