package web

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// entryText answers GET /s/:key/text?e=REF with the entry's whole text as
// plain text (fullText): what the page cuts when it is very long.
func (s *Server) entryText(c echo.Context) error {
	return s.plainEntry(c, func(r *sessions.Reader, i int) (string, bool, error) {
		b, err := r.Body(i)
		if err != nil {
			return "", false, err
		}
		return fullText(b), true, nil
	})
}

// fullText is entry b's whole text for reading as plain text: message
// text, thinking, tool calls with their arguments, tool output, the bash
// command and its output, summaries; anything else as indented JSON.
func fullText(b *sessions.Body) string {
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
	blocks := func(c sessions.Content) {
		for _, bl := range c.Blocks() {
			switch bl.Type {
			case sessions.BlockText:
				add("", bl.Text)
			case sessions.BlockThinking:
				add("thinking", bl.Text)
			case sessions.BlockToolCall:
				add("tool call: "+bl.Name, pretty(bl.Args))
			case sessions.BlockImage:
				add("", "[image: "+bl.MimeType+"]")
			default:
				add("", pretty(bl.Raw))
			}
		}
	}
	switch b.Entry.Type {
	case sessions.TypeMessage:
		switch m := b.Msg; m.Role {
		case sessions.RoleBash:
			add("", "$ "+m.Command+"\n"+m.Output)
		case sessions.RoleBranchSummary, sessions.RoleCompactionSummary:
			add("", m.Summary)
		case sessions.RoleToolResult:
			parts = append(parts, "[tool result: "+m.ToolName+"]")
			blocks(m.Content)
			add("diff", m.ToolDetails().Diff)
		default:
			blocks(m.Content)
			add("error", m.ErrorMessage)
		}
	case sessions.TypeCustomMessage:
		blocks(b.Msg.Content)
	case sessions.TypeCompaction, sessions.TypeBranchSummary:
		add("", b.Summary)
	}
	if len(parts) == 0 {
		return pretty(b.Line)
	}
	return strings.Join(parts, "\n\n") + "\n"
}

// pretty indents JSON for reading; "" for absent or null. JSON nested
// deeper than prettyDepth is given as it is: indenting it would multiply
// it (each level a line indented by all those above it).
func pretty(raw json.RawMessage) string {
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

// prettyDepth is the deepest nesting pretty indents.
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
