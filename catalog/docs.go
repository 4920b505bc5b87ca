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

// pieces returns the searchable pieces of an entry, blank ones left out.
func pieces(b *sessions.Body) []piece {
	var out []piece
	add := func(part int, typ, role, text string) {
		if strings.TrimSpace(text) != "" {
			out = append(out, piece{part, typ, role, text})
		}
	}
	e := b.Entry
	switch e.Type {
	case sessions.TypeMessage:
		m := b.Msg
		switch m.Role {
		case sessions.RoleUser:
			add(0, "text", "user", m.Content.Text("\n"))
		case sessions.RoleAssistant:
			for k, bl := range m.Content.Blocks() {
				switch bl.Type {
				case sessions.BlockText:
					add(k, "text", "assistant", bl.Text)
				case sessions.BlockThinking:
					add(k, "thinking", "assistant", bl.Text)
				case sessions.BlockToolCall:
					add(k, "toolCall", "tool", toolCallText(bl))
				}
			}
			add(partError, "error", "assistant", m.ErrorMessage)
		case sessions.RoleToolResult:
			add(0, "toolResult", "tool", m.ToolName+"\n"+m.Content.Text("\n"))
		case sessions.RoleBash:
			add(0, "bash", "bash", "$ "+m.Command+"\n"+m.Output)
		case sessions.RoleBranchSummary, sessions.RoleCompactionSummary:
			add(0, m.Role, "summary", m.Summary)
		case sessions.RoleCustom:
			add(0, "custom", "custom", m.CustomType+"\n"+m.Content.Text("\n"))
		default:
			add(0, "text", m.Role, m.Content.Text("\n"))
		}
	case sessions.TypeCustomMessage:
		add(0, "custom", "custom", b.CustomType+"\n"+b.Msg.Content.Text("\n"))
	case sessions.TypeCompaction:
		add(0, "compaction", "summary", b.Summary)
	case sessions.TypeBranchSummary:
		add(0, "branchSummary", "summary", b.Summary)
	case sessions.TypeLabel:
		add(0, "label", "label", e.Label())
	case sessions.TypeSessionInfo:
		add(0, "name", "name", e.Text)
	case sessions.TypeModelChange:
		add(0, "model", "model", e.Text)
	}
	return out
}

// toolCallText is a tool call as searched: its name, then each argument
// as `key: value` with string values decoded (so a command's words are
// words, not JSON escapes).
func toolCallText(bl sessions.Block) string {
	var sb strings.Builder
	sb.WriteString(bl.Name)
	for _, kv := range js.ObjectOf(bl.Args) {
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

// pieceText returns the text of part of an entry ("" when it has none).
func pieceText(b *sessions.Body, part int) (piece, bool) {
	for _, p := range pieces(b) {
		if p.part == part {
			return p, true
		}
	}
	return piece{}, false
}
