// Package inspect prints pi's reading of a session file as JSON, the
// document `piweb inspect FILE` prints and GET /api/sessions/:key serves:
// sessionId, version, cwd, parentSession, name, leafId, entryCount, tree,
// path and context, laid out as pi's JSON.stringify(reading, null, 2)
// lays it out. The conformance tests hold it to pi's own reading.
//
// It streams: the tree's nodes and the context's messages are written as
// sessions.Reading gives them, one at a time, never the whole document,
// so a 100k-entry session prints in about the memory of its index. It is
// written by hand, not by encoding/json, which refuses values nested more
// than 10,000 deep (pi takes any depth) and escapes what JSON.stringify
// does not; the messages are spliced in as written, only laid out.
//
// It imports sessions (the reading) and internal/js (the layout).
package inspect

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// indent is one level of the layout.
const indent = "  "

// Write writes pi's reading of s at the entry with id leafID ("" for pi's
// leaf) to w, and a final newline. An unknown leafID writes nothing and
// returns a *sessions.Error; an error reading the file midway (it changed
// since s was loaded) returns it with part of the document written.
func Write(w io.Writer, s *sessions.Session, leafID string) error {
	rd, err := s.Read(leafID)
	if err != nil {
		return err
	}
	d := &doc{w: bufio.NewWriterSize(w, 64<<10)}
	d.key(1, "sessionId", true)
	d.quote(rd.SessionID)
	d.key(1, "version", false)
	d.int(rd.Version)
	d.member(1, "cwd", rd.Cwd)
	d.member(1, "parentSession", rd.ParentSession)
	d.member(1, "name", rd.Name)
	d.key(1, "leafId", false)
	if rd.LeafID == nil {
		d.str("null")
	} else {
		d.quote(*rd.LeafID)
	}
	d.key(1, "entryCount", false)
	d.int(rd.EntryCount)

	d.key(1, "tree", false)
	nodes := 0
	err = rd.EachNode(func(n *sessions.Node) error {
		d.item(nodes, 2)
		nodes++
		d.key(3, "id", true)
		d.value(n.ID, 3)
		d.member(3, "parentId", n.ParentID)
		d.member(3, "type", n.Type)
		d.member(3, "label", n.Label)
		d.key(3, "children", false)
		for k, c := range n.Children {
			d.item(k, 4)
			d.value(c, 4)
		}
		d.end(len(n.Children), 4)
		d.close('}', 3)
		return d.err
	})
	if err != nil {
		return err
	}
	d.end(nodes, 2)

	d.key(1, "path", false)
	for k, id := range rd.Path {
		d.item(k, 2)
		d.quote(id)
	}
	d.end(len(rd.Path), 2)

	d.key(1, "context", false)
	d.key(2, "messages", true)
	msgs := 0
	thinking, model, err := rd.EachMessage(func(m json.RawMessage) error {
		d.item(msgs, 3)
		msgs++
		d.value(m, 3)
		return d.err
	})
	if err != nil {
		return err
	}
	d.end(msgs, 3)
	if len(thinking) > 0 {
		d.member(2, "thinkingLevel", thinking)
	}
	d.member(2, "model", model)
	d.close('}', 2)
	d.close('}', 1)
	d.str("\n")
	if d.err != nil {
		return d.err
	}
	return d.w.Flush()
}

// doc writes the document; the first write error sticks and stops the rest.
type doc struct {
	w   *bufio.Writer
	buf []byte // scratch for a value being laid out
	err error
}

// str writes s.
func (d *doc) str(s string) {
	if d.err == nil {
		_, d.err = d.w.WriteString(s)
	}
}

// flush writes buf.
func (d *doc) flush() {
	if d.err == nil {
		_, d.err = d.w.Write(d.buf)
	}
}

// quote writes s as a JSON string.
func (d *doc) quote(s string) {
	if d.err == nil {
		_, d.err = d.w.Write(js.Quote(s))
	}
}

// value writes the JSON value v (null when nil) laid out at depth.
func (d *doc) value(v json.RawMessage, depth int) {
	if len(v) == 0 {
		d.str("null")
		return
	}
	d.buf = js.AppendIndent(d.buf[:0], v, indent, depth)
	d.flush()
	if cap(d.buf) > 1<<20 {
		d.buf = nil // a large message's layout is not kept for the rest
	}
}

// int writes n.
func (d *doc) int(n int) {
	d.buf = strconv.AppendInt(d.buf[:0], int64(n), 10)
	d.flush()
}

// newline starts a line at depth.
func (d *doc) newline(depth int) {
	d.str("\n")
	for range depth {
		d.str(indent)
	}
}

// key starts the member k of an object whose members are at depth: the
// object's first ({) or a next one (,).
func (d *doc) key(depth int, k string, first bool) {
	if first {
		d.str("{")
	} else {
		d.str(",")
	}
	d.newline(depth)
	d.str(`"`)
	d.str(k)
	d.str(`": `)
}

// member writes a member after an object's first, k: v, at depth.
func (d *doc) member(depth int, k string, v json.RawMessage) {
	d.key(depth, k, false)
	d.value(v, depth)
}

// item starts element k of an array whose elements are at depth.
func (d *doc) item(k, depth int) {
	if k == 0 {
		d.str("[")
	} else {
		d.str(",")
	}
	d.newline(depth)
}

// end closes an array of n elements at depth ([] when empty).
func (d *doc) end(n, depth int) {
	if n == 0 {
		d.str("[]")
		return
	}
	d.close(']', depth)
}

// close ends an object or a non-empty array whose members are at depth.
func (d *doc) close(c byte, depth int) {
	d.newline(depth - 1)
	if d.err == nil {
		d.err = d.w.WriteByte(c)
	}
}
