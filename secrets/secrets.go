// Package secrets finds secrets in text (API keys, tokens, private keys,
// passwords, JSON Web Tokens) and replaces them with Placeholder, for
// sharing sessions. It is a heuristic: an export should still be checked
// before it is shared.
package secrets

import (
	"regexp"
	"strings"
)

// Placeholder replaces a secret.
const Placeholder = "[REDACTED]"

// secretPattern finds one kind of secret; group is the submatch replaced (0: all of it).
type secretPattern struct {
	re    *regexp.Regexp
	group int
	hints []string // a lower-case substring one of which a match must contain (a fast pre-check)
}

// assignKey matches names like password, DB_PASSWORD, api_key, GITHUB_TOKEN, client-secret.
const assignKey = `[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|credentials?)[A-Za-z0-9_.\-]*`

var secretPatterns = []secretPattern{
	// PEM private keys, including a block cut off by truncated output.
	{re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`), hints: []string{"private key"}},
	// OpenAI, Anthropic (sk-ant-…) and other sk- keys.
	{re: regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{20,}`), hints: []string{"sk-"}},
	// GitHub tokens.
	{re: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`), hints: []string{"gh"}},
	{re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), hints: []string{"github_pat_"}},
	// GitLab, Slack, npm, Hugging Face, Stripe tokens.
	{re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`), hints: []string{"glpat-"}},
	{re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`), hints: []string{"xox"}},
	{re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}`), hints: []string{"npm_"}},
	{re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), hints: []string{"hf_"}},
	{re: regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), hints: []string{"k_live_", "k_test_"}},
	// AWS access key ids, Google API keys and OAuth tokens.
	{re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), hints: []string{"akia", "asia"}},
	{re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`), hints: []string{"aiza"}},
	{re: regexp.MustCompile(`\bya29\.[0-9A-Za-z_\-]{20,}`), hints: []string{"ya29."}},
	// JSON Web Tokens.
	{re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}`), hints: []string{"eyj"}},
	// Authorization headers.
	{re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)`), group: 1, hints: []string{"bearer"}},
	{re: regexp.MustCompile(`(?i)\bauthorization\s*:\s*(?:basic|token)\s+([A-Za-z0-9\-._~+/]{8,}=*)`), group: 1, hints: []string{"authorization"}},
	// Passwords in URLs: scheme://user:password@host.
	{re: regexp.MustCompile(`://[^/\s:@"']+:([^/\s@"']{3,})@`), group: 1, hints: []string{"://"}},
	// Assignments: password=…, API_KEY="…", token: "…" (JSON, YAML, dicts) and YAML "secret: value".
	{re: regexp.MustCompile(`(?i)\b` + assignKey + `\s*=\s*["']?([^\s"'&;,<>()\[\]{}]{3,})`), group: 1, hints: assignHints},
	{re: regexp.MustCompile(`(?i)["']` + assignKey + `["']\s*:\s*["']([^"'\s]{3,})["']`), group: 1, hints: assignHints},
	{re: regexp.MustCompile(`(?im)^[ \t-]*` + assignKey + `[ \t]*:[ \t]+([^\s"'#]{3,})`), group: 1, hints: assignHints},
}

var assignHints = []string{"pass", "secret", "token", "key", "credential"}

// Redact returns s with the secrets it finds replaced by Placeholder.
func Redact(s string) string {
	if looksLikeBinary(s) {
		return s // base64 image data: patterns would only find noise in it
	}
	var lower string
	for _, p := range secretPatterns {
		if lower == "" {
			lower = strings.ToLower(s)
		}
		if !containsAny(lower, p.hints) {
			continue
		}
		locs := p.re.FindAllStringSubmatchIndex(s, -1)
		if locs == nil {
			continue
		}
		var b strings.Builder
		last := 0
		for _, m := range locs {
			st, en := m[2*p.group], m[2*p.group+1]
			if st < 0 || st < last || keepValue(s[st:en], s[en:]) {
				continue
			}
			b.WriteString(s[last:st])
			b.WriteString(Placeholder)
			last = en
		}
		if last == 0 {
			continue
		}
		b.WriteString(s[last:])
		s = b.String()
		lower = ""
	}
	return s
}

// keepValue reports whether a matched value is not a secret after all:
// numbers (max_tokens=4096), variable references, function calls, and values already redacted.
func keepValue(v, after string) bool {
	if v == Placeholder || strings.HasPrefix(v, "$") || strings.HasPrefix(v, "%") || strings.HasPrefix(after, "(") {
		return true
	}
	switch strings.ToLower(v) {
	case "true", "false", "null", "none", "undefined", "nil", "required", "optional", "string":
		return true
	}
	for _, r := range v {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// looksLikeBinary reports whether s is a long run of base64, such as image data.
func looksLikeBinary(s string) bool {
	if len(s) < 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' || c == '\n' || c == '\r') {
			return false
		}
	}
	return true
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
