package share

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/secrets"
	"github.com/piweb/piweb/sessions"
)

// ExportTo is Export writing the lines to w one at a time, so a long branch
// is never held whole.
func ExportTo(w io.Writer, s *sessions.Session, leafID string, opts Redact) error {
	leaf, err := s.LeafPos(leafID)
	if err != nil {
		return err
	}
	if leaf < 0 {
		return &sessions.Error{Kind: sessions.ErrNoEntry, Entry: leafID, Detail: "the session has no entries"}
	}
	if s.Entries[leaf].ID == "" {
		return &sessions.Error{Kind: sessions.ErrNoEntry, Entry: leafID, Detail: fmt.Sprintf("the last entry has no id (line %d)", s.Entries[leaf].Line)}
	}
	r, err := s.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	header := js.Object{{K: "type", V: json.RawMessage(`"session"`)}, {K: "version", V: json.RawMessage("3")},
		{K: "id", V: js.Quote(s.Header.ID)}, {K: "timestamp", V: js.Quote(js.NowISO())}, {K: "cwd", V: js.Quote(s.Header.Cwd)}}
	if _, err := w.Write(append(header.JSON(), '\n')); err != nil {
		return err
	}
	parent := json.RawMessage("null")
	for _, i := range s.Path(leaf) {
		e := &s.Entries[i]
		raw, err := r.Raw(i)
		if err != nil {
			return err
		}
		line := v3Line(s, i, raw)
		if len(line) == 0 || line[0] != '{' {
			return fmt.Errorf("line %d: an entry on the path is not a JSON object", e.Line)
		}
		line = redactLine(s, e, js.SetMember(line, "parentId", parent), opts)
		if _, err := w.Write(append(line[:len(line):len(line)], '\n')); err != nil {
			return err
		}
		parent = js.Quote(e.ID)
	}
	return nil
}

// Whole lays out every entry of the session, in file order and with its own
// parent, as a Layout redacted as opts asks: for shares of the whole tree
// (an HTML page with the tree beside it). Its header keeps the session's
// id and folder; lines that are not entries are left out.
func Whole(s *sessions.Session, opts Redact) (*Layout, error) {
	return whole(s, opts, nil)
}

// WholeTo is Whole writing the lines (the header, then the entries) to w as
// it makes them instead of keeping them: the Layout it returns holds no
// entries, so a long session is never held whole.
func WholeTo(w io.Writer, s *sessions.Session, opts Redact) (*Layout, error) {
	return whole(s, opts, w)
}

func whole(s *sessions.Session, opts Redact, w io.Writer) (*Layout, error) {
	r, err := s.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b := &Layout{ID: s.Header.ID}
	b.Header = js.Object{{K: "type", V: json.RawMessage(`"session"`)}, {K: "version", V: json.RawMessage("3")},
		{K: "id", V: js.Quote(s.Header.ID)}, {K: "timestamp", V: js.Quote(js.NowISO())}, {K: "cwd", V: js.Quote(s.Header.Cwd)}}.JSON()
	if w != nil {
		if _, err := w.Write(append(b.Header[:len(b.Header):len(b.Header)], '\n')); err != nil {
			return nil, err
		}
	}
	for i := range s.Entries {
		e := &s.Entries[i]
		raw, err := r.Raw(i)
		if err != nil {
			return nil, err
		}
		line := v3Line(s, i, raw)
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		line = redactLine(s, e, line, opts)
		if e.Type == sessions.TypeSessionInfo {
			name, _ := js.Lookup(line, "name")
			b.Name = js.Trim(js.Str(name))
		}
		if w == nil {
			b.Entries = append(b.Entries, Line{ID: e.ID, Type: e.Type, Role: e.Role, JSON: line})
		} else if _, err := w.Write(append(line[:len(line):len(line)], '\n')); err != nil {
			return nil, err
		}
	}
	if l := s.Leaf(); l >= 0 {
		b.Leaf = s.Entries[l].ID
	}
	return b, nil
}

// Title names a share of s laid out as b: the session name in force on the
// branch, else the session's name, else its first message, redacted as opts asks.
func Title(s *sessions.Session, b *Layout, opts Redact) string {
	if b.Name != "" {
		return b.Name // already redacted
	}
	t := cmp.Or(s.Name(), s.FirstMessage, "pi session")
	if opts.Secrets {
		t = secrets.Redact(t)
	}
	return t
}

// v3Line returns entry i's line of s as it reads in version 3: for older files,
// the in-memory migration piweb applies (ids for v1, hookMessage renamed).
func v3Line(s *sessions.Session, i int, raw []byte) []byte {
	line := js.TrimSpace(raw)
	v := s.Header.Version
	if v >= 3 || len(line) == 0 || line[0] != '{' {
		return line
	}
	e := &s.Entries[i]
	if v < 2 {
		line = js.SetMember(line, "id", js.Quote(e.ID))
		parent := json.RawMessage("null")
		if e.ParentID != "" {
			parent = js.Quote(e.ParentID)
		}
		line = js.SetMember(line, "parentId", parent)
		if e.Type == sessions.TypeCompaction {
			if raw, ok := js.Lookup(line, "firstKeptEntryIndex"); ok && len(raw) > 0 && (raw[0] == '-' || js.IsDigit(raw[0])) {
				if k := e.FirstKept(); k != "" {
					line = js.SetMember(line, "firstKeptEntryId", js.Quote(k))
				}
				line = js.DelMember(line, "firstKeptEntryIndex")
			}
		}
	}
	return sessions.RenameHookMessage(line)
}
