package share

import (
	"encoding/json"
	"testing"

	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/sessions"
)

func TestRedactStrings(t *testing.T) {
	in := `{"type":"message","id":"sk-abcdefghijklmnopqrstuvwxyz","text" : "x sk-abcdefghijklmnopqrstuvwxyz","args":["password=abc123x",5,{"k":"AKIAIOSFODNN7EXAMPLE"}],"sk-abcdefghijklmnopqrstuvwxyz":1}`
	want := `{"type":"message","id":"sk-abcdefghijklmnopqrstuvwxyz","text" : "x [REDACTED]","args":["password=[REDACTED]",5,{"k":"[REDACTED]"}],"sk-abcdefghijklmnopqrstuvwxyz":1}`
	if got := string(redactStrings([]byte(in))); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	same := `{"a":"nothing here","b":["x"]}`
	if got := string(redactStrings([]byte(same))); got != same {
		t.Errorf("changed %s to %s", same, got)
	}
	// Escapes in and out: the value is decoded before matching and re-encoded after.
	esc := `{"t":"pass\u0077ord=hunter22\n\"q\""}`
	if got := string(redactStrings([]byte(esc))); got != `{"t":"password=[REDACTED]\n\"q\""}` {
		t.Errorf("escaped: %s", got)
	}
}

func TestRedactContent(t *testing.T) {
	tests := []struct {
		name string
		e    sessions.Entry
		line string
		fn   func(s *sessions.Session, e *sessions.Entry, line []byte) []byte
		want string
	}{
		{
			name: "thinking",
			e:    sessions.Entry{Type: sessions.TypeMessage, Role: "assistant"},
			line: `{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"}, {"type":"text","text":"hi"}]}}`,
			fn: func(s *sessions.Session, e *sessions.Entry, line []byte) []byte {
				return redactLine(s, e, line, Redact{Thinking: true})
			},
			want: `{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"[thinking redacted]"},{"type":"text","text":"hi"}]}}`,
		},
		{
			name: "thinking in a context edit",
			e:    sessions.Entry{Type: sessions.TypeContextEdit, Target: "x"},
			line: `{"type":"context_edit","replacement":{"content":[{"type":"thinking","thinking":"hmm"}]}}`,
			fn: func(s *sessions.Session, e *sessions.Entry, line []byte) []byte {
				return redactLine(s, e, line, Redact{Thinking: true})
			},
			want: `{"type":"context_edit","replacement":{"content":[{"type":"thinking","thinking":"[thinking redacted]"}]}}`,
		},
		{
			name: "no thinking",
			e:    sessions.Entry{Type: sessions.TypeMessage, Role: "user"},
			line: `{"type":"message","message":{"role":"user","content":"plain"}}`,
			fn: func(s *sessions.Session, e *sessions.Entry, line []byte) []byte {
				return redactLine(s, e, line, Redact{Thinking: true, ToolOutput: true})
			},
			want: `{"type":"message","message":{"role":"user","content":"plain"}}`,
		},
		{
			name: "tool result",
			e:    sessions.Entry{Type: sessions.TypeMessage, Role: "toolResult"},
			line: `{"type":"message","message":{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"out"}],"isError":false,"details":{"diff":"-a"}}}`,
			fn: func(s *sessions.Session, e *sessions.Entry, line []byte) []byte {
				return redactLine(s, e, line, Redact{ToolOutput: true})
			},
			want: `{"type":"message","message":{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"[tool output redacted]"}],"isError":false}}`,
		},
		{
			name: "bash",
			e:    sessions.Entry{Type: sessions.TypeMessage, Role: "bashExecution"},
			line: `{"type":"message","message":{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"fullOutputPath":"/tmp/x"}}`,
			fn: func(s *sessions.Session, e *sessions.Entry, line []byte) []byte {
				return redactLine(s, e, line, Redact{ToolOutput: true})
			},
			want: `{"type":"message","message":{"role":"bashExecution","command":"ls","output":"[tool output redacted]","exitCode":0}}`,
		},
	}
	s, err := readtest.Parse(t, []byte(`{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"}`+"\n"), "empty")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tt.fn(s, &tt.e, []byte(tt.line)))
			if got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Error("invalid JSON")
			}
		})
	}
}

func TestArrayElems(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`[]`, nil, true},
		{`[ 1 , "a,b" , {"x":[1,2]} ]`, []string{`1`, `"a,b"`, `{"x":[1,2]}`}, true},
		{`{"a":1}`, nil, false},
		{`[1,`, nil, false},
	}
	for _, tt := range tests {
		got, ok := arrayElems([]byte(tt.in))
		if ok != tt.ok || len(got) != len(tt.want) {
			t.Errorf("arrayElems(%s) = %q, %v", tt.in, got, ok)
			continue
		}
		for k := range got {
			if string(got[k]) != tt.want[k] {
				t.Errorf("arrayElems(%s)[%d] = %s, want %s", tt.in, k, got[k], tt.want[k])
			}
		}
	}
}
