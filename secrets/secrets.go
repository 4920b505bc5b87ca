// Package secrets finds secrets in text (API keys, tokens, private keys,
// passwords, JSON Web Tokens) and replaces them with Placeholder, for
// sharing sessions. It is a heuristic: an export should still be checked
// before it is shared.
package secrets

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

// Placeholder replaces a secret.
const Placeholder = "[REDACTED]"

// secretPattern finds one kind of secret; group is the submatch replaced (0: all of it).
type secretPattern struct {
	rule  string
	re    *regexp.Regexp
	group int
	hints []string          // a lower-case substring one of which a match must contain (a fast pre-check)
	check func(string) bool // when set, a match is a secret only if check says so
}

// assignKey matches names like password, DB_PASSWORD, api_key, GITHUB_TOKEN, client-secret.
const assignKey = `[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|credentials?)[A-Za-z0-9_.\-]*`

var secretPatterns = []secretPattern{
	// PEM private keys, including a block cut off by truncated output.
	{rule: "private-key", re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`), hints: []string{"private key"}},
	// OpenAI, Anthropic (sk-ant-…) and other sk- keys.
	{rule: "sk-key", re: regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{20,}`), hints: []string{"sk-"}},
	// GitHub tokens.
	{rule: "github-token", re: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`), hints: []string{"gh"}},
	{rule: "github-pat", re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), hints: []string{"github_pat_"}},
	// GitLab, Slack, npm, Hugging Face, Stripe tokens.
	{rule: "gitlab-token", re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`), hints: []string{"glpat-"}},
	{rule: "slack-token", re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`), hints: []string{"xox"}},
	{rule: "npm-token", re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}`), hints: []string{"npm_"}},
	{rule: "huggingface-token", re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), hints: []string{"hf_"}},
	{rule: "stripe-key", re: regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), hints: []string{"k_live_", "k_test_"}},
	// AWS access key ids, Google API keys and OAuth tokens.
	{rule: "aws-access-key-id", re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), hints: []string{"akia", "asia"}},
	{rule: "gcp-api-key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`), hints: []string{"aiza"}},
	{rule: "google-oauth-token", re: regexp.MustCompile(`\bya29\.[0-9A-Za-z_\-]{20,}`), hints: []string{"ya29."}},
	// JSON Web Tokens.
	{rule: "jwt", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}`), hints: []string{"eyj"}},
	// Authorization headers.
	{rule: "bearer", re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)`), group: 1, hints: []string{"bearer"}},
	{rule: "authorization", re: regexp.MustCompile(`(?i)\bauthorization\s*:\s*(?:basic|token)\s+([A-Za-z0-9\-._~+/]{8,}=*)`), group: 1, hints: []string{"authorization"}},
	// Passwords in URLs: scheme://user:password@host.
	{rule: "url-password", re: regexp.MustCompile(`://[^/\s:@"']+:([^/\s@"']{3,})@`), group: 1, hints: []string{"://"}},
	// Assignments: password=…, API_KEY="…", token: "…" (JSON, YAML, dicts) and YAML "secret: value".
	{rule: "assignment", re: regexp.MustCompile(`(?i)\b` + assignKey + `\s*=\s*["']?([^\s"'&;,<>()\[\]{}]{3,})`), group: 1, hints: assignHints},
	{rule: "json-assignment", re: regexp.MustCompile(`(?i)["']` + assignKey + `["']\s*:\s*["']([^"'\s]{3,})["']`), group: 1, hints: assignHints},
	{rule: "yaml-assignment", re: regexp.MustCompile(`(?im)^[ \t-]*` + assignKey + `[ \t]*:[ \t]+([^\s"'#]{3,})`), group: 1, hints: assignHints},
	// "password: …", "PASSWORD: …", "Token: …" anywhere in prose or logs.
	{rule: "colon-assignment", re: regexp.MustCompile(`(?i)\b(?:password|passwd|passphrase|secret|token|api[_\-]?key)s?\s*:\s*["']?([^\s"'&;,<>()\[\]{}]{4,})`), group: 1, hints: assignHints},
	// Command lines: mysql -pSECRET, --password=SECRET, --token SECRET.
	{rule: "cli-password", re: regexp.MustCompile(`\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p([^\s'"-][^\s'"]{2,})`), group: 1, hints: []string{"mysql", "mariadb"}},
	{rule: "cli-password", re: regexp.MustCompile(`(?i)--(?:password|passwd|token|api-key|secret)(?:=|\s+)["']?([^\s'"]{3,})`), group: 1, hints: []string{"--pass", "--token", "--api-key", "--secret"}},
	// AWS secret access keys, bare: 40 characters of base64 with upper and
	// lower case letters and digits, as random as a key is.
	{rule: "aws-secret-key", re: regexp.MustCompile(`(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])`), group: 1, check: randomKey},
}

