package sessions

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/piweb/piweb/internal/js"
)

// BytesRead counts the bytes of session files read to index them (full
// reads and appended bytes), for tests and benchmarks that check what a change costs.
var BytesRead atomic.Int64

// ReadLines reads the lines of s's entries from position from onward, in
// file order, calling fn with each entry's position, index record and line
// (fn must not keep line). An entry whose line changed is skipped; a file
// cut short while it is read ends the read with ErrChanged.
func ReadLines(s *Session, from int, fn func(pos int, e *Entry, line []byte) error) error {
	if from >= len(s.Entries) {
		return nil
	}
	r, err := s.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	seq := r.Sequential()
	defer seq.release()
	var buf []byte
	for k := max(0, from); k < len(s.Entries); k++ {
		line, err := seq.lineInto(buf, k, true, false)
		if err != nil {
			if errors.Is(err, ErrChanged) {
				continue
			}
			return err
		}
		if err := fn(k, &s.Entries[k], line); err != nil {
			return err
		}
		if cap(line) > cap(buf) && cap(line) <= 4<<20 {
			buf = line[:0]
		}
	}
	return nil
}

// ReadRawLine reads entry e's line from f into buf (grown when too
// short), as its bytes are: not yet made valid UTF-8 (js.ToValidUTF8
// does, before it is decoded); ErrChanged when the file is shorter.
func ReadRawLine(f io.ReaderAt, e *Entry, buf []byte) ([]byte, error) {
	if cap(buf) < e.Len {
		buf = make([]byte, e.Len)
	}
	line := buf[:e.Len]
	if _, err := f.ReadAt(line, e.Off); err != nil {
		if err == io.EOF {
			return nil, ErrChanged
		}
		return nil, err
	}
	return line, nil
}

// LineEntry reads the index record of one entry line of a version version
// file, as reading the whole file would make it (links aside): for a
// reader of one line without its tree (a search hit). ok is false for a
// line that is not an entry object. Version 1 files' entries get their ids
// from the file's order: not from one line.
func LineEntry(line []byte, version int) (e Entry, ok bool) {
	lr := newLineReader()
	i := js.SkipWS(line, 0)
	end, err := js.EachMemberNested(line, i, lr.set, lr.nest)
	if err != nil || js.SkipWS(line, end) != len(line) || isSessionType(lr.raw.typ) {
		return Entry{}, false
	}
	e = Entry{Len: len(line)}
	e.fill(&lr.raw, interner{}, &idArena{})
	if version < 3 && e.Role == roleHookMessage {
		e.Role = RoleCustom
	}
	return e, true
}
