package js

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// AppendString appends to dst what String decodes of raw, and String's
// ok. It is String for readers of much text (the search index): one pass
// to check the UTF-8, then runs between escapes copied whole, with no
// string allocated. Anything unusual (invalid UTF-8, a control
// character, a bad escape) is left to String.
func AppendString(dst, raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return dst, false
	}
	inner := raw[1 : len(raw)-1]
	if !utf8.Valid(inner) {
		return appendSlow(dst, raw)
	}

	k := bytes.IndexByte(inner, '\\')
	if k < 0 {
		return append(dst, inner...), true // as String: no escape, nothing else checked
	}
	start := len(dst)
	dst = slices.Grow(dst, len(inner))
	dst = append(dst, inner[:k]...)
	if !noQuoteOrControl(inner[:k]) {
		return appendSlow(dst[:start], raw)
	}
	inner = inner[k:]
	for {
		// Copy 8 plain bytes at a time (no backslash, quote or control
		// character), then one at a time up to the next escape.
		for len(inner) >= 8 {
			x := binary.LittleEndian.Uint64(inner)
			if !plainWord(x) {
				break
			}
			if n := len(dst); n+8 <= cap(dst) { // always, once grown: nothing decodes longer than written
				dst = dst[:n+8]
				binary.LittleEndian.PutUint64(dst[n:], x)
			} else {
				dst = append(dst, inner[:8]...)
			}
			inner = inner[8:]
		}
		for len(inner) > 0 && inner[0] != '\\' {
			if c := inner[0]; c == '"' || c < 0x20 {
				return appendSlow(dst[:start], raw)
			}
			dst = append(dst, inner[0])
			inner = inner[1:]
		}
		if len(inner) == 0 {
			return dst, true
		}
		// At a backslash.
		if len(inner) < 2 {
			return appendSlow(dst[:start], raw)
		}
		var ok bool
		if dst, inner, ok = appendEscape(dst, inner); !ok {
			return appendSlow(dst[:start], raw)
		}
	}
}

// AppendValidString is AppendString of a raw string from a line whose
// JSON was checked whole (the library's index checks every line): it
// checks neither the UTF-8 (invalid UTF-8 is copied as it is) nor for
// quotes and control characters, and finds escapes 8 bytes at a time.
// Given a string String refuses, it returns some text, never past raw's
// bytes, and ok false when it meets a bad escape.
func AppendValidString(dst, raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return dst, false
	}
	inner := raw[1 : len(raw)-1]
	start := len(dst)
	dst = slices.Grow(dst, len(inner))
	for {
		// Copy 8 bytes at a time (dst has room: nothing decodes longer
		// than written), keeping those before the first backslash.
		at := false // inner starts with a backslash
		for len(inner) >= 8 && len(dst)+8 <= cap(dst) {
			n := len(dst)
			x := binary.LittleEndian.Uint64(inner)
			binary.LittleEndian.PutUint64(dst[n:n+8], x)
			b := x ^ (0x0101010101010101 * '\\')
			if m := (b - 0x0101010101010101) &^ b & 0x8080808080808080; m != 0 {
				k := bits.TrailingZeros64(m) / 8 // the lowest flagged byte is a backslash
				dst, inner, at = dst[:n+k], inner[k:], true
				break
			}
			dst, inner = dst[:n+8], inner[8:]
		}
		if !at {
			k := bytes.IndexByte(inner, '\\')
			if k < 0 {
				return append(dst, inner...), true
			}
			dst, inner = append(dst, inner[:k]...), inner[k:]
		}
		if len(inner) < 2 {
			return dst, false
		}
		switch inner[1] { // the usual ones here, the rest in appendEscape
		case 'n':
			dst, inner = append(dst, '\n'), inner[2:]
		case 't':
			dst, inner = append(dst, '\t'), inner[2:]
		case '"', '\\':
			dst, inner = append(dst, inner[1]), inner[2:]
		default:
			var ok bool
			if dst, inner, ok = appendEscape(dst, inner); !ok {
				return appendSlow(dst[:start], raw)
			}
		}
	}
}

// AppendValidStringAt is AppendValidString of the string at b[i] that
// also returns the index just past its closing quote: it finds the end
// as it decodes, 8 bytes at a time (32 on amd64 with AVX2, the usual
// escapes decoded by the same kernel: append_amd64.s), so the string is
// read once. It checks the string as it goes: ok is true exactly when
// ScanString reads a string at b[i] (ending at the same index), so a
// reader may decode a line's strings in place of scanning them. Like
// ScanString, it leaves UTF-8 unchecked (invalid bytes are copied as
// they are). Given anything else it returns within len(b), ok false.
func AppendValidStringAt(dst, b []byte, i int) (out []byte, end int, ok bool) {
	return appendStringAt(dst, b, i, false)
}

// AppendSpacedStringAt is AppendValidStringAt writing each escape of one
// character (\n, \t, \", \\, \/, \b, \f, \r) as two spaces: the text
// keeps the length it has as written but for \u escapes, and has the
// same words (search.Terms), since each of those characters separates
// words as a space does. It is the text the search index reads: with
// AVX2 it reads 64 bytes at a time whatever escapes of one character
// they hold, with no branch for each (spacedAVX2), and ok and end are
// AppendValidStringAt's.
func AppendSpacedStringAt(dst, b []byte, i int) (out []byte, end int, ok bool) {
	return appendStringAt(dst, b, i, true)
}

