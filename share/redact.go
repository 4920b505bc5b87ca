package share

import (
	"bytes"
	"encoding/json"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/secrets"
	"github.com/piweb/piweb/sessions"
)

// Redact selects what a share (ExportTo, Branch, Whole) removes; the result keeps its ids and links, so pi reads the same tree.
type Redact struct {
	Secrets    bool // replace API keys, tokens, private keys, passwords and JWTs in every string with "[REDACTED]", and drop the providers' encrypted reasoning signatures
	Thinking   bool // replace the text of thinking blocks with a placeholder and drop their signatures
	ToolOutput bool // replace tool result content and bash output with a placeholder
}

// Redaction placeholders.
const (
	// Redacted replaces a secret (secrets.Placeholder).
	Redacted = secrets.Placeholder
	// RedactedThinking replaces the text of a thinking block.
	RedactedThinking = "[thinking redacted]"
	// RedactedToolOutput replaces a tool result's content and bash output.
	RedactedToolOutput  = "[tool output redacted]"
	redactedToolContent = `[{"type":"text","text":"[tool output redacted]"}]`
)

// redactLine applies opts to entry e's line.
func redactLine(s *sessions.Session, e *sessions.Entry, line []byte, opts Redact) []byte {
	if opts.Thinking {
		line = editContent(line, e, redactThinking)
	}
	if opts.ToolOutput {
		line = redactToolOutput(s, e, line)
	}
	if opts.Secrets {
		line = editContent(line, e, dropSignatures)
		line = redactStrings(line)
	}
	return line
}

// signatureKeys are the members in which providers keep encrypted or opaque
// reasoning: nobody can read them, and a share need not carry them.
var signatureKeys = []string{"thinkingSignature", "textSignature", "thoughtSignature", "signature", "encrypted_content"}

// dropSignatures removes the signature members of a content array's blocks.
func dropSignatures(content []byte) []byte {
	return editBlocks(content, func(el []byte) ([]byte, bool) {
		changed := false
		for _, key := range signatureKeys {
			if _, has := js.Lookup(el, key); has {
				el = js.DelMember(el, key)
				changed = true
			}
		}
		return el, changed
	})
}

// editBlocks applies fn to each object of a content array, and returns the
// array made again when fn changed any (it says so), else content as it is.
func editBlocks(content []byte, fn func(el []byte) ([]byte, bool)) []byte {
	elems, ok := arrayElems(content)
	if !ok {
		return content
	}
	changed := false
	for k, el := range elems {
		if len(el) == 0 || el[0] != '{' {
			continue
		}
		if ne, ch := fn(el); ch {
			elems[k], changed = ne, true
		}
	}
	if !changed {
		return content
	}
	return append(append([]byte("["), bytes.Join(elems, []byte(","))...), ']')
}

// editContent applies fn to the content array of a message entry or of a
// context_edit's replacement.
func editContent(line []byte, e *sessions.Entry, fn func(content []byte) []byte) []byte {
	var outer string
	switch e.Type {
	case sessions.TypeMessage:
		outer = "message"
	case sessions.TypeContextEdit:
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
	return editBlocks(content, func(el []byte) ([]byte, bool) {
		if t, _ := js.Lookup(el, "type"); js.Str(t) != "thinking" {
			return el, false
		}
		el = js.SetMember(el, "thinking", js.Quote(RedactedThinking))
		return js.DelMember(el, "thinkingSignature"), true // the model's reasoning, encrypted
	})
}

// redactToolOutput replaces what tools returned: toolResult content and
// details, bash output, and context edits of tool results.
func redactToolOutput(s *sessions.Session, e *sessions.Entry, line []byte) []byte {
	switch e.Type {
	case sessions.TypeMessage:
		msg, ok := js.Lookup(line, "message")
		if !ok || len(msg) == 0 || msg[0] != '{' {
			return line
		}
		switch e.Role {
		case sessions.RoleToolResult:
			msg = js.SetMember(msg, "content", json.RawMessage(redactedToolContent))
			msg = js.DelMember(msg, "details") // diffs, truncated output paths
		case sessions.RoleBash:
			msg = js.SetMember(msg, "output", js.Quote(RedactedToolOutput))
			msg = js.DelMember(msg, "fullOutputPath")
		default:
			return line
		}
		return js.SetMember(line, "message", msg)
	case sessions.TypeContextEdit:
		t, ok := s.Lookup(e.Target)
		if !ok || s.Entries[t].Type != sessions.TypeMessage || s.Entries[t].Role != sessions.RoleToolResult {
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
	known := secrets.Scan(string(b)) // gitleaks' rules once per line; their finds are looked for in every string
	eachString(b, func(start, end int, s string) {
		if r := secrets.RedactWith(s, known); r != s {
			out = append(append(out, b[last:start]...), js.Quote(r)...)
			last = end
		}
	})
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// eachString calls fn with each string value of the JSON value b that may
// hold a secret (not keys, not structural members), its span in b and its text.
func eachString(b []byte, fn func(start, end int, s string)) {
	lastKey := ""
	for i := 0; i < len(b); {
		if b[i] != '"' {
			i++
			continue
		}
		end, _, err := js.ScanString(b, i)
		if err != nil {
			return // not reached for validated JSON
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
			fn(i, end, s)
		}
		i = end
	}
}

// SecretFound is a secret that sharing a branch with secrets redacted removes.
type SecretFound struct {
	Entry  string // the entry holding it
	Rule   string // what found it
	Masked string // the secret, masked (secrets.Mask)
}

// Secrets lists the secrets a share of the branch (laid out without
// redactions) with secrets redacted removes, in the branch's order. It
// reads only the branch, so it runs outside the library's lock.
func (b *Layout) Secrets() []SecretFound {
	var out []SecretFound
	for _, e := range append(b.Entries, b.Labels...) {
		line := e.JSON
		known := secrets.Scan(string(line))
		eachString(line, func(_, _ int, str string) {
			for _, f := range secrets.FindWith(str, known) {
				out = append(out, SecretFound{Entry: e.ID, Rule: f.Rule, Masked: secrets.Mask(str[f.Start:f.End])})
			}
		})
	}
	return out
}
