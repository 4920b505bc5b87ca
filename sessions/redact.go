package sessions

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/piweb/piweb/internal/js"
)

// Redact selects what Export and Branch remove; the result keeps its ids and links, so pi reads the same tree.
type Redact struct {
	Secrets    bool // replace API keys, tokens, private keys, passwords and JWTs in every string with "[REDACTED]"
	Thinking   bool // replace the text of thinking blocks with a placeholder and drop their signatures
	ToolOutput bool // replace tool result content and bash output with a placeholder
}

// Redaction placeholders.
const (
	// Redacted replaces a secret.
	Redacted = "[REDACTED]"
	// RedactedThinking replaces the text of a thinking block.
	RedactedThinking = "[thinking redacted]"
	// RedactedToolOutput replaces a tool result's content and bash output.
	RedactedToolOutput  = "[tool output redacted]"
	redactedToolContent = `[{"type":"text","text":"[tool output redacted]"}]`
)

// redactLine applies opts to entry e's line.
func (s *Session) redactLine(e *Entry, line []byte, opts Redact) []byte {
	if opts.Thinking {
		line = editContent(line, e, redactThinking)
	}
	if opts.ToolOutput {
		line = s.redactToolOutput(e, line)
	}
	if opts.Secrets {
		line = redactStrings(line)
	}
	return line
}

// editContent applies fn to the content array of a message entry or of a
// context_edit's replacement.
func editContent(line []byte, e *Entry, fn func(content []byte) []byte) []byte {
	var outer string
	switch e.Type {
	case TypeMessage:
		outer = "message"
	case TypeContextEdit:
		outer = "replacement"
	default:
		return line
	}
	o, ok := js.Lookup(line, outer)
	if !ok || len(o) == 0 || o[0] != '{' {
		return line
	}
	c, ok := js.Lookup(o, "content")
	if !ok || len(c) == 0 || c[0] != '[' {
		return line
	}
	nc := fn(c)
	if bytes.Equal(nc, c) {
		return line
	}
	return js.SetMember(line, outer, js.SetMember(o, "content", nc))
}

// redactThinking replaces the text of the thinking blocks in a content array.
func redactThinking(content []byte) []byte {
	elems, ok := arrayElems(content)
	if !ok {
		return content
	}
	changed := false
	for k, el := range elems {
		if len(el) == 0 || el[0] != '{' {
			continue
		}
		if t, _ := js.Lookup(el, "type"); js.Str(t) != "thinking" {
			continue
		}
		el = js.SetMember(el, "thinking", js.Quote(RedactedThinking))
		elems[k] = js.DelMember(el, "thinkingSignature") // the model's reasoning, encrypted
		changed = true
	}
	if !changed {
		return content
	}
	return append(append([]byte("["), bytes.Join(elems, []byte(","))...), ']')
}

// redactToolOutput replaces what tools returned: toolResult content and
// details, bash output, and context edits of tool results.
func (s *Session) redactToolOutput(e *Entry, line []byte) []byte {
	switch e.Type {
	case TypeMessage:
		msg, ok := js.Lookup(line, "message")
		if !ok || len(msg) == 0 || msg[0] != '{' {
			return line
		}
		switch e.Role {
		case RoleToolResult:
			msg = js.SetMember(msg, "content", json.RawMessage(redactedToolContent))
			msg = js.DelMember(msg, "details") // diffs, truncated output paths
		case RoleBash:
			msg = js.SetMember(msg, "output", js.Quote(RedactedToolOutput))
			msg = js.DelMember(msg, "fullOutputPath")
		default:
			return line
		}
		return js.SetMember(line, "message", msg)
	case TypeContextEdit:
		t, ok := s.Lookup(e.Target)
		if !ok || s.Entries[t].Type != TypeMessage || s.Entries[t].Role != RoleToolResult {
			return line
		}
		rep, ok := js.Lookup(line, "replacement")
		if !ok || len(rep) == 0 || rep[0] != '{' {
			return line
		}
		if _, has := js.Lookup(rep, "content"); !has {
			return line
		}
		return js.SetMember(line, "replacement", js.SetMember(rep, "content", json.RawMessage(redactedToolContent)))
	}
	return line
}

// arrayElems splits a JSON array into its raw elements.
func arrayElems(b []byte) ([][]byte, bool) {
	i := js.SkipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	i = js.SkipWS(b, i+1)
	var out [][]byte
	if i < len(b) && b[i] == ']' {
		return out, true
	}
	for {
		end, err := js.ScanValue(b, i)
		if err != nil {
			return nil, false
		}
		out = append(out, b[i:end])
		i = js.SkipWS(b, end)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == ']' {
			return out, true
		}
		if b[i] != ',' {
			return nil, false
		}
		i = js.SkipWS(b, i+1)
	}
}

// structural keys hold ids, types and times: never secrets, and changing them would break the tree.
var structural = map[string]bool{
	"type": true, "id": true, "parentId": true, "targetId": true, "fromId": true, "firstKeptEntryId": true,
	"timestamp": true, "role": true, "toolCallId": true, "customType": true, "mimeType": true,
	"api": true, "provider": true, "model": true, "modelId": true, "stopReason": true, "thinkingLevel": true,
}

// redactStrings replaces secrets in every string value of the JSON value b
// (keys and structural members are left alone).
func redactStrings(b []byte) []byte {
	var out []byte
	last := 0
	lastKey := ""
	for i := 0; i < len(b); {
		if b[i] != '"' {
			i++
			continue
		}
		end, _, err := js.ScanString(b, i)
		if err != nil {
			return b // not reached for validated JSON
		}
		if j := js.SkipWS(b, end); j < len(b) && b[j] == ':' {
			lastKey = js.Key(b[i:end])
			i = end
			continue
		}
		key := "" // an array element
		p := i - 1
		for p >= 0 && js.IsWS(b[p]) {
			p--
		}
		if p >= 0 && b[p] == ':' {
			key = lastKey
		}
		if !structural[key] {
			s, _ := js.String(b[i:end])
			if r := RedactSecrets(s); r != s {
				out = append(append(out, b[last:i]...), js.Quote(r)...)
				last = end
			}
		}
		i = end
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

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

// RedactSecrets returns s with the secrets it finds replaced by Redacted.
func RedactSecrets(s string) string {
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
			b.WriteString(Redacted)
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
	if v == Redacted || strings.HasPrefix(v, "$") || strings.HasPrefix(v, "%") || strings.HasPrefix(after, "(") {
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
