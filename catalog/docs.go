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
	return (&decoder{str: js.AppendString}).pieces(e, line)
}

// buildPieces is pieces of a line as written (Library.ReadLinesAsWritten)
// for the store, which reads texts holding invalid UTF-8 as pi does: their
// strings are decoded without checking their UTF-8 (js.AppendValidString),
// as the pass over the line meets them, and their texts are in ar's
// memory, until ar is reset; the slice is ar's too, until the next call.
func buildPieces(ar *textArena, e *sessions.Entry, line []byte) []piece {
	return (&decoder{str: js.AppendValidString, ar: ar, asWritten: true}).pieces(e, line)
}

// decoder decodes the strings of pieces with str (js.AppendString, or
// js.AppendValidString for the store: asWritten), into memory of their
// own or from ar. With ar, the pass over a line decodes the strings it
// reads into buf as it meets them (see dec); for the store, each escape
// of one character as two spaces (js.AppendSpacedStringAt), which give
// the same words.
type decoder struct {
	str       func(dst, raw []byte) ([]byte, bool)
	ar        *textArena
	asWritten bool
	line, buf []byte
	took      int // where member last decoded a string value, checking it (see lineTap.took)
}

// strAt decodes the string at d.line[vs:] onto buf (see
// js.AppendValidStringAt), spaced for the store.
func (d *decoder) strAt(buf []byte, vs int) ([]byte, int, bool) {
	if d.asWritten {
		return js.AppendSpacedStringAt(buf, d.line, vs)
	}
	return js.AppendValidStringAt(buf, d.line, vs)
}

// dec is where the pass decoded a value into the decoder's buf: a
// separator at buf[pre:at] ("\n", or "$ " before a command), then its
// text, buf[at:end] (none when not a string). at is 0 when not decoded.
type dec struct{ pre, at, end int }

// alloc returns an empty buffer for about n bytes.
func (d *decoder) alloc(n int) []byte {
	if d.ar == nil {
		return make([]byte, 0, n)
	}
	return d.ar.alloc(n)
}

// textArena hands out the memory of a file's texts for the search index
// from chunks it keeps from file to file: the store copies what it keeps.
type textArena struct {
	chunks [][]byte
	cur    int     // the chunk being filled
	blocks []block // a line's content blocks, for the next line
	// a line's own content blocks (a custom message's), for the next
	// line: lineTap reads both kinds in a line
	lineBlocks []block
	out        []piece // a line's pieces (buildPieces), for the next line
}

const arenaChunk = 4 << 20

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

// giveBack returns to the arena what it gave last beyond b's length,
// b being that buffer (or a buffer grown out of it, which keeps it all).
func (a *textArena) giveBack(b []byte) {
	if a.cur >= len(a.chunks) {
		return
	}
	c := a.chunks[a.cur]
	if k := len(c) - cap(b); k >= 0 && cap(b) > 0 && &c[k] == &b[:1][0] {
		a.chunks[a.cur] = c[:k+len(b)]
	}
}

// arenaKeep is how much memory a reset arena keeps.
const arenaKeep = 16 << 20

