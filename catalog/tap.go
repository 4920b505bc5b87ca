package catalog

import (
	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// lineTap reads the members search needs from those the library's first
// read shows it as it parses a line (sessions.Tap), decoding their
// strings there as buildPieces' own walk would, so that the line is not
// walked again: a gatherer given the line's entry then only assembles
// its pieces (see gatherer.entry). What the read does not show (a
// message or content written with escaped keys, a message that is not an
// object, a custom message's content) the tap walks itself, as
// buildPieces does. Every line is read as for every type: the type is
// known once the line is read. The strings it decodes in the members of
// messages and blocks (texts, thinking, outputs, commands) it decodes in
// place of the read's scan, checking them as it does (MessageString and
// BlockString), so that their bytes are read once.
type lineTap struct {
	g    *gatherer
	d    decoder
	f    lineFields
	line []byte // the line being read, until its entry is taken
	bad  bool   // a member not within the line: the line is walked again
	// The message's and its content's values being read by the library's
	// read, whose members are read as they come (see Message and Content).
	msgBegun, contentBegun bool
	// The start of the value of the member whose string the tap read
	// in place of the read's scan: its own call is then skipped.
	read int
}

var _ sessions.Tap = (*lineTap)(nil)

// Line starts a line: the gatherer adds what it has to the batch first
// (as entry would have before this line), and the line decodes into a
// buffer of the arena.
func (t *lineTap) Line(line []byte) {
	t.release()
	g := t.g
	g.flushIfFull()
	ar := &g.bufs.ar
	t.d = decoder{str: js.AppendValidString, ar: ar, asWritten: true, line: line, buf: ar.alloc(len(line) + 16)}
	t.f = lineFields{m: msgFields{content: contentVal{blocks: ar.blocks[:0]}}, content: contentVal{blocks: ar.lineBlocks[:0]}}
	// A line that does not start with '{' (white space first, as JSON
	// allows) is rare: it is left to buildPieces.
	t.line, t.bad, t.msgBegun, t.contentBegun, t.read = line, len(line) == 0 || line[0] != '{', false, false, 0
}

// at returns where v starts in the line, or -1 (and marks the line bad)
// when it is not a part of it.
func (t *lineTap) at(v []byte) int {
	vs := cap(t.d.line) - cap(v)
	if t.line == nil || len(v) == 0 || vs < 0 || vs >= len(t.d.line) || &t.d.line[vs] != &v[0] {
		t.bad = true
		return -1
	}
	return vs
}

// Member reads a member of the line.
func (t *lineTap) Member(m js.Member) {
	vs := t.at(m.Val)
	if vs < 0 {
		return
	}
	d, f := &t.d, &t.f
	switch string(js.KeyBytes(m.Key)) {
	case "message": // a later one replaces an earlier, as in JSON.parse
		if t.msgBegun { // read as the library read it
			t.msgBegun, t.contentBegun = false, false
			return
		}
		f.m.reset()
		f.m.walk(d, vs)
	case "summary":
		d.member(&f.summary, &f.dSummary, vs, "\n")
	case "customType":
		d.member(&f.customType, &f.dCustomType, vs, "\n")
	case "content":
		f.content.walk(d, vs)
	}
}

// Message starts the members of a message object.
func (t *lineTap) Message() {
	t.f.m.reset()
	t.msgBegun, t.contentBegun = true, false
}

// MessageMember reads a member of the message.
func (t *lineTap) MessageMember(m js.Member) {
	vs := t.at(m.Val)
	if vs < 0 || vs == t.read {
		return
	}
	if t.contentBegun && js.KeyIs(m.Key, "content") { // its blocks were read as they came
		t.contentBegun = false
		c := &t.f.m.content
		c.raw, c.walked = m.Val, true
		return
	}
	t.f.m.member(&t.d, m.Key, vs)
}

// MessageString reads the string value at vs of a member of the message
// in place of the read's scan when search decodes it (see sessions.Tap).
func (t *lineTap) MessageString(key []byte, vs int) int {
	if !t.reading(vs) {
		return 0
	}
	return t.took(vs, t.f.m.member(&t.d, key, vs))
}

// reading reports whether the tap reads the line at vs (a string value):
// the line is its own and not left to buildPieces.
func (t *lineTap) reading(vs int) bool {
	t.d.took = 0
	return t.line != nil && !t.bad && vs > 0 && vs < len(t.d.line)
}

// took returns end, the end of the value at vs that a member function
// just read, when it decoded a string there (which checks it as the
// read's scan would: js.AppendValidStringAt), marking the member's own
// call to be skipped; else 0, leaving the value to the read.
func (t *lineTap) took(vs, end int) int {
	if t.d.took != vs || end <= vs {
		return 0
	}
	t.read = vs
	return end
}

// Content starts the blocks of the message's content array.
func (t *lineTap) Content() {
	c := &t.f.m.content
	*c = contentVal{blocks: c.blocks[:0]}
	t.contentBegun = true
}

// Block starts a content block (an object).
func (t *lineTap) Block() {
	c := &t.f.m.content
	c.blocks = append(c.blocks, block{})
}

// BlockMember reads a member of the block.
func (t *lineTap) BlockMember(m js.Member) {
	vs := t.at(m.Val)
	if vs < 0 || vs == t.read {
		return
	}
	c := &t.f.m.content
	if len(c.blocks) == 0 {
		t.bad = true
		return
	}
	c.blocks[len(c.blocks)-1].member(&t.d, m.Key, vs)
}

// BlockString reads the string value at vs of a member of the block in
// place of the read's scan when search decodes it (see sessions.Tap).
func (t *lineTap) BlockString(key []byte, vs int) int {
	c := &t.f.m.content
	if !t.reading(vs) || len(c.blocks) == 0 {
		return 0
	}
	return t.took(vs, c.blocks[len(c.blocks)-1].member(&t.d, key, vs))
}

// take returns the decoder and members read of line, its buffer's rest
// given back to the arena (as buildPieces does before it assembles), or
// false when they are not line's; either way the tap is done with the
// line.
func (t *lineTap) take(line []byte) (*decoder, *lineFields, bool) {
	ok := t.line != nil && !t.bad && len(line) == len(t.line) && len(line) > 0 && &line[0] == &t.line[0]
	if !ok {
		t.release()
		return nil, nil, false
	}
	t.giveBack(t.d.buf)
	t.line = nil
	return &t.d, &t.f, true
}

// release forgets the line being read, if any (its entry never came),
// giving its buffer back.
func (t *lineTap) release() {
	if t.line == nil {
		return
	}
	t.giveBack(t.d.buf[:0])
	t.line, t.d, t.f = nil, decoder{}, lineFields{}
}

// giveBack returns the line's block arrays and what is left of buf to
// the arena.
func (t *lineTap) giveBack(buf []byte) {
	ar := t.d.ar
	ar.blocks, ar.lineBlocks = t.f.m.content.blocks[:0], t.f.content.blocks[:0]
	ar.giveBack(buf)
}

// done forgets what the tap kept of the last line.
func (t *lineTap) done() {
	t.release()
	t.d, t.f = decoder{}, lineFields{}
}
