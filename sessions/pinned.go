package sessions

import (
	"io"
	"os"
)

// Pinned is a session read from exactly the first Size bytes of an open
// file: what a writer builds its line from (see the writer package).
type Pinned struct {
	Session *Session
	File    *os.File
	Size    int64
	root    string // the folder the file must lie in (see OpenIn)
}

// Verified returns s's file, open, and the size s indexed, when the file at
// s.File is still exactly what s indexed: the same size and modification
// time, the same header and last indexed bytes, and the lines of the last
// entry and of the entries named by ids (when s has them) where s has them,
// with those ids. Otherwise, or when s holds no index, it returns nil and
// the writer reads the file again. pi only appends; a rewrite of the same
// size moves the modification time, which Update also relies on.
func (s *Session) Verified(root string, ids []string) (*os.File, int64) {
	if len(s.Entries) == 0 || s.hasTail || s.Header.ID == "" || len(s.head) == 0 || s.byID.base == nil {
		return nil, 0
	}
	f, st, err := OpenIn(root, s.File, os.O_RDONLY)
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

// ReadPinned opens path, a regular file inside root, and indexes the bytes it holds now.
func ReadPinned(root, path string) (*Pinned, error) {
	f, st, err := OpenIn(root, path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	s, err := loadOpen(f, st, path, root) // exactly st.Size() bytes
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Pinned{Session: s, File: f, Size: st.Size(), root: root}, nil
}

// Advance brings the pinned reading up to date with the file at path: lines
// appended since are read incrementally; anything else re-reads the file.
// A nil one reads the file afresh. The old one must not be used after.
func (p *Pinned) Advance(root, path string) (*Pinned, error) {
	if p == nil {
		return ReadPinned(root, path)
	}
	if p.catchUp(path) {
		return p, nil
	}
	p.Close()
	return ReadPinned(root, path)
}

// catchUp reads the lines appended to the file since it was
// taken. It reports false when the file changed in any other way (replaced,
// truncated, or its last line was unterminated), which needs a full read.
func (p *Pinned) catchUp(path string) bool {
	st, err := p.File.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	if err != nil || !os.SameFile(st, now) || st.Size() <= p.Size || p.Session.hasTail || p.Session.Size != p.Size {
		return false
	}
	size := st.Size()
	if err := p.Session.readSized(io.NewSectionReader(p.File, p.Size, size-p.Size), p.Size, size-p.Size); err != nil {
		return false
	}
	p.Session.rebuild()
	p.Size = size
	return true
}

// Close closes the pinned file.
func (p *Pinned) Close() { p.File.Close() }
