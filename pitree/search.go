package pitree

import (
	"math"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// maxSearchText is the longest entry text a SearchIndex keeps, in bytes.
// Message content is cut to 200 UTF-16 units (at most 800 bytes), so only
// long unbounded fields exceed it (a branch summary, a custom message's
// string content, a bash command); those entries are read on each search.
const maxSearchText = 1024

// SearchIndex caches the lower-cased searchable text of a session's entries
// (pi's getSearchableText without the label), so that repeated tree searches
// do not read the file. It is filled on the first search that uses it, then
// covers appended entries as they come, and starts over when the session is
// reloaded or is another one. Its methods are safe for concurrent use; the
// zero value is ready to use.
type SearchIndex struct {
	mu    sync.Mutex
	epoch uint64  // the session's Epoch when indexed: its entries are a prefix of the session's while it lasts
	text  []byte  // the entries' texts, lower-cased, back to back
	end   []int32 // entry i's text is text[end[i-1]:end[i]] (from 0 for entry 0)
	read  []int32 // ascending positions matched by reading the line: unreadable when indexed, or too long
}

// Size returns the bytes the index holds (its capacity).
func (x *SearchIndex) Size() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return int64(cap(x.text) + 4*cap(x.end) + 4*cap(x.read))
}

// searchView is what a search uses of a SearchIndex: the covered prefix
// as it was. The index only appends (or starts new slices), so a view stays
// valid without the lock.
type searchView struct {
	text []byte
	end  []int32
	read []int32
}

// catchUp brings the index up to date with s, reading the entries it lacks
// through r, and returns a view of it.
func (x *SearchIndex) catchUp(s *sessions.Session, r *sessions.Reader) searchView {
	x.mu.Lock()
	defer x.mu.Unlock()
	// Another epoch (the file read again, or another session) means other entries.
	if x.epoch != s.Epoch() || len(x.end) > len(s.Entries) {
		x.epoch, x.text, x.end, x.read = s.Epoch(), nil, nil, nil
	}
	if len(x.end) < len(s.Entries) {
		x.end = slices.Grow(x.end, len(s.Entries)-len(x.end))
	}
	if len(s.Entries)-len(x.end) > 64 {
		// Many lines in file order: read them through one window, not one
		// system call each. Raw's checks still apply to every line.
		r = r.Sequential()
		defer r.Close()
	}
	var parts []string
	for i := len(x.end); i < len(s.Entries); i++ {
		var err error
		parts, err = searchParts(r, parts[:0], i)
		n := len(x.text)
		if err == nil {
			for k, p := range parts {
				if k > 0 {
					x.text = append(x.text, ' ')
				}
				x.text = appendLower(x.text, p)
			}
		}
		if err != nil || len(x.text)-n > maxSearchText || len(x.text) > math.MaxInt32 {
			x.text = x.text[:n]
			x.read = append(x.read, int32(i))
		}
		x.end = append(x.end, int32(len(x.text)))
	}
	return searchView{text: x.text, end: x.end, read: x.read}
}

// entry returns entry i's cached text; ok is false when the entry must be read.
func (v *searchView) entry(i int) ([]byte, bool) {
	if i >= len(v.end) {
		return nil, false
	}
	if len(v.read) > 0 {
		if _, found := slices.BinarySearch(v.read, int32(i)); found {
			return nil, false
		}
	}
	start := int32(0)
	if i > 0 {
		start = v.end[i-1]
	}
	return v.text[start:v.end[i]], true
}

// appendLower appends js.ToLower(s) (JavaScript's toLowerCase) to b, without allocating for ASCII.
func appendLower(b []byte, s string) []byte {
	for k := 0; k < len(s); k++ {
		if s[k] >= utf8.RuneSelf {
			return append(b, js.ToLower(s)...)
		}
	}
	n := len(b)
	b = append(b, s...)
	for k := n; k < len(b); k++ {
		if c := b[k]; 'A' <= c && c <= 'Z' {
			b[k] = c + 'a' - 'A'
		}
	}
	return b
}