// appendStringAt is AppendValidStringAt, or AppendSpacedStringAt when
// spaced.
func appendStringAt(dst, b []byte, i int, spaced bool) (out []byte, end int, ok bool) {
	if i < 0 || i >= len(b) || b[i] != '"' {
		return dst, i, false
	}
	i++
	n := len(dst)
	for i+16 <= len(b) {
		if n+32 > cap(dst) {
			dst = slices.Grow(dst[:n], 32+(len(b)-i)/2)
		}
		dst = dst[:cap(dst)]
		// Copy 8 bytes at a time (32 with AVX2) up to the first quote,
		// backslash or control character, and decode the usual escapes
		// there. While i <= last, b holds the 16 bytes at i
		// and dst has room for 16 at n (n gains no more than i): last+16-i
		// bytes are there to read and to write.
		src, to := unsafe.Pointer(unsafe.SliceData(b)), unsafe.Pointer(unsafe.SliceData(dst))
		last := min(len(b), len(dst)-n+i) - 16
		for i <= last {
			x := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(src, i))[:])
			binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(to, n))[:], x)
			q := x ^ (lsb * '"')
			s := x ^ (lsb * '\\')
			// Quotes, backslashes and control characters: the lowest
			// byte flagged is one of them (a borrow only flags bytes
			// above one that is).
			m := ((q-lsb)&^q | (s-lsb)&^s | (x-lsb*0x20)&^x) & msb
			if m == 0 {
				i, n = i+8, n+8
				if useAVX2 && last-i >= 16 {
					// A string longer than a word: on 32 bytes at a time
					// with the usual escapes, up to the closing quote or a
					// control character (the next word flags it), a \u or
					// the last 32 bytes; spaced, 64 at a time.
					if spaced {
						r := spacedAVX2((*byte)(unsafe.Add(to, n)), (*byte)(unsafe.Add(src, i)), last+16-i)
						i, n = i+r, n+r
					} else {
						r, w := decodeAVX2((*byte)(unsafe.Add(to, n)), (*byte)(unsafe.Add(src, i)), last+16-i, &shortEscape)
						i, n = i+r, n+w
					}
				}
				continue
			}
			k := bits.TrailingZeros64(m) >> 3
			i, n = i+k, n+k
			switch *(*byte)(unsafe.Add(src, i)) {
			case '"':
				return dst[:n], i + 1, true
			case '\\':
			default: // a control character, which JSON refuses in a string
				return dst[:n], len(b), false
			}
			e := shortEscape[*(*byte)(unsafe.Add(src, i+1))]
			if e == 0 {
				break // \u, or no escape of JSON's
			}
			if spaced {
				*(*[2]byte)(unsafe.Add(to, n)) = [2]byte{' ', ' '}
				i, n = i+2, n+2
				continue
			}
			*(*byte)(unsafe.Add(to, n)) = e
			i, n = i+2, n+1
		}
		if i > last {
			continue
		}
		rest := b[i:]
		if dst, rest, ok = appendEscape(dst[:n], rest); !ok {
			return dst, len(b), false
		}
		i, n = len(b)-len(rest), len(dst)
	}
	dst = dst[:n]
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			return dst, i + 1, true
		case c < 0x20:
			return dst, len(b), false
		case c == '\\':
			if i+1 >= len(b) {
				return dst, len(b), false
			}
			if spaced && shortEscape[b[i+1]] != 0 {
				dst = append(dst, ' ', ' ')
				i += 2
				continue
			}
			rest := b[i:]
			if dst, rest, ok = appendEscape(dst, rest); !ok {
				return dst, len(b), false
			}
			i = len(b) - len(rest)
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst, len(b), false
}

// appendEscape appends what the escape at the start of inner (a
// backslash and at least one byte) decodes to and returns the rest of
// inner, or ok false for an escape JSON does not have.
func appendEscape(dst, inner []byte) ([]byte, []byte, bool) {
	if e := shortEscape[inner[1]]; e != 0 {
		return append(dst, e), inner[2:], true
	}
	n := 2
	switch inner[1] {
	case 'u':
		rr := getu4(inner)
		if rr < 0 {
			return dst, inner, false
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
		return dst, inner, false
	}
	return dst, inner[n:], true
}

// appendSlow is AppendString through String.
func appendSlow(dst, raw []byte) ([]byte, bool) {
	s, ok := String(raw)
	return append(dst, s...), ok
}

// plainWord reports whether none of the 8 bytes of x is '"', '\\' or a
// control character (the haszero and hasless tricks: exact for "is there
// any such byte").
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := x ^ (ones * '"')
	b := x ^ (ones * '\\')
	return ((q-ones)&^q|(b-ones)&^b|(x-ones*0x20)&^x)&highs == 0
}

// noQuoteOrControl reports whether b holds no '"' and no control character
// (unquote refuses them), 8 bytes at a time.
func noQuoteOrControl(b []byte) bool {
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
