package writer

import (
	"os"

	"github.com/piweb/piweb/sessions"
)

// pinned is a session read from exactly the first Size bytes of an open
// file: what a writer builds its line from.
type pinned struct {
	Session *sessions.Session
	File    *os.File
	Size    int64
}

// readPinned opens path, a regular file inside root, and indexes the bytes it holds now.
func readPinned(root, path string) (*pinned, error) {
	f, st, err := sessions.OpenIn(root, path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	s, err := sessions.LoadOpen(f, st, path, root) // exactly st.Size() bytes
	if err != nil {
		f.Close()
		return nil, err
	}
	return &pinned{Session: s, File: f, Size: st.Size()}, nil
}

// Advance brings the pinned reading up to date with the file at path: lines
// appended since are read incrementally; anything else re-reads the file.
// A nil one reads the file afresh. The old one must not be used after.
func (p *pinned) Advance(root, path string) (*pinned, error) {
	if p == nil {
		return readPinned(root, path)
	}
	if p.catchUp(path) {
		return p, nil
	}
	p.Close()
	return readPinned(root, path)
}

// catchUp reads the lines appended to the file since it was
// taken. It reports false when the file changed in any other way (replaced,
// truncated, or its last line was unterminated), which needs a full read.
func (p *pinned) catchUp(path string) bool {
	st, err := p.File.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	if err != nil || !os.SameFile(st, now) || st.Size() <= p.Size || p.Session.Size != p.Size {
		return false
	}
	if !p.Session.ReadAppended(p.File, st.Size()) {
		return false
	}
	p.Size = st.Size()
	return true
}

// Close closes the pinned file.
func (p *pinned) Close() { p.File.Close() }
