package share

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// Layout is a session laid out for a share: a root-to-leaf path as the new
// session pi's createBranchedSession makes of it (Branch), or every entry of
// the session (Whole).
type Layout struct {
	ID      string          // the new session's id (UUIDv7)
	Header  json.RawMessage // the new header line, without parentSession
	Leaf    string          // id of the new file's last entry, where pi resumes it: the source entry the path ends at, or the last label recreated after it
	Name    string          // the session name in force at the end of the path ("" for none)
	Entries []Line          // the path's entries without labels, in order
	Labels  []Line          // the label entries recreated after the path, in pi's order
}

// Line is one entry line of a Layout.
type Line struct {
	ID    string          // entry id
	Type  string          // entry type
	Role  string          // message role, for type message
	Label string          // the label in force on this entry ("" for none); for label entries, the label they set
	JSON  json.RawMessage // the line as written to the new file, redacted if asked
}

// Branch lays out s's path to entry leafID ("" for pi's leaf) as a new session, redacted as opts asks.
func Branch(s *sessions.Session, leafID string, opts Redact) (*Layout, error) {
	return branch(s, leafID, opts, nil)
}

// BranchTo is Branch writing the new session's lines to w as it makes them
// (header, path, labels) instead of keeping them: the Layout it returns
// holds no line (JSON is nil), so a long branch is never held whole.
func BranchTo(w io.Writer, s *sessions.Session, leafID string, opts Redact) (*Layout, error) {
	return branch(s, leafID, opts, w)
}

