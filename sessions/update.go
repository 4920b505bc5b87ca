package sessions

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
)

// Delta says what an Update found.
type Delta struct {
	New      []int // positions of entries added by appended lines
	Reloaded bool  // the file was rewritten, truncated or replaced: everything was re-read
	OldLeaf  int   // the leaf before the update
}

// Changed reports whether the update found anything.
func (d Delta) Changed() bool { return d.Reloaded || len(d.New) > 0 }

// Update brings the index up to date with the file: when the file only grew,
// just the appended bytes are parsed; a rewrite, truncation or replacement
// makes it re-read the whole file. The receiver is modified in place, so
// callers that share a Session must serialise Update with readers.
func (s *Session) Update() (Delta, error) { return s.update(true) }

// errNeedsReload is returned by update(false) when only a full re-read will do.
var errNeedsReload = errors.New("the file must be read again in full")

// update is Update; with reload false it reports errNeedsReload instead of
// re-reading the file, so a caller holding a lock can re-read outside it.
func (s *Session) update(reload bool) (d Delta, err error) {
	defer func() {
		if err == nil {
			if d.Changed() && !d.Reloaded { // a reload brought a fresh generation
				s.gen = gens.Add(1)
			}
			s.cacheMeta()
		}
	}()
	d = Delta{OldLeaf: s.Leaf()}
	f, err := s.openFile()
	if err != nil {
		return d, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return d, err
	}
	// A file of the same size whose modification time moved was rewritten
	// in place (an append would have grown it): re-read it.
	rewritten := st.Size() == s.Size && !s.hasTail && !st.ModTime().Equal(s.ModTime)
	if rewritten || !s.sameBytes(f, st.Size()) {
		if !reload {
			return d, errNeedsReload
		}
		return s.reload(f, d)
	}
	s.ModTime = st.ModTime()
	if s.hasTail || s.Size <= s.headOff {
		// The last entry (or the header itself) came from an unterminated line
		// that may have grown: re-read the file, unless its size is unchanged.
		if st.Size() == s.parsedEnd() {
			return d, nil
		}
		if !reload {
			return d, errNeedsReload
		}
		return s.reload(f, d)
	}
	if st.Size() == s.Size {
		return d, nil
	}
	if _, err := f.Seek(s.Size, io.SeekStart); err != nil {
		return d, err
	}
	before := len(s.Entries)
	// Diagnostics about the unterminated last line go: it is read again from Size.
	s.Diags = slices.DeleteFunc(s.Diags, func(d Diagnostic) bool { return d.Line > s.lines })
	s.v1lines = slices.DeleteFunc(s.v1lines, func(v v1line) bool { return v.line > s.lines })
	// Up to the size st gave, not EOF: ModTime must describe every byte
	// indexed, or a later same-size Update would take it for a rewrite.
	if err := s.readSized(io.LimitReader(f, st.Size()-s.Size), s.Size, st.Size()-s.Size); err != nil {
		return d, err
	}
	for i := before; i < len(s.Entries); i++ {
		d.New = append(d.New, i)
	}
	if s.Header.Version < 2 {
		s.resolveV1Kept() // appended v1 compactions name their first kept line by index
	}
	if !s.link(before) {
		s.rebuild()
	}
	return d, nil
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

// reload re-reads the whole file into s.
func (s *Session) reload(f *os.File, d Delta) (Delta, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return d, err
	}
	st, err := f.Stat()
	if err != nil {
		return d, err
	}
	fresh, err := loadOpen(f, st, s.File, s.root)
	if err != nil {
		return d, err
	}
	*s = *fresh
	d.Reloaded = true
	return d, nil
}

// link attaches entries from position `from` onward to the tree. It
// reports false when something needs a full rebuild: a duplicate id, an
// earlier orphan whose parent just arrived, or a possible cycle.
func (s *Session) link(from int) bool {
	for i := from; i < len(s.Entries); i++ {
		e := &s.Entries[i]
		if e.ID != "" {
			if _, dup := s.byID[e.ID]; dup {
				return false
			}
			if s.adopts(e.ID) {
				return false
			}
			s.byID[e.ID] = i
		}
		s.parent = append(s.parent, s.resolveParent(i, true))
		s.children = append(s.children, nil)
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

// insertChild puts child c under p at its place in pi's order.
func (s *Session) insertChild(p, c int) {
	kids := s.children[p]
	k := len(kids)
	for k > 0 && s.cmpSiblings(c, kids[k-1]) < 0 {
		k--
	}
	kids = append(kids, 0)
	copy(kids[k+1:], kids[k:])
	kids[k] = c
	s.children[p] = kids
}
