package sessions

import (
	"encoding/json"
	"fmt"

	"github.com/piweb/piweb/internal/js"
)

// Export returns the branch to entry leafID ("" for pi's leaf) as pi's own
// /export file.jsonl writes it, redacted as opts asks: a header with the
// session's id and folder and the time of the export, then the entries of
// the path from the root, labels included, each re-chained to the one
// before it. pi's /import takes the file as the same session.
func Export(s *Session, leafID string, opts Redact) ([]byte, error) {
	leaf, err := s.leafPos(leafID)
	if err != nil {
		return nil, err
	}
	if leaf < 0 {
		return nil, &Error{Kind: ErrNoEntry, Entry: leafID, Detail: "the session has no entries"}
	}
	if s.Entries[leaf].ID == "" {
		return nil, &Error{Kind: ErrNoEntry, Entry: leafID, Detail: fmt.Sprintf("the last entry has no id (line %d)", s.Entries[leaf].Line)}
	}
	r, err := s.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	header := js.Object{{K: "type", V: json.RawMessage(`"session"`)}, {K: "version", V: json.RawMessage("3")},
		{K: "id", V: js.Quote(s.Header.ID)}, {K: "timestamp", V: js.Quote(js.NowISO())}, {K: "cwd", V: js.Quote(s.Header.Cwd)}}
	out := append(header.JSON(), '\n')
	parent := json.RawMessage("null")
	for _, i := range s.Path(leaf) {
		e := &s.Entries[i]
		raw, err := r.Raw(i)
		if err != nil {
			return nil, err
		}
		line := s.v3Line(i, raw)
		if len(line) == 0 || line[0] != '{' {
			return nil, fmt.Errorf("line %d: an entry on the path is not a JSON object", e.Line)
		}
		line = s.redactLine(e, js.SetMember(line, "parentId", parent), opts)
		out = append(append(out, line...), '\n')
		parent = js.Quote(e.ID)
	}
	return out, nil
}
