package sessions

import (
	"encoding/json"

	"github.com/piweb/piweb/internal/js"
)

// RenameHookMessage renames a message entry's role hookMessage to custom (pi's v2 → v3 step).
func RenameHookMessage(val []byte) []byte {
	if typ, _ := js.Lookup(val, "type"); js.Str(typ) != TypeMessage {
		return val
	}
	msg, ok := js.Lookup(val, "message")
	if !ok || len(msg) == 0 || msg[0] != '{' {
		return val
	}
	if role, _ := js.Lookup(msg, "role"); js.Str(role) != "hookMessage" {
		return val
	}
	return js.SetMember(val, "message", js.SetMember(msg, "role", json.RawMessage(`"custom"`)))
}

// V3Line returns entry i's line as it reads in version 3: for older files,
// the in-memory migration piweb applies (ids for v1, hookMessage renamed).
func (s *Session) V3Line(i int, raw []byte) []byte {
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
		if e.Type == TypeCompaction {
			if raw, ok := js.Lookup(line, "firstKeptEntryIndex"); ok && len(raw) > 0 && (raw[0] == '-' || js.IsDigit(raw[0])) {
				if k := e.FirstKept(); k != "" {
					line = js.SetMember(line, "firstKeptEntryId", js.Quote(k))
				}
				line = js.DelMember(line, "firstKeptEntryIndex")
			}
		}
	}
	return RenameHookMessage(line)
}
