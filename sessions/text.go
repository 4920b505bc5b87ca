package sessions

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/piweb/piweb/internal/js"
)

// CopyText returns what pi's /tree copies for entry i (its ctrl+x): a
// message's text (a bash command for a bashExecution; an assistant's error
// message when it has no text), a custom message's text, or a compaction's
// or branch summary's summary. ok is false when pi has nothing to copy.
func (r *Reader) CopyText(i int) (text string, ok bool, err error) {
	switch r.s.Entries[i].Type {
	case TypeMessage, TypeCustomMessage, TypeCompaction, TypeBranchSummary:
	default:
		return "", false, nil
	}
	b, err := r.Body(i)
	if err != nil {
		return "", false, err
	}
	if text = b.CopyText(); js.Trim(text) == "" {
		return "", false, nil
	}
	return text, true, nil
}

// CopyText is what pi's /tree copies for the entry, before pi checks it is not blank.
func (b *Body) CopyText() string {
	var raw []byte // a value pi copies as it is (pi would fail on one that is not a string)
	switch b.Entry.Type {
	case TypeMessage:
		m := b.Msg
		if m.Role == RoleBash {
			raw = m.Obj.Val("command")
			break
		}
		if m.Content.Raw() == nil {
			return ""
		}
		if text := m.Content.FullText(); text != "" || m.Role != RoleAssistant {
			return text
		}
		raw = m.Obj.Val("errorMessage")
	case TypeCustomMessage:
		return b.Msg.Content.FullText()
	case TypeCompaction, TypeBranchSummary:
		raw = b.Obj.Val("summary")
	}
	s, _ := js.String(raw)
	return s
}

// FullText returns entry i's whole text for reading, as Body.FullText does.
func (r *Reader) FullText(i int) (string, error) {
	b, err := r.Body(i)
	if err != nil {
		return "", err
	}
	return b.FullText(), nil
}

// FullText is the entry's whole text for reading as plain text: message
// text, thinking, tool calls with their arguments, tool output, the bash
// command and its output, summaries; anything else as indented JSON.
func (b *Body) FullText() string {
	var parts []string
	add := func(head, body string) {
		if body == "" {
			return
		}
		if head != "" {
			body = "[" + head + "]\n" + body
		}
		parts = append(parts, body)
	}
	blocks := func(c Content) {
		for _, bl := range c.Blocks() {
			switch bl.Type {
			case BlockText:
				add("", bl.Text)
			case BlockThinking:
				add("thinking", bl.Text)
			case BlockToolCall:
				add("tool call: "+bl.Name, Pretty(bl.Args))
			case BlockImage:
				add("", "[image: "+bl.MimeType+"]")
			default:
				add("", Pretty(bl.Raw))
			}
		}
	}
	switch b.Entry.Type {
	case TypeMessage:
		switch m := b.Msg; m.Role {
		case RoleBash:
			add("", "$ "+m.Command+"\n"+m.Output)
		case RoleBranchSummary, RoleCompactionSummary:
			add("", m.Summary)
		case RoleToolResult:
			parts = append(parts, "[tool result: "+m.ToolName+"]")
			blocks(m.Content)
			add("diff", m.ToolDetails().Diff)
		default:
			blocks(m.Content)
			add("error", m.ErrorMessage)
		}
	case TypeCustomMessage:
		blocks(b.Msg.Content)
	case TypeCompaction, TypeBranchSummary:
		add("", b.Summary)
	}
	if len(parts) == 0 {
		return Pretty(b.Line)
	}
	return strings.Join(parts, "\n\n") + "\n"
}

// Pretty indents JSON for reading; "" for absent or null. JSON nested
// deeper than prettyDepth is given as it is: indenting it would multiply
// it (each level a line indented by all those above it).
func Pretty(raw json.RawMessage) string {
	if len(raw) == 0 || js.IsNull(raw) {
		return ""
	}
	if deeper(raw, prettyDepth) {
		return string(raw)
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// prettyDepth is the deepest nesting Pretty indents.
const prettyDepth = 64

// deeper reports whether the JSON raw nests arrays and objects more than
// max deep (outside strings).
func deeper(raw []byte, max int) bool {
	depth, inString := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > max {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}