// reset makes all the memory free again (what alloc gave is overwritten);
// it keeps chunks up to arenaKeep bytes, and forgets the last line.
func (a *textArena) reset() {
	clear(a.blocks[:cap(a.blocks)])
	clear(a.lineBlocks[:cap(a.lineBlocks)])
	clear(a.out[:cap(a.out)])
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

// lineFields are the members of a line search reads, as written, and
// where the pass decoded them (buildPieces).
type lineFields struct {
	m                     msgFields  // the message's
	content               contentVal // the line's own (a custom message's)
	summary, customType   []byte
	dSummary, dCustomType dec
}

// ofEntry returns the pieces of entry e that its index record holds
// (done), or, when it is of a type whose text is in its line (more),
// none yet.
func (d *decoder) ofEntry(e *sessions.Entry) (out []piece, more bool) {
	if d.ar != nil {
		out = d.ar.out[:0]
	}
	addString := func(part int, typ, role, text string) {
		if strings.TrimSpace(text) != "" {
			out = append(out, piece{part, typ, role, text})
		}
	}
	switch e.Type {
	case sessions.TypeLabel:
		addString(0, "label", "label", e.Label())
	case sessions.TypeSessionInfo:
		addString(0, "name", "name", e.Text)
	case sessions.TypeModelChange:
		addString(0, "model", "model", e.Text)
	case sessions.TypeMessage, sessions.TypeCustomMessage, sessions.TypeCompaction, sessions.TypeBranchSummary:
		return out, true
	}
	return out, false // no text searched
}

func (d *decoder) pieces(e *sessions.Entry, line []byte) []piece {
	out, more := d.ofEntry(e)
	if !more {
		if d.ar != nil {
			d.ar.out = out
		}
		return out
	}
	// One pass over the line: the message and content blocks are read
	// where they stand, not skipped first and read again; with an arena,
	// the strings are decoded there too, into one buffer of the line's
	// size (nothing decodes longer than written), of which what is left
	// goes back to the arena after the pass.
	d.line = line
	if d.ar != nil {
		d.buf = d.ar.alloc(len(line) + 16)
	}
	var f lineFields
	m, content := &f.m, &f.content
	if d.ar != nil {
		m.content.blocks = d.ar.blocks[:0]
		content.blocks = d.ar.blocks[:0]
	}
	message := e.Type == sessions.TypeMessage
	walkObject(line, js.SkipWS(line, 0), func(key []byte, vs int) int {
		switch string(js.KeyBytes(key)) {
		case "message": // a later one replaces an earlier, as in JSON.parse
			if message {
				m.reset()
				return m.walk(d, vs)
			}
		case "summary":
			if !message {
				return d.member(&f.summary, &f.dSummary, vs, "\n")
			}
		case "customType":
			if !message {
				return d.member(&f.customType, &f.dCustomType, vs, "\n")
			}
		case "content":
			if !message {
				return content.walk(d, vs)
			}
		}
		return 0
	})
	if d.ar != nil {
		if message {
			d.ar.blocks = m.content.blocks[:0]
		} else {
			d.ar.blocks = content.blocks[:0]
		}
		d.ar.giveBack(d.buf)
	}
	out = d.assemble(out, e, &f)
	d.line, d.buf = nil, nil
	if d.ar != nil {
		d.ar.out = out
	}
	return out
}

// assemble appends to out the pieces of entry e, a message, custom
// message, compaction or branch summary whose line's members are f, read
// from d.line (decoded in d.buf).
func (d *decoder) assemble(out []piece, e *sessions.Entry, f *lineFields) []piece {
	add := func(part int, typ, role string, text []byte) {
		if len(bytes.TrimSpace(text)) != 0 {
			out = append(out, piece{part, typ, role, own(text)})
		}
	}
	m := &f.m
	switch e.Type {
	case sessions.TypeMessage:
		role := e.Role
		if role == "" {
			role = js.Str(m.role)
		}
		switch role {
		case sessions.RoleUser:
			add(0, "text", "user", d.content(nil, nil, &m.content))
		case sessions.RoleAssistant:
			eachBlock(&m.content, func(k int, bl *block) {
				switch bl.typ {
				case sessions.BlockText:
					add(k, "text", "assistant", d.text(bl.text, bl.dText))
				case sessions.BlockThinking:
					add(k, "thinking", "assistant", d.text(bl.thinking, bl.dThinking))
				case sessions.BlockToolCall:
					if bl.dCall.at > 0 {
						add(k, "toolCall", "tool", d.buf[bl.dCall.at:bl.dCall.end])
					} else {
						add(k, "toolCall", "tool", d.appendToolCall(nil, bl.name, bl.args))
					}
				}
			})
			add(partError, "error", "assistant", d.text(m.errorMessage, m.dErrorMessage))
		case sessions.RoleToolResult:
			add(0, "toolResult", "tool", d.content(m.toolName, &m.dToolName, &m.content))
		case sessions.RoleBash:
			if t, ok := d.joined(m.dCommand, m.dOutput); ok {
				add(0, "bash", "bash", t)
				break
			}
			b := d.alloc(3 + len(m.command) + len(m.output))
			b = append(b, "$ "...)
			b, _ = d.str(b, m.command)
			b = append(b, '\n')
			b, _ = d.str(b, m.output)
			add(0, "bash", "bash", b)
		case sessions.RoleBranchSummary, sessions.RoleCompactionSummary:
			add(0, role, "summary", d.text(m.summary, m.dSummary))
		case sessions.RoleCustom, "hookMessage":
			add(0, "custom", "custom", d.content(m.customType, &m.dCustomType, &m.content))
		default:
			add(0, "text", role, d.content(nil, nil, &m.content))
		}
	case sessions.TypeCustomMessage:
		add(0, "custom", "custom", d.content(f.customType, &f.dCustomType, &f.content))
	case sessions.TypeCompaction:
		add(0, "compaction", "summary", d.text(f.summary, f.dSummary))
	case sessions.TypeBranchSummary:
		add(0, "branchSummary", "summary", d.text(f.summary, f.dSummary))
	}
	return out
}

// own returns b as a string without copying it; b is never written again.
func own(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// decode appends the decoded string raw (js.Str) to dst, allocating it
// once at about its size when dst is nil.
func (d *decoder) decode(dst, raw []byte) []byte {
	if dst == nil {
		dst = d.alloc(len(raw))
	}
	dst, _ = d.str(dst, raw)
	return dst
}

// text returns the decoded string raw: where the pass decoded it (at),
// else decoded now.
func (d *decoder) text(raw []byte, at dec) []byte {
	if at.at > 0 {
		return d.buf[at.at:at.end]
	}
	return d.decode(nil, raw)
}

// joined returns the texts of a and b joined by b's separator, a's
// separator before them, when the pass decoded them one after the other.
func (d *decoder) joined(a, b dec) ([]byte, bool) {
	if a.at == 0 || b.at == 0 || b.pre != a.end {
		return nil, false
	}
	return d.buf[a.pre:b.end], true
}

// content returns the decoded string line and a newline (when at, where
// the pass decoded line, is not nil), then the text blocks of c joined by
// newlines: where the pass decoded them one after the other, else
// decoded now (appendContent).
func (d *decoder) content(line []byte, at *dec, c *contentVal) []byte {
	from, end := -1, -1
	if at != nil {
		if at.at == 0 {
			return d.appendContent(d.appendLine(nil, line, c), c)
		}
		from, end = at.at, at.end
	}
	inPlace := true
	next := func(t dec) {
		switch {
		case t.at == 0 || end >= 0 && t.pre != end:
			inPlace = false
		case from < 0:
			from = t.at
		}
		end = t.end
	}
	switch {
	case len(c.raw) > 0 && c.raw[0] == '"':
		next(c.dStr)
	case c.walked:
		for k := range c.blocks {
			if bl := &c.blocks[k]; bl.typ == sessions.BlockText {
				next(bl.dText)
			}
		}
	}
	if !inPlace || at != nil && end == at.end {
		// Not decoded one after the other, or no text after line's newline.
		if at != nil {
			return d.appendContent(d.appendLine(nil, line, c), c)
		}
		return d.appendContent(nil, c)
	}
	if from < 0 {
		return nil
	}
	return d.buf[from:end]
}

// appendLine starts a piece with the decoded string raw and a newline,
// leaving room for the decoded content after it.
func (d *decoder) appendLine(dst, raw []byte, content *contentVal) []byte {
	if dst == nil {
		dst = d.alloc(len(raw) + 1 + contentSize(content))
	}
	dst, _ = d.str(dst, raw)
	return append(dst, '\n')
}

// member sets *v to the value at d.line[vs:] and returns its end; with an
// arena, *at to where it decodes, after sep, into d.buf (a value other
// than a string has no text there, only sep).
func (d *decoder) member(v *[]byte, at *dec, vs int, sep string) int {
	if d.ar == nil {
		return span(v, d.line, vs)
	}
	pre := len(d.buf)
	d.buf = append(d.buf, sep...)
	t := dec{pre: pre, at: len(d.buf)}
	if d.line[vs] != '"' {
		end := span(v, d.line, vs)
		t.end = t.at
		*at = t
		return end
	}
	buf, end, ok := d.strAt(d.buf, vs)
	if !ok { // not a line that was checked: decoded apart
		end = span(v, d.line, vs)
		*at = dec{}
		d.buf = d.buf[:pre]
		return end
	}
	d.buf = buf
	t.end = len(buf)
	*v, *at, d.took = d.line[vs:end], t, vs
	return end
}

// msgFields are the members of a message search reads, as written, and
// where the pass decoded them (buildPieces).
type msgFields struct {
	role, toolName, command, output, errorMessage, customType, summary []byte
	dToolName, dCommand, dOutput, dErrorMessage, dCustomType, dSummary dec
	content                                                            contentVal
}

// reset empties m for another message, keeping its blocks' array.
func (m *msgFields) reset() { *m = msgFields{content: contentVal{blocks: m.content.blocks[:0]}} }

// walk reads the message object at line[vs:] and returns its end.
func (m *msgFields) walk(d *decoder, vs int) int {
	line := d.line
	if line[vs] != '{' {
		return 0 // no members
	}
	return walkObject(line, vs, func(key []byte, vs int) int { return m.member(d, key, vs) })
}

// member reads the message's member of key at d.line[vs:] when search
// reads it and returns its end, else 0.
func (m *msgFields) member(d *decoder, key []byte, vs int) int {
	switch string(js.KeyBytes(key)) {
	case "role":
		return span(&m.role, d.line, vs)
	case "content":
		return m.content.walk(d, vs)
	case "toolName":
		return d.member(&m.toolName, &m.dToolName, vs, "\n")
	case "command":
		return d.member(&m.command, &m.dCommand, vs, "$ ")
	case "output":
		return d.member(&m.output, &m.dOutput, vs, "\n")
	case "errorMessage":
		return d.member(&m.errorMessage, &m.dErrorMessage, vs, "\n")
	case "customType":
		return d.member(&m.customType, &m.dCustomType, vs, "\n")
	case "summary":
		return d.member(&m.summary, &m.dSummary, vs, "\n")
	}
	return 0
}

// contentVal is a content value as written, and its object blocks when
// it is an array (walked), read in the same pass as the line; dStr is
// where the pass decoded it when a string.
type contentVal struct {
	raw    []byte
	dStr   dec
	blocks []block
	walked bool
}

// walk reads the content value at line[vs:] and returns its end.
func (c *contentVal) walk(d *decoder, vs int) int {
	line := d.line
	*c = contentVal{blocks: c.blocks[:0]}
	if line[vs] != '[' {
		return d.member(&c.raw, &c.dStr, vs, "\n")
	}
	end := walkArray(line, vs, func(es int) int {
		if line[es] != '{' {
			return 0
		}
		c.blocks = append(c.blocks, block{})
		bl := &c.blocks[len(c.blocks)-1]
		return walkObject(line, es, func(key []byte, vs int) int { return bl.member(d, key, vs) })
	})
	c.raw, c.walked = line[vs:end], true
	return end
}

// member reads the block's member of key at d.line[vs:] when search
// reads it and returns its end, else 0.
func (bl *block) member(d *decoder, key []byte, vs int) int {
	line := d.line
	switch string(js.KeyBytes(key)) {
	case "type":
		var typ []byte
		end := span(&typ, line, vs)
		bl.typ = blockType(typ)
		return end
	case "text":
		return d.member(&bl.text, &bl.dText, vs, "\n")
	case "thinking":
		return d.member(&bl.thinking, &bl.dThinking, vs, "\n")
	case "name":
		bl.dCall = dec{}
		return d.member(&bl.name, &bl.dName, vs, "\n")
	case "arguments":
		bl.dCall = dec{}
		if bl.dName.at > 0 && bl.dName.end == len(d.buf) {
			if end, ok := d.args(vs); ok { // right after the name
				bl.args, bl.dCall = line[vs:end], dec{pre: bl.dName.pre, at: bl.dName.at, end: len(d.buf)}
				return end
			}
		}
		return span(&bl.args, line, vs)
	}
	return 0
}

// args decodes the arguments object at d.line[vs:] into d.buf as
// appendToolCall writes them, and returns its end; ok is false (d.buf
// as it was) for those appendToolCall reads another way: not an object,
// a key that is not valid UTF-8, a repeated key.
func (d *decoder) args(vs int) (int, bool) {
	line, start := d.line, len(d.buf)
	if line[vs] != '{' {
		return 0, false
	}
	var kbuf [8][]byte
	keys, ok := kbuf[:0], true
	end := walkObject(line, vs, func(key []byte, vs int) int {
		if !ok || !utf8.Valid(key) {
			ok = false
			return 0
		}
		k := js.KeyBytes(key)
		for _, p := range keys {
			if bytes.Equal(p, k) {
				ok = false
				return 0
			}
		}
		keys = append(keys, k)
		d.buf = append(append(append(d.buf, '\n'), k...), ": "...)
		if line[vs] != '"' {
			end := js.Skip(line, vs)
			d.buf = append(d.buf, line[vs:end]...)
			return end
		}
		buf, end, sok := d.strAt(d.buf, vs)
		ok = ok && sok
		d.buf = buf
		return end
	})
	if !ok {
		d.buf = d.buf[:start]
	}
	return end, ok
}

// blockType is js.Str of a block's type, without allocating for the
// usual ones.
func blockType(raw []byte) string {
	switch string(raw) {
	case `"text"`:
		return sessions.BlockText
	case `"thinking"`:
		return sessions.BlockThinking
	case `"toolCall"`:
		return sessions.BlockToolCall
	case `"image"`:
		return "image"
	}
	return js.Str(raw)
}

// span sets *v to the value at line[vs:] and returns its end.
func span(v *[]byte, line []byte, vs int) int {
	end := js.Skip(line, vs)
	*v = line[vs:end]
	return end
}

// walkObject calls fn with the key and value start of each member of the
// object at b[i] (valid JSON, as js.Members reads it), fn returning the
// end of the value when it read it, else 0 to have it skipped; it returns
// the end of the object.
func walkObject(b []byte, i int, fn func(key []byte, vs int) int) int {
	if i >= len(b) || b[i] != '{' {
		return i
	}
	i = js.SkipWS(b, i+1)
	for i < len(b) && b[i] == '"' {
		ke := js.Skip(b, i)
		j := js.SkipWS(b, ke)
		if j >= len(b) || b[j] != ':' {
			return len(b)
		}
		vs := js.SkipWS(b, j+1)
		if vs >= len(b) {
			return len(b)
		}
		ve := fn(b[i:ke], vs)
		if ve <= 0 {
			ve = js.Skip(b, vs)
		}
		if ve <= vs {
			return len(b)
		}
		i = js.SkipWS(b, ve)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = js.SkipWS(b, i+1)
	}
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	return len(b)
}

// walkArray calls fn with the start of each element of the array at b[i]
// (valid JSON, as js.Elems reads it), fn returning the end of the element
// when it read it, else 0 to have it skipped; it returns the end of the array.
func walkArray(b []byte, i int, fn func(es int) int) int {
	i = js.SkipWS(b, i+1)
	for i < len(b) && b[i] != ']' {
		end := fn(i)
		if end <= 0 {
			end = js.Skip(b, i)
		}
		if end <= i {
			return len(b)
		}
		i = js.SkipWS(b, end)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = js.SkipWS(b, i+1)
	}
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	return len(b)
}

// block is a content block's members that search reads, as written, and
// where the pass decoded its texts (buildPieces).
type block struct {
	typ                        string
	text, thinking, name, args []byte
	dText, dThinking, dName    dec
	dCall                      dec // the whole tool call's text (appendToolCall)
}

// eachBlock calls fn with each object block of content (a string is one
// text block), reading only the members search needs: an image's data is
// never decoded.
func eachBlock(c *contentVal, fn func(k int, bl *block)) {
	if c.walked {
		for k := range c.blocks {
			fn(k, &c.blocks[k])
		}
		return
	}
	raw := c.raw
	if len(raw) > 0 && raw[0] == '"' {
		fn(0, &block{typ: sessions.BlockText, text: raw, dText: c.dStr})
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
func (d *decoder) appendContent(dst []byte, c *contentVal) []byte {
	if raw := c.raw; len(raw) > 0 && raw[0] == '"' {
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
		dst = d.alloc(contentSize(c))
	}
	n := 0
	eachBlock(c, func(_ int, bl *block) {
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
func contentSize(c *contentVal) int {
	if raw := c.raw; len(raw) > 0 && raw[0] == '"' {
		return len(raw)
	}
	n := 0
	eachBlock(c, func(_ int, bl *block) {
		if bl.typ == sessions.BlockText {
			n += len(bl.text) + 1
		}
	})
	return n
}

// appendToolCall appends a tool call as searched: its name, then each
// argument as `key: value` with string values decoded (so a command's
// words are words, not JSON escapes).
func (d *decoder) appendToolCall(dst, name, args []byte) []byte {
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
	// The members as js.ObjectOf reads them (a repeated key keeps its
	// first place and its last value), keys decoded only when escaped.
	type member struct{ k, v []byte }
	var buf [8]member
	ms := buf[:0]
	js.Members(args, func(m js.Member) {
		k := js.KeyBytes(m.Key)
		for i := range ms {
			if bytes.Equal(ms[i].k, k) {
				ms[i].v = m.Val
				return
			}
		}
		ms = append(ms, member{k, m.Val})
	})
	for _, m := range ms {
		dst = append(dst, '\n')
		dst = append(dst, m.k...)
		dst = append(dst, ": "...)
		if out, ok := d.str(dst, m.v); ok {
			dst = out
		} else {
			dst = append(dst, m.v...)
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
