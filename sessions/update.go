package sessions

import (
	"bytes"
	"io"
	"os"
	"slices"
	"sync/atomic"
)

// Delta says what an Update found.
type Delta struct {
	New      []int // positions of entries added by appended lines
	Reloaded bool  // the file was rewritten, truncated or replaced: everything was re-read
	OldLeaf  int   // the leaf before the update
}

// Changed reports whether the update found anything.
func (d Delta) Changed() bool { return d.Reloaded || len(d.New) > 0 }

// Next returns the session as its file is now. When the file only grew,
// just the appended bytes are parsed, into a new snapshot that shares
// with s what did not change; a rewrite, truncation or replacement reads
// the whole file again. s itself never changes, so its readers need no
// lock. When the file is as s read it, Next returns s.
func (s *Session) Next() (*Session, Delta, error) {
	d := Delta{OldLeaf: s.Leaf()}
	f, err := s.openFile()
	if err != nil {
		return s, d, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return s, d, err
	}
	// A file of the same size whose modification time moved was rewritten
	// in place (an append would have grown it): read it again.
	rewritten := st.Size() == s.Size && !s.hasTail && !st.ModTime().Equal(s.ModTime)
	switch {
	case rewritten || !s.sameBytes(f, st.Size()):
		return s.reload(f, d)
	case s.hasTail || s.Size <= s.headOff:
		// The last entry (or the header itself) came from an unterminated line
		// that may have grown: read the file again, unless its size is unchanged.
		if st.Size() == s.parsedEnd() {
			return s, d, nil
		}
		return s.reload(f, d)
	case st.Size() == s.Size:
		return s, d, nil
	case s.Header.Version < 2:
		return s.reload(f, d) // appended v1 compactions name their first kept line by index
	}
	if _, err := f.Seek(s.Size, io.SeekStart); err != nil {
		return s, d, err
	}
	n := s.fork()
	n.ModTime = st.ModTime()
	before := len(n.Entries)
	// Diagnostics about an unterminated last line go: it is read again from Size.
	n.Diags = slices.DeleteFunc(n.Diags, func(d Diagnostic) bool { return d.Line > n.lines })
	// Up to the size st gave, not EOF: ModTime must describe every byte
	// indexed, or a later same-size Next would take it for a rewrite.
	if err := n.readSized(io.LimitReader(f, st.Size()-n.Size), n.Size, st.Size()-n.Size); err != nil {
		return s, d, err
	}
	for i := before; i < len(n.Entries); i++ {
		d.New = append(d.New, i)
	}
	linked := n.link(before)
	if !linked {
		n.rebuild()
	}
	if len(d.New) > 0 || n.Size != s.Size {
		n.gen = NewGen()
	}
	if prev := s.meta; linked && prev != nil {
		n.meta = &metaCache{gen: n.gen, m: n.extendMeta(prev.m, before)}
	} else {
		n.cacheMeta()
	}
	return n, d, nil
}

// fork returns a copy of s to extend: appending to it never writes what
// s's readers read (see cow.go).
//
// The slices an append grows (Entries, parent, roots) share their arrays
// with s, which reads only up to its own lengths. Only the first snapshot
// made from s may go on writing past them, and with s's interner; any other
// (a second Next of s) gets its own copies, so siblings never write the
// same slots.
func (s *Session) fork() *Session {
	n := *s
	n.extended = new(atomic.Bool)
	if s.extended == nil || !s.extended.CompareAndSwap(false, true) {
		n.Entries = slices.Clip(s.Entries)
		n.parent = slices.Clip(s.parent)
		n.roots = slices.Clip(s.roots)
		n.inter = interner{}
	}
	n.Diags = slices.Clone(s.Diags) // pruned in place by Next and rebuild
	n.v1lines = slices.Clone(s.v1lines)
	n.tail = slices.Clone(s.tail) // setTail writes it in place
	n.byID = s.byID.fork()
	n.children = s.children.fork()
	n.labelsOwned = false
	n.meta = nil
	return &n
}

// parsedEnd returns the offset just past the last byte parsed, including an
// unterminated last line that produced an entry or the header.
func (s *Session) parsedEnd() int64 {
	switch {
	case s.hasTail:
		e := &s.Entries[len(s.Entries)-1]
		return e.Off + int64(e.Len)
	case s.Size <= s.headOff:
		return s.headOff + int64(s.Header.Len)
	}
	return s.Size
}

// sameBytes reports whether the bytes before Size are still those indexed,
// by checking the file is not shorter and still ends its last indexed line as before.
func (s *Session) sameBytes(f *os.File, size int64) bool {
	if size < s.Size {
		return false
	}
	if len(s.tail) == 0 {
		return true
	}
	b := make([]byte, len(s.tail))
	if _, err := f.ReadAt(b, s.Size-int64(len(b))); err != nil {
		return false
	}
	if !bytes.Equal(b, s.tail) {
		return false
	}
	// The header must be unchanged too (a different file renamed into place).
	if len(s.head) > 0 {
		h := make([]byte, len(s.head))
		if _, err := f.ReadAt(h, s.headOff); err != nil || !bytes.Equal(h, s.head) {
			return false
		}
	}
	return true
}

// reload reads the whole file again into a new session.
func (s *Session) reload(f *os.File, d Delta) (*Session, Delta, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return s, d, err
	}
	st, err := f.Stat()
	if err != nil {
		return s, d, err
	}
	fresh, err := LoadOpen(f, st, s.File, s.root)
	if err != nil {
		return s, d, err
	}
	d.Reloaded = true
	return fresh, d, nil
}

// link attaches entries from position `from` onward to the tree. It
// reports false when something needs a full rebuild: a duplicate id, an
// earlier orphan whose parent just arrived, or a possible cycle.
func (s *Session) link(from int) bool {
	for i := from; i < len(s.Entries); i++ {
		e := &s.Entries[i]
		if e.ID != "" {
			if _, dup := s.byID.get(e.ID); dup {
				return false
			}
			if s.adopts(e.ID) {
				return false
			}
			s.byID.add(e.ID, i)
		}
		s.parent = append(s.parent, s.resolveParent(i, true))
		s.children.grow()
		s.applyState(i)
		if p := s.parent[i]; p >= 0 {
			s.insertChild(p, i)
		} else {
			s.roots = append(s.roots, i)
		}
	}
	return true
}

// adopts reports whether an existing orphan names id as its parent.
func (s *Session) adopts(id string) bool {
	for _, r := range s.roots {
		if s.Entries[r].ParentID == id {
			return true
		}
	}
	return false
}

// insertChild puts child c under p at its place in pi's order, in a new
// list: the old one may be another snapshot's.
func (s *Session) insertChild(p, c int) {
	kids := s.children.at(p)
	k := len(kids)
	for k > 0 && s.cmpSiblings(c, kids[k-1]) < 0 {
		k--
	}
	nk := make([]int, len(kids)+1)
	copy(nk, kids[:k])
	nk[k] = c
	copy(nk[k+1:], kids[k:])
	s.children.set(p, nk)
}
