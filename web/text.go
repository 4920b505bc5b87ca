package web

import (
	"encoding/json"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
)

// entryText answers GET /s/:id/text?e=REF with the entry's whole text as
// plain text: what the page cuts when it is very long.
func (s *Server) entryText(c echo.Context) error {
	return s.plainEntry(c, func(r *sessions.Reader, i int) (string, bool, error) {
		line, err := r.Raw(i)
		return plainText(line), err == nil, err
	})
}

// plainText is an entry line for reading: message text, thinking, tool calls
// with their arguments, tool output, bash command and output, summaries;
// anything else as indented JSON.
func plainText(line []byte) string {
	o := parseJSON(line)
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
	blocks := func(bs []jobj) {
		for _, bl := range bs {
			switch bl.str("type") {
			case "text":
				add("", bl.str("text"))
			case "thinking":
				add("thinking", bl.str("thinking"))
			case "toolCall":
				add("tool call: "+bl.str("name"), pretty(bl["arguments"]))
			case "image":
				add("", "[image: "+bl.str("mimeType")+"]")
			default:
				raw, _ := json.Marshal(bl)
				add("", pretty(raw))
			}
		}
	}
	switch o.str("type") {
	case sessions.TypeMessage:
		m := o.obj("message")
		switch m.str("role") {
		case "bashExecution":
			add("", "$ "+m.str("command")+"\n"+m.str("output"))
		case "branchSummary", "compactionSummary":
			add("", m.str("summary"))
		case "toolResult":
			parts = append(parts, "[tool result: "+m.str("toolName")+"]")
			blocks(m.blocks("content"))
			add("diff", m.obj("details").str("diff"))
		default:
			blocks(m.blocks("content"))
			add("error", m.str("errorMessage"))
		}
	case sessions.TypeCustomMessage:
		blocks(o.blocks("content"))
	case sessions.TypeCompaction, sessions.TypeBranchSummary:
		add("", o.str("summary"))
	}
	if len(parts) == 0 {
		return pretty(line)
	}
	return strings.Join(parts, "\n\n") + "\n"
}
