package catalog

import (
	"strings"

	"github.com/piweb/piweb/sessions"
)

// piece is one searchable piece of an entry: the text of a message (or of
// one of its blocks), a thinking block, a tool call, a tool's output, a
// bash run, a summary, a label, a name, a model. part numbers it within
// the entry, from the entry alone, so that a hit finds its text again.
type piece struct {
	part int
	typ  string // what the piece is (Hit.Type)
	role string // for role: (search.Roles, or custom, name, model, or the message's own role)
	text string
}

// Parts that are not content blocks.
const (
	partError = 1000 // an assistant's error message
)

// pieces returns the searchable pieces of entry e, whose line is line,
// blank ones left out, read through pi's message model (sessions.DecodeBody).
func pieces(e *sessions.Entry, line []byte) []piece {
	var out []piece
	add := func(part int, typ, role, text string) {
		if strings.TrimSpace(text) != "" {
			out = append(out, piece{part, typ, role, text})
		}
	}
	switch e.Type {
	case sessions.TypeLabel:
		add(0, "label", "label", e.Label())
		return out
	case sessions.TypeSessionInfo:
		add(0, "name", "name", e.Text)
		return out
	case sessions.TypeModelChange:
		add(0, "model", "model", e.Text)
		return out
	case sessions.TypeMessage, sessions.TypeCustomMessage, sessions.TypeCompaction, sessions.TypeBranchSummary:
	default:
		return nil // no text searched
	}
	b := sessions.DecodeBody(e, line)
	m := b.Msg
	switch e.Type {
	case sessions.TypeCompaction:
		add(0, "compaction", "summary", b.Summary)
		return out
	case sessions.TypeBranchSummary:
		add(0, "branchSummary", "summary", b.Summary)
		return out
	case sessions.TypeCustomMessage:
		add(0, "custom", "custom", m.CustomType+"\n"+m.Content.Text("\n"))
		return out
	}
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
	return out
}

// toolCallText is a tool call as searched: its name, then each argument
// as `key: value` with string values decoded (so a command's words are
// words, not JSON escapes).
func toolCallText(call sessions.Block) string {
	var sb strings.Builder
	sb.WriteString(call.Name)
	for _, kv := range call.ArgPairs() {
		sb.WriteString("\n")
		sb.WriteString(kv.Key)
		sb.WriteString(": ")
		sb.WriteString(kv.Text)
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