func branch(s *sessions.Session, leafID string, opts Redact, w io.Writer) (*Layout, error) {
	// A fresh header, the path without its label entries, then one label entry
	// per label in force on the path. Every byte of an entry's line is kept but
	// its parentId (and a compaction's firstKeptEntryId that named a dropped
	// label, which moves to the entry after it, as pi does). Older files are
	// migrated to version 3 on the way, as pi would migrate them.
	leaf, err := s.LeafPos(leafID)
	if err != nil {
		return nil, err
	}
	if leaf < 0 {
		return nil, &sessions.Error{Kind: sessions.ErrNoEntry, Entry: leafID, Detail: "the session has no entries"}
	}
	if s.Entries[leaf].ID == "" {
		return nil, &sessions.Error{Kind: sessions.ErrNoEntry, Entry: leafID, Detail: fmt.Sprintf("the last entry has no id (line %d)", s.Entries[leaf].Line)}
	}
	r, err := s.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()

	sid, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	cwd, err := piCwd(s.Header.Cwd)
	if err != nil {
		return nil, err
	}
	b := &Layout{ID: sid.String(), Leaf: s.Entries[leaf].ID}
	b.Header = js.Object{{K: "type", V: json.RawMessage(`"session"`)}, {K: "version", V: json.RawMessage("3")},
		{K: "id", V: js.Quote(b.ID)}, {K: "timestamp", V: js.Quote(js.NowISO())}, {K: "cwd", V: js.Quote(cwd)}}.JSON()
	// keep keeps a line, or writes it to w.
	keep := func(line json.RawMessage) (json.RawMessage, error) {
		if w == nil {
			return line, nil
		}
		if _, err := w.Write(append(line[:len(line):len(line)], '\n')); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if _, err := keep(b.Header); err != nil {
		return nil, err
	}

	// The path without labels, re-chained (pi's createBranchedSession).
	replacement := map[string]string{} // dropped label id -> the kept entry after it
	var pending []string
	parent := json.RawMessage("null")
	ids := map[string]bool{}
	for _, i := range s.Path(leaf) {
		e := &s.Entries[i]
		if e.Type == sessions.TypeLabel {
			pending = append(pending, e.ID)
			continue
		}
		for _, l := range pending {
			replacement[l] = e.ID
		}
		pending = pending[:0]
		raw, err := r.Raw(i)
		if err != nil {
			return nil, err
		}
		line := v3Line(s, i, raw)
		if len(line) == 0 || line[0] != '{' {
			return nil, fmt.Errorf("line %d: an entry on the path is not a JSON object", e.Line)
		}
		line = js.SetMember(line, "parentId", parent)
		if k := e.FirstKept(); k != "" && k != e.ID {
			if to, ok := replacement[k]; ok {
				line = js.SetMember(line, "firstKeptEntryId", js.Quote(to))
			}
		}
		line = redactLine(s, e, line, opts)
		if e.Type == sessions.TypeSessionInfo {
			name, _ := js.Lookup(line, "name")
			b.Name = js.Trim(js.Str(name))
		}
		if line, err = keep(line); err != nil {
			return nil, err
		}
		b.Entries = append(b.Entries, Line{ID: e.ID, Type: e.Type, Role: e.Role, JSON: line})
		parent = js.Quote(e.ID)
		ids[e.ID] = true
	}

	// One label entry per label in force on the kept path, chained after it.
	labels := map[string]string{}
	for _, target := range labelOrder(s) {
		if !ids[target] {
			continue
		}
		raw, err := r.Raw(s.LabelEntry(target))
		if err != nil {
			return nil, err
		}
		id := sessions.NewEntryID(func(id string) bool { return ids[id] })
		ids[id] = true
		o := js.Object{{K: "type", V: json.RawMessage(`"label"`)}, {K: "id", V: js.Quote(id)}, {K: "parentId", V: parent}}
		if ts, ok := js.Lookup(raw, "timestamp"); ok {
			o = append(o, js.KV{K: "timestamp", V: ts})
		}
		label, _ := js.Lookup(raw, "label")
		o = append(o, js.KV{K: "targetId", V: js.Quote(target)}, js.KV{K: "label", V: label})
		line := o.JSON()
		if opts.Secrets {
			line = redactStrings(line)
		}
		label, _ = js.Lookup(line, "label")
		text := js.ToString(label) // a non-string label as pi shows it, as LabelOf does
		labels[target] = text
		if line, err = keep(line); err != nil {
			return nil, err
		}
		b.Labels = append(b.Labels, Line{ID: id, Type: sessions.TypeLabel, Label: text, JSON: line})
		parent = js.Quote(id)
	}
	for k := range b.Entries {
		b.Entries[k].Label = labels[b.Entries[k].ID]
	}
	switch { // a path ending at a label entry keeps it only as a label recreated after the path
	case len(b.Entries) > 0:
		b.Leaf = b.Entries[len(b.Entries)-1].ID
	case len(b.Labels) > 0:
		b.Leaf = b.Labels[len(b.Labels)-1].ID
	}
	return b, nil
}

// labelOrder returns the targets of the labels in force in the order pi's
// labelsById Map iterates them: by when each was set, counting from its last
// clear (setting an existing key keeps its place; a clear forgets it).
func labelOrder(s *sessions.Session) []string {
	since := map[string]int{}
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Type != sessions.TypeLabel || e.Target == "" {
			continue
		}
		if !e.Flags.Has(sessions.FlagLabelSet) {
			delete(since, e.Target)
		} else if _, ok := since[e.Target]; !ok {
			since[e.Target] = i
		}
	}
	out := make([]string, 0, len(since))
	for t := range since {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b string) int { return since[a] - since[b] })
	return out
}

// JSONL returns the branch as the lines of a session file.
func (b *Layout) JSONL() []byte {
	return b.jsonl(b.Header)
}

func (b *Layout) jsonl(header []byte) []byte {
	n := len(header) + 1
	for _, e := range b.Entries {
		n += len(e.JSON) + 1
	}
	for _, e := range b.Labels {
		n += len(e.JSON) + 1
	}
	out := make([]byte, 0, n)
	out = append(append(out, header...), '\n')
	for _, e := range b.Entries {
		out = append(append(out, e.JSON...), '\n')
	}
	for _, e := range b.Labels {
		out = append(append(out, e.JSON...), '\n')
	}
	return out
}

// piCwd resolves a header cwd as pi's resolvePath does: "~" expands to the
// home directory and relative paths (or none) resolve against the current one.
func piCwd(cwd string) (string, error) {
	if cwd == "~" || strings.HasPrefix(cwd, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cwd = filepath.Join(home, strings.TrimPrefix(cwd[1:], "/"))
	}
	return filepath.Abs(cwd)
}
