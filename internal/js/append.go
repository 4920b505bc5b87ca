package js

import (
	"bytes"
	"encoding/binary"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendString appends to dst what String decodes of raw, and String's
// ok. It is String for readers of much text (the search index): one pass
// to check the UTF-8, then runs between escapes copied whole, with no
// string allocated. Anything unusual (invalid UTF-8, a control
// character, a bad escape) is left to String.
func AppendString(dst, raw []byte) ([]byte, bool) { return appendString(dst, raw, false) }

// AppendValidString is AppendString of a raw string known to hold valid
// UTF-8 (a part of a line checked whole): it does not check it again.
// Given invalid UTF-8 it copies it as it is.
func AppendValidString(dst, raw []byte) ([]byte, bool) { return appendString(dst, raw, true) }

func appendString(dst, raw []byte, valid bool) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return dst, false
	}
	inner := raw[1 : len(raw)-1]
	// A valid raw string's inside is valid when raw ends with its
	// closing quote (String drops raw's last byte, whatever it is).
	if !(valid && raw[len(raw)-1] == '"') && !utf8.Valid(inner) {
		return appendSlow(dst, raw)
	}
	k := bytes.IndexByte(inner, '\\')
	if k < 0 {
		return append(dst, inner...), true // as String: no escape, nothing else checked
	}
	start := len(dst)
	for {
		run := inner
		if k >= 0 {
			run = inner[:k]
		}
		if !plainRun(run) {
			return appendSlow(dst[:start], raw)
		}
		dst = append(dst, run...)
		if k < 0 {
			return dst, true
		}
		inner = inner[k:] // at a backslash
		if len(inner) < 2 {
			return appendSlow(dst[:start], raw)
		}
		n := 2
		switch inner[1] {
		case '"', '\\', '/':
			dst = append(dst, inner[1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			rr := getu4(inner)
			if rr < 0 {
				return appendSlow(dst[:start], raw)
			}
			n = 6
			if utf16.IsSurrogate(rr) {
				if dec := utf16.DecodeRune(rr, getu4(inner[6:])); dec != unicode.ReplacementChar {
					rr, n = dec, 12
				} else {
					rr = unicode.ReplacementChar
				}
			}
			dst = utf8.AppendRune(dst, rr)
		default:
			return appendSlow(dst[:start], raw)
		}
		inner = inner[n:]
		k = bytes.IndexByte(inner, '\\')
	}
}

// appendSlow is AppendString through String.
func appendSlow(dst, raw []byte) ([]byte, bool) {
	s, ok := String(raw)
	return append(dst, s...), ok
}

// plainRun reports whether b holds no '"' and no control character
// (unquote refuses them), 8 bytes at a time.
func plainRun(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		q := x ^ (ones * '"')
		if ((q-ones)&^q|(x-ones*0x20)&^x)&highs != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c == '"' || c < 0x20 {
			return false
		}
	}
	return true
}
