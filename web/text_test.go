package web

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// TestFullText checks the plain text the page links to as an entry's full text.
func TestFullText(t *testing.T) {
	tests := []struct{ line, want string }{
		{`{"type":"message","message":{"role":"user","content":"hi there"}}`, "hi there\n"},
		{`{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"toolCall","name":"read","arguments":{"path":"a.go"}}],"errorMessage":"boom"}}`,
			"[thinking]\nhm\n\nok\n\n[tool call: read]\n{\n  \"path\": \"a.go\"\n}\n\n[error]\nboom\n"},
		{`{"type":"message","message":{"role":"toolResult","toolName":"edit","content":[{"type":"text","text":"done"}],"details":{"diff":"-a\n+b"}}}`,
			"[tool result: edit]\n\ndone\n\n[diff]\n-a\n+b\n"},
		{`{"type":"message","message":{"role":"bashExecution","command":"ls","output":"a\nb"}}`, "$ ls\na\nb\n"},
		{`{"type":"compaction","summary":"so far"}`, "so far\n"},
		{`{"type":"label","targetId":"x","label":"y"}`, "{\n  \"type\": \"label\",\n  \"targetId\": \"x\",\n  \"label\": \"y\"\n}"},
	}
	for _, tt := range tests {
		line := []byte(tt.line)
		e := &sessions.Entry{Type: js.Str(js.ObjectOf(line).Val("type"))}
		if got := fullText(sessions.DecodeBody(e, line)); got != tt.want {
			t.Errorf("fullText(%s) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestPretty: JSON is indented for reading unless it nests deeper than
// prettyDepth, which is given as written (brackets inside strings, escaped
// quotes among them, do not count).
func TestPretty(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"absent", ``, ""},
		{"null", `null`, ""},
		{"object", `{"a":[1,2]}`, "{\n  \"a\": [\n    1,\n    2\n  ]\n}"},
		{"at the limit", nest(prettyDepth), prettyNest(prettyDepth)},
		{"one deeper", nest(prettyDepth + 1), nest(prettyDepth + 1)},
		{"100k deep", nest(100000), nest(100000)},
		{"brackets in strings", `{"a":"` + strings.Repeat(`[{\"`, 200) + `"}`, "{\n  \"a\": \"" + strings.Repeat(`[{\"`, 200) + "\"\n}"},
		{"not JSON", `{"a":`, `{"a":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pretty(json.RawMessage(tc.raw)); got != tc.want {
				t.Errorf("pretty(%.40q) = %.80q, want %.80q", tc.raw, got, tc.want)
			}
		})
	}
}

// prettyNest is json.Indent's reading of n nested empty arrays.
func prettyNest(n int) string {
	var b bytes.Buffer
	json.Indent(&b, []byte(strings.Repeat("[", n)+strings.Repeat("]", n)), "", "  ")
	return b.String()
}
