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
	d.str("{\n" + indent + `"sessionId": `)
	d.quote(rd.SessionID)
	d.str(",\n" + indent + `"version": `)
	d.buf = strconv.AppendInt(d.buf[:0], int64(rd.Version), 10)
	d.flush()
	d.member(`"cwd"`, rd.Cwd)
	d.member(`"parentSession"`, rd.ParentSession)
	d.member(`"name"`, rd.Name)
	d.str(",\n" + indent + `"leafId": `)
	if rd.LeafID == nil {
		d.str("null")
	} else {
		d.quote(*rd.LeafID)
	}
	d.str(",\n" + indent + `"entryCount": `)
	d.buf = strconv.AppendInt(d.buf[:0], int64(rd.EntryCount), 10)
	d.flush()

	// "tree": one object per node, at depth 2.
	d.str(",\n" + indent + `"tree": `)
	first := true
	err = rd.EachNode(func(n *sessions.Node) error {
		if first {
			d.str("[\n" + indent + indent + "{")
			first = false
		} else {
			d.str(",\n" + indent + indent + "{")
		}
		const in3 = "\n" + indent + indent + indent
		d.str(in3 + `"id": `)
		d.value(n.ID, 3)
		d.str("," + in3 + `"parentId": `)
		d.value(n.ParentID, 3)
		d.str("," + in3 + `"type": `)
		d.value(n.Type, 3)
		d.str("," + in3 + `"label": `)
		d.value(n.Label, 3)
		d.str("," + in3 + `"children": `)
		d.array(n.Children, 3)
		d.str("\n" + indent + indent + "}")
		return d.err
	})
	if err != nil {
		return err
	}
	if first {
		d.str("[]")
	} else {
		d.str("\n" + indent + "]")
	}

	d.str(",\n" + indent + `"path": `)
	if len(rd.Path) == 0 {
		d.str("[]")
	} else {
		for k, id := range rd.Path {
			if k == 0 {
				d.str("[\n" + indent + indent)
			} else {
				d.str(",\n" + indent + indent)
			}
			d.quote(id)
		}
		d.str("\n" + indent + "]")
	}

	// "context": the messages at depth 3, then the thinking level and model.
	d.str(",\n" + indent + `"context": {` + "\n" + indent + indent + `"messages": `)
	first = true
	thinking, model, err := rd.EachMessage(func(m json.RawMessage) error {
		if first {
			d.str("[\n" + indent + indent + indent)
			first = false
		} else {
			d.str(",\n" + indent + indent + indent)
		}
		d.value(m, 3)
		return d.err
	})
	if err != nil {
		return err
	}
	if first {
		d.str("[]")
	} else {
		d.str("\n" + indent + indent + "]")
	}
	if len(thinking) > 0 {
		d.str(",\n" + indent + indent + `"thinkingLevel": `)
		d.value(thinking, 2)
	}
	d.str(",\n" + indent + indent + `"model": `)
	d.value(model, 2)
	d.str("\n" + indent + "}\n}\n")
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

// member writes a top-level member ,"k": v.
func (d *doc) member(k string, v json.RawMessage) {
	d.str(",\n" + indent + k + ": ")
	d.value(v, 1)
}

// array writes the values vs as an array at depth.
func (d *doc) array(vs []json.RawMessage, depth int) {
	if len(vs) == 0 {
		d.str("[]")
		return
	}
	d.str("[")
	for k, v := range vs {
		if k > 0 {
			d.str(",")
		}
		d.str("\n")
		for range depth + 1 {
			d.str(indent)
		}
		d.value(v, depth+1)
	}
	d.str("\n")
	for range depth {
		d.str(indent)
	}
	d.str("]")
}
