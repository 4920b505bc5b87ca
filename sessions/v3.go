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
