package js

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// Object is a JSON object that keeps its key order, as JavaScript objects do.
type Object []KV

// KV is one member of an Object.
type KV struct {
	K string
	V json.RawMessage
}

// ParseObject validates a JSON object and splits it into members; a
// repeated key keeps its first position and its last value, as JSON.parse does.
func ParseObject(b []byte) (Object, bool) {
	var o Object
	_, err := EachMember(b, 0, func(m Member) { o.Set(Key(m.Key), m.Val) })
	return o, err == nil
}

// ObjectOf splits a raw JSON object that was validated before into members
// without validating it again, as ParseObject does. Anything but an object
// gives an empty object.
func ObjectOf(raw []byte) Object {
	var o Object
	Members(raw, func(m Member) { o.Set(Key(m.Key), m.Val) })
	return o
}

// Get returns the value of key k and whether it is present.
func (o Object) Get(k string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.K == k {
			return m.V, true
		}
	}
	return nil, false
}

// Val returns the value of key k, nil when absent.
func (o Object) Val(k string) json.RawMessage {
	v, _ := o.Get(k)
	return v
}

// Set sets key k to v, adding it last when absent, as a JavaScript assignment does.
func (o *Object) Set(k string, v json.RawMessage) {
	for i := range *o {
		if (*o)[i].K == k {
			(*o)[i].V = v
			return
		}
	}
	*o = append(*o, KV{k, v})
}

// SetIf copies key k from src when present.
func (o *Object) SetIf(k string, src Object) {
	if v, ok := src.Get(k); ok {
		o.Set(k, v)
	}
}

// Del removes key k.
func (o *Object) Del(k string) {
	for i := range *o {
		if (*o)[i].K == k {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

// JSON encodes o with its keys in order, as JSON.stringify would.
func (o Object) JSON() json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		quoteTo(&b, m.K)
		b.WriteByte(':')
		b.Write(m.V)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// MarshalJSON encodes o with its keys in order.
func (o Object) MarshalJSON() ([]byte, error) { return o.JSON(), nil }

// Quote encodes s as a JSON string exactly as JSON.stringify does.
func Quote(s string) json.RawMessage {
	var b strings.Builder
	quoteTo(&b, s)
	return json.RawMessage(b.String())
}

// NowISO returns the time as JavaScript's new Date().toISOString() does.
func NowISO() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// The functions below edit one object member of a raw line and keep every
// other byte as written, so a rewritten line differs from the original only
// where it must.

// span is one object member: key from ks to ke (quotes included), value from vs to ve.
type span struct {
	ks, ke, vs, ve int
	key            string
}

// members lists the top-level members of the JSON object b with byte offsets.
func members(b []byte) ([]span, error) {
	var out []span
	_, err := EachMember(b, 0, func(m Member) {
		// m.Key and m.Val are subslices of b: their offsets follow from their capacities.
		ks := cap(b) - cap(m.Key)
		vs := cap(b) - cap(m.Val)
		out = append(out, span{ks: ks, ke: ks + len(m.Key), vs: vs, ve: vs + len(m.Val), key: Key(m.Key)})
	})
	return out, err
}

// Lookup returns the value of key k in object b (the last one, as JSON.parse keeps).
func Lookup(b []byte, k string) (json.RawMessage, bool) {
	ms, err := members(b)
	if err != nil {
		return nil, false
	}
	for j := len(ms) - 1; j >= 0; j-- {
		if ms[j].key == k {
			return b[ms[j].vs:ms[j].ve], true
		}
	}
	return nil, false
}

// SetMember returns object b with key k set to v, keeping every other byte:
// each existing k member gets the value (so JSON.parse sees v), or, when there
// is none, the member is added last, as a JavaScript assignment adds it.
func SetMember(b []byte, k string, v []byte) []byte {
	ms, err := members(b)
	if err != nil {
		return b
	}
	out := make([]byte, 0, len(b)+len(k)+len(v)+4)
	last := 0
	found := false
	for _, m := range ms {
		if m.key == k {
			out = append(append(out, b[last:m.vs]...), v...)
			last = m.ve
			found = true
		}
	}
	if found {
		return append(out, b[last:]...)
	}
	end := bytes.LastIndexByte(b, '}')
	out = append(out, b[:end]...)
	if len(ms) > 0 {
		out = append(out, ',')
	}
	out = append(append(append(out, Quote(k)...), ':'), v...)
	return append(out, b[end:]...)
}

// DelMember returns object b without its k members, keeping every other byte.
func DelMember(b []byte, k string) []byte {
	for {
		ms, err := members(b)
		if err != nil {
			return b
		}
		j := -1
		for x, m := range ms {
			if m.key == k {
				j = x
				break
			}
		}
		if j < 0 {
			return b
		}
		from, to := ms[j].ks, ms[j].ve
		switch {
		case j > 0:
			from = ms[j-1].ve // drop the comma before
		case len(ms) > 1:
			to = ms[1].ks // first member: drop the comma after
		}
		b = append(append([]byte(nil), b[:from]...), b[to:]...)
	}
}

// TrimSpace trims the whitespace JSON.parse allows around a value.
func TrimSpace(b []byte) []byte {
	return bytes.TrimFunc(b, func(r rune) bool { return r < 0x80 && IsWS(byte(r)) })
}

// maxIndent is the depth below which AppendIndent stays compact:
// indenting every level would make the output quadratic in depth.
const maxIndent = 64

// AppendIndent appends the valid JSON value src laid out as encoding/json's
// Indent lays it out (each member and element on a line of its own, indent
// repeated per level, "key": value, empty objects and arrays kept as {} and
// []) when it is a value nested depth levels deep in a larger one. It does
// so without recursion and without a depth limit, so any value pi could
// write can be printed; below maxIndent levels it stays compact. A writer
// of a large document can so lay it out one value at a time.
func AppendIndent(out, src []byte, indent string, depth int) []byte {
	newline := func() {
		if depth > maxIndent {
			return
		}
		out = append(out, '\n')
		for range depth {
			out = append(out, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			end := skipString(src, i)
			out = append(out, src[i:end]...)
			i = end - 1
		case '{', '[':
			close := byte('}')
			if c == '[' {
				close = ']'
			}
			if j := SkipWS(src, i+1); j < len(src) && src[j] == close {
				out = append(out, c, close)
				i = j
				continue
			}
			out = append(out, c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, ':')
			if depth <= maxIndent {
				out = append(out, ' ')
			}
		default:
			out = append(out, c)
		}
	}
	return out
}
