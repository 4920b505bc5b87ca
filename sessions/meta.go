package sessions

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/piweb/piweb/internal/js"
)

// maxFirstMessage bounds the bytes of the first message a Meta keeps: the
// list shows a line of it, and the library keeps a Meta per session.
const maxFirstMessage = 2000

// Meta summarises one session for the sessions list.
type Meta struct {
	Key           string    `json:"key"` // the file's address in the library: the session id, or for a copy of a session the id and a hash of its path
	ID            string    `json:"id"`  // the session id from the header
	File          string    `json:"file"`
	CopyOf        string    `json:"copyOf,omitempty"` // the key of the file that holds the same session id under pi's own name
	Project       string    `json:"project"`          // the project folder name under the root
	Cwd           string    `json:"cwd"`
	Name          string    `json:"name,omitempty"`
	FirstMessage  string    `json:"firstMessage"`
	Version       int       `json:"version"`
	Created       time.Time `json:"created"`
	Modified      time.Time `json:"modified"` // last user/assistant activity, as pi sorts
	FileModified  time.Time `json:"fileModified"`
	Size          int64     `json:"size"`
	Entries       int       `json:"entries"`
	Messages      int       `json:"messages"`
	Branches      int       `json:"branches"` // entries with more than one child
	Leaves        int       `json:"leaves"`   // entries without children
	Tokens        int64     `json:"tokens"`
	Cost          float64   `json:"cost"`
	Models        []string  `json:"models"`
	ParentSession string    `json:"parentSession,omitempty"`
	ParentID      string    `json:"parentId,omitempty"`  // the parent session's id, when it is in the library
	ParentKey     string    `json:"parentKey,omitempty"` // the parent session's key, when it is in the library
	Diagnostics   int       `json:"diagnostics"`
	Leaf          string    `json:"leaf,omitempty"`         // the id of the entry pi resumes from
	Unterminated  bool      `json:"unterminated,omitempty"` // the last entry came from a line without its newline (a write under way)
}

// Problems counts the diagnostics that are problems with the file: all but
// the note that it is in an old format (which is no fault of the file).
func (s *Session) Problems() int {
	n := 0
	for _, d := range s.Diags {
		if d.Kind != DiagOldVersion {
			n++
		}
	}
	return n
}

// cacheMeta stores the current Meta. Only the code that changes the session
// calls it (under the library's write lock), so Meta itself never writes.
func (s *Session) cacheMeta() {
	s.meta = &metaCache{gen: s.gen, m: s.computeMeta()}
}

// metaCache holds the Meta of one generation, so listing sessions does not walk every entry each time.
type metaCache struct {
	gen uint64
	m   Meta
}

// computeMeta walks the entries to build the summary.
func (s *Session) computeMeta() Meta {
	m := Meta{ID: s.Header.ID, File: s.File, Cwd: s.Header.Cwd, Name: s.Name(), FirstMessage: s.FirstMessage,
		Version: s.Header.Version, FileModified: s.ModTime, Size: s.Size, Entries: len(s.Entries),
		ParentSession: s.Header.ParentSession, Diagnostics: s.Problems(), Models: []string{}, Leaf: strings.Clone(s.LeafID()),
		Unterminated: s.hasTail}
	if m.FirstMessage == "" {
		m.FirstMessage = "(no messages)"
	}
	m.Project = ProjectOf(s.File)
	if t := js.ParseDate(s.Header.Timestamp); t != NoTime {
		m.Created = time.UnixMilli(t).UTC()
	}
	var last int64
	seen := map[string]bool{}
	for i := range s.Entries {
		e := &s.Entries[i]
		switch n := len(s.children.at(i)); {
		case n == 0:
			m.Leaves++
		case n > 1:
			m.Branches++
		}
		m.Tokens += e.Tokens
		m.Cost += e.Cost
		if e.Type != TypeMessage {
			continue
		}
		m.Messages++
		if (e.Role == RoleUser || e.Role == RoleAssistant) && e.Time != NoTime && e.Time > last {
			last = e.Time
		}
		if mod := e.Model(); mod != "" && !seen[mod] {
			seen[mod] = true
			m.Models = append(m.Models, mod)
		}
	}
	// The last activity, or when the file was made if that is later: a
	// fork's copied entries keep their old times, but a fork made a minute
	// ago was active a minute ago.
	switch {
	case last > 0 && time.UnixMilli(last).After(m.Created):
		m.Modified = time.UnixMilli(last).UTC()
	case !m.Created.IsZero():
		m.Modified = m.Created
	default:
		m.Modified = s.ModTime
	}
	m.FirstMessage = firstMessageOf(m.FirstMessage)
	return m
}

// extendMeta returns prev, the summary of the snapshot s came from, with
// the entries from position from on added: what an append changes, in
// time of the appended entries (s's tree was linked, not rebuilt).
func (s *Session) extendMeta(prev Meta, from int) Meta {
	m := prev
	m.Models = slices.Clone(prev.Models)
	m.Name, m.Size, m.FileModified, m.Entries = s.Name(), s.Size, s.ModTime, len(s.Entries)
	m.Leaf, m.Unterminated, m.Diagnostics = strings.Clone(s.LeafID()), s.hasTail, s.Problems()
	if s.FirstMessage != "" && (prev.FirstMessage == "(no messages)" || prev.FirstMessage == "") {
		m.FirstMessage = firstMessageOf(s.FirstMessage)
	}
	// Each parent's children before the new entries, then one more at
	// each new child, in file order: a leaf stops being one, a second
	// child makes a branch point.
	kids := map[int]int{}
	for i := from; i < len(s.Entries); i++ {
		if p := s.parent[i]; p >= 0 && p < from {
			if _, ok := kids[p]; !ok {
				n := 0
				for _, c := range s.Children(p) {
					if c < from {
						n++
					}
				}
				kids[p] = n
			}
		}
	}
	last := int64(math.MinInt64)
	for i := from; i < len(s.Entries); i++ {
		m.Leaves++
		if p := s.parent[i]; p >= 0 {
			kids[p]++
			switch kids[p] {
			case 1:
				m.Leaves--
			case 2:
				m.Branches++
			}
		}
		e := &s.Entries[i]
		m.Tokens += e.Tokens
		m.Cost += e.Cost
		if e.Type != TypeMessage {
			continue
		}
		m.Messages++
		if (e.Role == RoleUser || e.Role == RoleAssistant) && e.Time != NoTime && e.Time > last {
			last = e.Time
		}
		if mod := e.Model(); mod != "" && !slices.Contains(m.Models, mod) {
			m.Models = append(m.Models, mod)
		}
	}
	if last != math.MinInt64 {
		if t := time.UnixMilli(last).UTC(); t.After(m.Modified) {
			m.Modified = t
		}
	}
	return m
}

// firstMessageOf is a first message as the list keeps it (see maxFirstMessage).
func firstMessageOf(s string) string {
	if len(s) > maxFirstMessage {
		if cut := js.UTF16Prefix(s, maxFirstMessage/2); cut != s {
			return cut + "…"
		}
	}
	return s
}

// Meta computes the session's summary.
func (s *Session) Meta() Meta {
	if c := s.meta; c != nil && c.gen == s.gen {
		m := c.m
		m.Models = slices.Clone(m.Models)
		return m
	}
	return s.computeMeta()
}

// ProjectOf returns the project of the session file at path: the name of its folder.
func ProjectOf(path string) string { return filepath.Base(filepath.Dir(path)) }
