package catalog

import (
	"bytes"
	"strings"
	"unicode/utf8"
	"unsafe"

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
// pass over the line and one over its message, and decodes each piece's
// text straight into a string of its own (no piece aliases line).
func pieces(e *sessions.Entry, line []byte) []piece {
	return decoder{str: js.AppendString}.pieces(e, line)
}

// buildPieces is pieces of a line as written (Library.ReadLinesAsWritten)
// for the store, which reads texts holding invalid UTF-8 as pi does: their
// strings are decoded without checking their UTF-8 (js.AppendValidString),
// and their texts are in ar's memory, until ar is reset.
func buildPieces(ar *textArena, e *sessions.Entry, line []byte) []piece {
	return decoder{str: js.AppendValidString, ar: ar, asWritten: true}.pieces(e, line)
}

// decoder decodes the strings of pieces with str (js.AppendString, or
// js.AppendValidString for the store: asWritten), into memory of their
// own or from ar.
type decoder struct {
	str       func(dst, raw []byte) ([]byte, bool)
	ar        *textArena
	asWritten bool
}

// alloc returns an empty buffer for about n bytes.
func (d decoder) alloc(n int) []byte {
	if d.ar == nil {
		return make([]byte, 0, n)
	}
	return d.ar.alloc(n)
}

// textArena hands out the memory of a file's texts for the search index
// from chunks it keeps from file to file: the store copies what it keeps.
type textArena struct {
	chunks [][]byte
	cur    int // the chunk being filled
}

const arenaChunk = 1 << 20

// alloc returns an empty buffer of capacity n (a longer text grows out of it).
func (a *textArena) alloc(n int) []byte {
	for ; a.cur < len(a.chunks); a.cur++ {
		if c := a.chunks[a.cur]; len(c)+n <= cap(c) {
			a.chunks[a.cur] = c[:len(c)+n]
			return c[len(c) : len(c) : len(c)+n]
		}
	}
	a.chunks = append(a.chunks, make([]byte, n, max(n, arenaChunk)))
	return a.chunks[a.cur][:0:n]
}

// arenaKeep is how much memory a reset arena keeps.
const arenaKeep = 16 << 20

// reset makes all the memory free again (what alloc gave is overwritten);
// it keeps chunks up to arenaKeep bytes.
func (a *textArena) reset() {
	kept := 0
	for k := range a.chunks {
		if kept += cap(a.chunks[k]); kept > arenaKeep {
			clear(a.chunks[k:])
			a.chunks = a.chunks[:k]
			break
		}
		a.chunks[k] = a.chunks[k][:0]
	}
	a.cur = 0
}

func (d decoder) pieces(e *sessions.Entry, line []byte) []piece {
	var out []piece
	add := func(part int, typ, role string, text []byte) {
		if len(bytes.TrimSpace(text)) != 0 {
			out = append(out, piece{part, typ, role, own(text)})
		}
	}
	addString := func(part int, typ, role, text string) {
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
			add(0, "text", "user", d.appendContent(nil, m.content))
		case sessions.RoleAssistant:
			eachBlock(m.content, func(k int, bl *block) {
				switch bl.typ {
				case sessions.BlockText:
					add(k, "text", "assistant", d.decode(nil, bl.text))
				case sessions.BlockThinking:
					add(k, "thinking", "assistant", d.decode(nil, bl.thinking))
				case sessions.BlockToolCall:
					add(k, "toolCall", "tool", d.appendToolCall(nil, bl.name, bl.args))
				}
			})
			add(partError, "error", "assistant", d.decode(nil, m.errorMessage))
		case sessions.RoleToolResult:
			add(0, "toolResult", "tool", d.appendContent(d.appendLine(nil, m.toolName, m.content), m.content))
		case sessions.RoleBash:
			b := d.alloc(3 + len(m.command) + len(m.output))
			b = append(b, "$ "...)
			b, _ = d.str(b, m.command)
			b = append(b, '\n')
			b, _ = d.str(b, m.output)
			add(0, "bash", "bash", b)
		case sessions.RoleBranchSummary, sessions.RoleCompactionSummary:
			add(0, role, "summary", d.decode(nil, m.summary))
		case sessions.RoleCustom, "hookMessage":
			add(0, "custom", "custom", d.appendContent(d.appendLine(nil, m.customType, m.content), m.content))
		default:
			add(0, "text", role, d.appendContent(nil, m.content))
		}
	case sessions.TypeCustomMessage:
		add(0, "custom", "custom", d.appendContent(d.appendLine(nil, customType, content), content))
	case sessions.TypeCompaction:
		add(0, "compaction", "summary", d.decode(nil, summary))
	case sessions.TypeBranchSummary:
		add(0, "branchSummary", "summary", d.decode(nil, summary))
	case sessions.TypeLabel:
		addString(0, "label", "label", e.Label())
	case sessions.TypeSessionInfo:
		addString(0, "name", "name", e.Text)
	case sessions.TypeModelChange:
		addString(0, "model", "model", e.Text)
	}
	return out
}

