package sessions

import (
	"io"
	"os"
)

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

// ReadAppended indexes the lines appended to f (the file s was read from,
// now size bytes long) since s read it, changing s in place: only for a
// session nobody else reads (a writer's pinned reading, package writer).
// It reports false when s ended in an unterminated line or the read
// failed; then s must be read afresh.
func (s *Session) ReadAppended(f *os.File, size int64) bool {
	if s.hasTail || size <= s.Size {
		return false
	}
	if err := s.readSized(io.NewSectionReader(f, s.Size, size-s.Size), s.Size, size-s.Size); err != nil {
		return false
	}
	s.rebuild()
	return true
}
