package catalog

import (
	"strings"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// piece is one searchable piece of an entry: the text of a message (or of
// one of its blocks), a thinking block, a tool call, a tool's output, a
// bash run, a summary, a label, a name, a model. part numbers it within
// the entry, from the entry alone, so that a hit finds its text again.
type piece struct {
	part int
	typ  string // what the piece is (Hit.Type)
	role string // for role: (search.Roles, or custom, name, model, system)
	text string
}

// Parts that are not content blocks.
const (
	partError = 1000 // an assistant's error message
)

// pieces returns the searchable pieces of entry e, whose line is line,
// blank ones left out. It reads only the members search needs, in one
// pass over the line and one over its message.
func pieces(e *sessions.Entry, line []byte) []piece {
	var out []piece
	add := func(part int, typ, role, text string) {
		if strings.TrimSpace(text) != "" {
			out = append(out, piece{part, typ, role, text})
		}
	}
	var message, summary, customType, content []byte
	js.Members(line, func(m js.Member) {
		switch string(js.KeyBytes(m.Key)) {
		case "message":
			message = m.Val
		case "summary":
			summary = m.Val
		case "customType":
			customType = m.Val
		case "content":
			content = m.Val
		}
	})
	switch e.Type {
	case sessions.TypeMessage:
		var m msgFields
		m.read(message)
		role := e.Role
		if role == "" {
			role = js.Str(m.role)
		}
		switch role {
		case sessions.RoleUser:
			add(0, "text", "user", contentText(m.content))
		case sessions.RoleAssistant:
			eachBlock(m.content, func(k int, bl *block) {
				switch bl.typ {
				case sessions.BlockText:
					add(k, "text", "assistant", js.Str(bl.text))
				case sessions.BlockThinking:
					add(k, "thinking", "assistant", js.Str(bl.thinking))
				case sessions.BlockToolCall:
					add(k, "toolCall", "tool", toolCallText(js.Str(bl.name), bl.args))
				}
			})
			add(partError, "error", "assistant", js.Str(m.errorMessage))
		case sessions.RoleToolResult:
			add(0, "toolResult", "tool", js.Str(m.toolName)+"\n"+contentText(m.content))
		case sessions.RoleBash:
			add(0, "bash", "bash", "$ "+js.Str(m.command)+"\n"+js.Str(m.output))
		case sessions.RoleBranchSummary, sessions.RoleCompactionSummary:
			add(0, role, "summary", js.Str(m.summary))
		case sessions.RoleCustom, "hookMessage":
			add(0, "custom", "custom", js.Str(m.customType)+"\n"+contentText(m.content))
		default:
			add(0, "text", role, contentText(m.content))
		}
	case sessions.TypeCustomMessage:
		add(0, "custom", "custom", js.Str(customType)+"\n"+contentText(content))
	case sessions.TypeCompaction:
		add(0, "compaction", "summary", js.Str(summary))
	case sessions.TypeBranchSummary:
		add(0, "branchSummary", "summary", js.Str(summary))
	case sessions.TypeLabel:
		add(0, "label", "label", e.Label())
	case sessions.TypeSessionInfo:
		add(0, "name", "name", e.Text)
	case sessions.TypeModelChange:
		add(0, "model", "model", e.Text)
	}
	return out
}

// msgFields are the members of a message search reads, as written.
type msgFields struct {
	role, content, toolName, command, output, errorMessage, customType, summary []byte
}

func (m *msgFields) read(raw []byte) {
	js.Members(raw, func(mb js.Member) {
		switch string(js.KeyBytes(mb.Key)) {
		case "role":
			m.role = mb.Val
		case "content":
			m.content = mb.Val
		case "toolName":
			m.toolName = mb.Val
		case "command":
			m.command = mb.Val
		case "output":
			m.output = mb.Val
		case "errorMessage":
			m.errorMessage = mb.Val
		case "customType":
			m.customType = mb.Val
		case "summary":
			m.summary = mb.Val
		}
	})
}

// block is a content block's members that search reads, as written.
type block struct {
	typ                        string
	text, thinking, name, args []byte
}

// eachBlock calls fn with each object block of content (a string is one
// text block), reading only the members search needs: an image's data is
// never decoded.
func eachBlock(raw []byte, fn func(k int, bl *block)) {
	if len(raw) > 0 && raw[0] == '"' {
		fn(0, &block{typ: sessions.BlockText, text: raw})
		return
	}
	k := -1
	js.Elems(raw, func(el []byte) bool {
		if len(el) == 0 || el[0] != '{' {
			return true
		}
		k++
		var bl block
		js.Members(el, func(m js.Member) {
			switch string(js.KeyBytes(m.Key)) {
			case "type":
				bl.typ = js.Str(m.Val)
			case "text":
				bl.text = m.Val
			case "thinking":
				bl.thinking = m.Val
			case "name":
				bl.name = m.Val
			case "arguments":
				bl.args = m.Val
			}
		})
		fn(k, &bl)
		return true
	})
}

// contentText is the text blocks of content joined by newlines (Content.Text("\n")).
func contentText(raw []byte) string {
	if s, ok := js.String(raw); ok {
		return s
	}
	var sb strings.Builder
	n := 0
	eachBlock(raw, func(_ int, bl *block) {
		if bl.typ != sessions.BlockText {
			return
		}
		if n > 0 {
			sb.WriteByte('\n')
		}
		n++
		sb.WriteString(js.Str(bl.text))
	})
	return sb.String()
}

// toolCallText is a tool call as searched: its name, then each argument
// as `key: value` with string values decoded (so a command's words are
// words, not JSON escapes).
func toolCallText(name string, args []byte) string {
	var sb strings.Builder
	sb.WriteString(name)
	for _, kv := range js.ObjectOf(args) {
		sb.WriteString("\n")
		sb.WriteString(kv.K)
		sb.WriteString(": ")
		if s, ok := js.String(kv.V); ok {
			sb.WriteString(s)
		} else {
			sb.Write(kv.V)
		}
	}
	return sb.String()
}

// pieceText returns part of an entry (false when it has no such part).
func pieceText(e *sessions.Entry, line []byte, part int) (piece, bool) {
	for _, p := range pieces(e, line) {
		if p.part == part {
			return p, true
		}
	}
	return piece{}, false
}