// own returns b as a string without copying it; b is never written again.
func own(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// decode appends the decoded string raw (js.Str) to dst, allocating it
// once at about its size when dst is nil.
func (d decoder) decode(dst, raw []byte) []byte {
	if dst == nil {
		dst = d.alloc(len(raw))
	}
	dst, _ = d.str(dst, raw)
	return dst
}

// appendLine starts a piece with the decoded string raw and a newline,
// leaving room for the decoded content after it.
func (d decoder) appendLine(dst, raw, content []byte) []byte {
	if dst == nil {
		dst = d.alloc(len(raw) + 1 + contentSize(content))
	}
	dst, _ = d.str(dst, raw)
	return append(dst, '\n')
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

// appendContent appends the text blocks of content raw joined by
// newlines (Content.Text("\n")) to dst (allocated at its size when nil).
func (d decoder) appendContent(dst, raw []byte) []byte {
	if len(raw) > 0 && raw[0] == '"' {
		if dst == nil {
			dst = d.alloc(len(raw))
		}
		// A string that does not decode is no text (js.String's ok).
		if out, ok := d.str(dst, raw); ok {
			return out
		}
		return dst
	}
	if dst == nil {
		dst = d.alloc(contentSize(raw))
	}
	n := 0
	eachBlock(raw, func(_ int, bl *block) {
		if bl.typ != sessions.BlockText {
			return
		}
		if n > 0 {
			dst = append(dst, '\n')
		}
		n++
		dst, _ = d.str(dst, bl.text)
	})
	return dst
}

// contentSize bounds the bytes of appendContent(nil, raw) (not counting
// strings that grow as invalid UTF-8 is replaced): raw's size when a
// string, else the sum of its text blocks' sizes.
func contentSize(raw []byte) int {
	if len(raw) > 0 && raw[0] == '"' {
		return len(raw)
	}
	n := 0
	eachBlock(raw, func(_ int, bl *block) {
		if bl.typ == sessions.BlockText {
			n += len(bl.text) + 1
		}
	})
	return n
}

// appendToolCall appends a tool call as searched: its name, then each
// argument as `key: value` with string values decoded (so a command's
// words are words, not JSON escapes).
func (d decoder) appendToolCall(dst, name, args []byte) []byte {
	if d.asWritten && !utf8.Valid(args) {
		// Keys and values that are not strings are written as they are
		// (an escaped key through encoding/json, which reads invalid
		// UTF-8 its own way): read the arguments as pi does first.
		args = js.ToValidUTF8(args)
	}
	if dst == nil {
		dst = d.alloc(len(name) + len(args))
	}
	dst, _ = d.str(dst, name)
	for _, kv := range js.ObjectOf(args) {
		dst = append(dst, '\n')
		dst = append(dst, kv.K...)
		dst = append(dst, ": "...)
		if out, ok := d.str(dst, kv.V); ok {
			dst = out
		} else {
			dst = append(dst, kv.V...)
		}
	}
	return dst
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
