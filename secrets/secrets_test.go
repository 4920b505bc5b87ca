package secrets

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
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
		{"password in prose", "the password: hunter2hunter2 works", "the password: [REDACTED] works"},
		{"upper-case key", "PASSWORD: s3cretvalue", "PASSWORD: [REDACTED]"},
		{"mysql -p", "mysql -uroot -phunter22 shop", "mysql -uroot -p[REDACTED] shop"},
		{"--password=", "psql --password=Zx9kL2mQ db", "psql --password=[REDACTED] db"},
		{"bare aws secret", "key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY end", "key: [REDACTED] end"},
		{"aws secret in env", "AWS_SECRET_ACCESS_KEY=9drTJvcXLB89EXAMPLEKEYa8GvJk/kDmFrPvWPvqO", "AWS_SECRET_ACCESS_KEY=[REDACTED]"},
		// Not secrets.
		{"git hash", "commit 3f786850e387550fdab836ed7e6dc881de23001b done", "commit 3f786850e387550fdab836ed7e6dc881de23001b done"},
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
			if got := Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}
