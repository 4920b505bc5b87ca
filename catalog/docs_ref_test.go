package catalog

import (
	"strings"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// refPieces is pieces as it was before it decoded into buffers (through
// js.Str and strings.Builder): the reference TestPieces compares with.
func refPieces(e *sessions.Entry, line []byte) []piece {
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
		var m refMsgFields
		m.read(message)
		role := e.Role
		if role == "" {
			role = js.Str(m.role)
		}
		switch role {
		case sessions.RoleUser:
			add(0, "text", "user", refContentText(m.content))
		case sessions.RoleAssistant:
			refEachBlock(m.content, func(k int, bl *refBlock) {
				switch bl.typ {
				case sessions.BlockText:
					add(k, "text", "assistant", js.Str(bl.text))
				case sessions.BlockThinking:
					add(k, "thinking", "assistant", js.Str(bl.thinking))
				case sessions.BlockToolCall:
					add(k, "toolCall", "tool", refToolCallText(js.Str(bl.name), bl.args))
				}
			})
			add(partError, "error", "assistant", js.Str(m.errorMessage))
		case sessions.RoleToolResult:
			add(0, "toolResult", "tool", js.Str(m.toolName)+"\n"+refContentText(m.content))
		case sessions.RoleBash:
			add(0, "bash", "bash", "$ "+js.Str(m.command)+"\n"+js.Str(m.output))
		case sessions.RoleBranchSummary, sessions.RoleCompactionSummary:
			add(0, role, "summary", js.Str(m.summary))
		case sessions.RoleCustom, "hookMessage":
			add(0, "custom", "custom", js.Str(m.customType)+"\n"+refContentText(m.content))
		default:
			add(0, "text", role, refContentText(m.content))
		}
	case sessions.TypeCustomMessage:
		add(0, "custom", "custom", js.Str(customType)+"\n"+refContentText(content))
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

// contentText is the text blocks of content joined by newlines (Content.Text("\n")).
func refContentText(raw []byte) string {
	if s, ok := js.String(raw); ok {
		return s
	}
	var sb strings.Builder
	n := 0
	refEachBlock(raw, func(_ int, bl *refBlock) {
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
func refToolCallText(name string, args []byte) string {
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

// refMsgFields are (the reference's) the members of a message search reads, as written.
type refMsgFields struct {
	role, content, toolName, command, output, errorMessage, customType, summary []byte
}

func (m *refMsgFields) read(raw []byte) {
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

// refEachBlock (the reference's) calls fn with each object block of content (a string is one
// text block), reading only the members search needs: an image's data is
// never decoded.
func refEachBlock(raw []byte, fn func(k int, bl *refBlock)) {
	if len(raw) > 0 && raw[0] == '"' {
		fn(0, &refBlock{typ: sessions.BlockText, text: raw})
		return
	}
	k := -1
	js.Elems(raw, func(el []byte) bool {
		if len(el) == 0 || el[0] != '{' {
			return true
		}
		k++
		var bl refBlock
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

// refBlock is a content block as the reference reads it: members as written.
type refBlock struct {
	typ                        string
	text, thinking, name, args []byte
}