// randomKey reports whether s looks generated: upper and lower case
// letters and digits, with high entropy (a git hash is lower-case hex).
func randomKey(s string) bool {
	var up, low, dig bool
	counts := map[rune]int{}
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			up = true
		case r >= 'a' && r <= 'z':
			low = true
		case r >= '0' && r <= '9':
			dig = true
		}
		counts[r]++
	}
	if !up || !low || !dig {
		return false
	}
	h := 0.0
	for _, c := range counts {
		p := float64(c) / float64(len(s))
		h -= p * math.Log2(p)
	}
	return h >= 4.2
}

var assignHints = []string{"pass", "secret", "token", "key", "credential"}

// Finding is one secret found in a text: the rule that found it and where.
type Finding struct {
	Rule       string // the rule's name: gitleaks' id, or piweb's own
	Start, End int    // byte offsets of the secret in the text
}

// Find returns the secrets in s, in order and not overlapping: what
// gitleaks' rules find (its default rule set, kept current upstream) and
// what piweb's own patterns find (passwords in prose and on command lines,
// assignments, bare AWS secret keys, tokens gitleaks' stricter rules let
// through).
func Find(s string) []Finding { return FindWith(s, Scan(s)) }

// Known is what gitleaks found in a larger text (a whole line), to look
// for in its pieces: gitleaks runs once per text, not once per string.
type Known []report.Finding

// Scan runs gitleaks' rules over text.
func Scan(text string) Known { return gitleaks(text) }

// FindWith is Find with gitleaks' findings given: each secret in known is
// found wherever it occurs in s, and piweb's own patterns run on s.
func FindWith(s string, known Known) []Finding {
	if looksLikeBinary(s) {
		return nil // base64 image data: patterns would only find noise in it
	}
	var out []Finding
	for _, f := range known {
		for at := 0; f.Secret != ""; {
			k := strings.Index(s[at:], f.Secret)
			if k < 0 {
				break
			}
			out = append(out, Finding{Rule: f.RuleID, Start: at + k, End: at + k + len(f.Secret)})
			at += k + len(f.Secret)
		}
	}
	lower := strings.ToLower(s)
	for _, p := range secretPatterns {
		if p.hints != nil && !containsAny(lower, p.hints) {
			continue
		}
		for _, m := range p.re.FindAllStringSubmatchIndex(s, -1) {
			st, en := m[2*p.group], m[2*p.group+1]
			if st < 0 || keepValue(s[st:en], s[en:]) || p.check != nil && !p.check(s[st:en]) {
				continue
			}
			out = append(out, Finding{Rule: p.rule, Start: st, End: en})
		}
	}
	slices.SortFunc(out, func(a, b Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End // the longer first
	})
	merged := out[:0]
	for _, f := range out {
		if n := len(merged); n > 0 && f.Start < merged[n-1].End {
			merged[n-1].End = max(merged[n-1].End, f.End) // overlapping finds are one secret
			continue
		}
		merged = append(merged, f)
	}
	return merged
}

// Redact returns s with the secrets Find finds replaced by Placeholder.
func Redact(s string) string { return RedactWith(s, Scan(s)) }

// RedactWith is Redact with gitleaks' findings given (see FindWith).
func RedactWith(s string, known Known) string {
	found := FindWith(s, known)
	if len(found) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, f := range found {
		b.WriteString(s[last:f.Start])
		b.WriteString(Placeholder)
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// Mask shows a found secret without giving it away: its first and last
// characters around an ellipsis, for a preview of what a share redacts.
func Mask(secret string) string {
	r := []rune(secret)
	if len(r) <= 8 {
		return strings.Repeat("•", len(r))
	}
	return string(r[:3]) + "…" + string(r[len(r)-2:])
}

// detector is gitleaks' detector with its default rules, made on first use
// (compiling its rules takes some tens of milliseconds). It is not safe for
// concurrent use.
var detector = sync.OnceValue(func() *detect.Detector {
	zerolog.SetGlobalLevel(zerolog.Disabled) // gitleaks logs through zerolog's global logger
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		return nil
	}
	return d
})

var detectorMu sync.Mutex

// gitleaks runs gitleaks' rules on s.
func gitleaks(s string) []report.Finding {
	d := detector()
	if d == nil {
		return nil
	}
	detectorMu.Lock()
	defer detectorMu.Unlock()
	return d.DetectString(s)
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
