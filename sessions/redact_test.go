package sessions

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRedactSecrets(t *testing.T) {
	b64 := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB", 10) + "/AKIAIOSFODNN7EXAMPLE/" + strings.Repeat("QUJD", 20)
	tests := []struct{ name, in, want string }{
		{"anthropic", "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz now", "key [REDACTED] now"},
		{"openai project", "OPENAI=sk-proj-abcdefghijklmnopqrstu1234", "OPENAI=[REDACTED]"},
		{"github", "ghp_" + strings.Repeat("a1", 18), "[REDACTED]"},
		{"github oauth", "gho_" + strings.Repeat("Z9", 18) + ".", "[REDACTED]."},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "[REDACTED]"},
		{"slack", "xoxb-1234567890-abcdefghij", "[REDACTED]"},
		{"aws", "id AKIAIOSFODNN7EXAMPLE.", "id [REDACTED]."},
		{"google", "AIzaSyA-1234567890abcdefghijklmnopqrstu", "[REDACTED]"},
		{"bearer", "Authorization: Bearer abc.def-ghi_jkl~mno+pqr/stu=", "Authorization: Bearer [REDACTED]"},
		{"basic auth", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED]"},
		{"jwt", "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "t=[REDACTED]"},
		{"pem", "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\n-----END OPENSSH PRIVATE KEY-----\nz", "a\n[REDACTED]\nz"},
		{"pem cut off", "out: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEE", "out: [REDACTED]"},
		{"password=", "login password=hunter22 ok", "login password=[REDACTED] ok"},
		{"env token", "export GITHUB_TOKEN=abc123def", "export GITHUB_TOKEN=[REDACTED]"},
		{"quoted assignment", `DB_PASSWORD="p4ss.w0rd"`, `DB_PASSWORD="[REDACTED]"`},
		{"query string", "https://x.io/cb?token=abc123&next=1", "https://x.io/cb?token=[REDACTED]&next=1"},
		{"json member", `{"api_key": "abcdef123"}`, `{"api_key": "[REDACTED]"}`},
		{"yaml", "db:\n  password: s3cr3t\n", "db:\n  password: [REDACTED]\n"},
		{"url credentials", "postgres://app:pa55word@db:5432/x", "postgres://app:[REDACTED]@db:5432/x"},
		// Not secrets.
		{"number setting", "max_tokens=4096", "max_tokens=4096"},
		{"variable", "token: $TOKEN and password=${PW}", "token: $TOKEN and password=${PW}"},
		{"call", "const token = getToken()", "const token = getToken()"},
		{"author", "author=bob", "author=bob"},
		{"word with sk-", "task-abcdefghijklmnopqrstuvwxyz", "task-abcdefghijklmnopqrstuvwxyz"},
		{"prose", "The token budget is large; use a secret handshake.", "The token budget is large; use a secret handshake."},
		{"short aws-like", "AKIA1234", "AKIA1234"},
		{"url without password", "https://user@example.com/x", "https://user@example.com/x"},
		{"base64 blob", b64, b64},
		{"already redacted", "password=[REDACTED]", "password=[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RedactSecrets(tt.in); got != tt.want {
				t.Errorf("RedactSecrets(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

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
		e    Entry
		line string
		fn   func(s *Session, e *Entry, line []byte) []byte
		want string
	}{
		{
			name: "thinking",
			e:    Entry{Type: TypeMessage, Role: "assistant"},
			line: `{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"}, {"type":"text","text":"hi"}]}}`,
			fn: func(s *Session, e *Entry, line []byte) []byte {
				return s.redactLine(e, line, Redact{Thinking: true})
			},
			want: `{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"[thinking redacted]"},{"type":"text","text":"hi"}]}}`,
		},
		{
			name: "thinking in a context edit",
			e:    Entry{Type: TypeContextEdit, Target: "x"},
			line: `{"type":"context_edit","replacement":{"content":[{"type":"thinking","thinking":"hmm"}]}}`,
			fn: func(s *Session, e *Entry, line []byte) []byte {
				return s.redactLine(e, line, Redact{Thinking: true})
			},
			want: `{"type":"context_edit","replacement":{"content":[{"type":"thinking","thinking":"[thinking redacted]"}]}}`,
		},
		{
			name: "no thinking",
			e:    Entry{Type: TypeMessage, Role: "user"},
			line: `{"type":"message","message":{"role":"user","content":"plain"}}`,
			fn: func(s *Session, e *Entry, line []byte) []byte {
				return s.redactLine(e, line, Redact{Thinking: true, ToolOutput: true})
			},
			want: `{"type":"message","message":{"role":"user","content":"plain"}}`,
		},
		{
			name: "tool result",
			e:    Entry{Type: TypeMessage, Role: "toolResult"},
			line: `{"type":"message","message":{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"out"}],"isError":false,"details":{"diff":"-a"}}}`,
			fn: func(s *Session, e *Entry, line []byte) []byte {
				return s.redactLine(e, line, Redact{ToolOutput: true})
			},
			want: `{"type":"message","message":{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"[tool output redacted]"}],"isError":false}}`,
		},
		{
			name: "bash",
			e:    Entry{Type: TypeMessage, Role: "bashExecution"},
			line: `{"type":"message","message":{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"fullOutputPath":"/tmp/x"}}`,
			fn: func(s *Session, e *Entry, line []byte) []byte {
				return s.redactLine(e, line, Redact{ToolOutput: true})
			},
			want: `{"type":"message","message":{"role":"bashExecution","command":"ls","output":"[tool output redacted]","exitCode":0}}`,
		},
	}
	s := &Session{byID: map[string]int{}}
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
