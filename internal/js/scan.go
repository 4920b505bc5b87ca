// Package js reads JSON exactly as JavaScript does, for reading what pi
// (a Node.js program) wrote: a validator as strict as JSON.parse that
// allocates nothing and never recurses, spans of object members, and
// JavaScript's conversions of values (String(), Number(), truthiness,
// JSON.stringify, Date parsing, UTF-16 lengths and cuts, trim).
//
// It knows nothing of pi's format; sessions builds on it.
package js

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// The scanner below validates JSON exactly as strictly as JavaScript's
// JSON.parse (which is what pi uses), without allocating and without
// recursion, and reports the byte spans of the members a caller asks for.
// encoding/json would allocate a tree per line; on a 1 GB scan that
// dominates, so the index reads only spans and decodes the few strings it keeps.

// syntaxError describes why a line is not valid JSON.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("invalid JSON at byte %d: %s", e.off, e.msg) }

// ErrAt returns a syntax error at byte off.
func ErrAt(off int, format string, args ...any) error {
	return &syntaxError{off: off, msg: fmt.Sprintf(format, args...)}
}

// IsWS reports whether c is whitespace to JSON.parse.
func IsWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipWS returns the index of the first non-whitespace byte at or after i.
func SkipWS(b []byte, i int) int {
	for i < len(b) && IsWS(b[i]) {
		i++
	}
	return i
}

// SWAR constants: one in every byte, the high bit of every byte, and the
// low seven bits of every byte.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
	lo7 = 0x7F7F7F7F7F7F7F7F
)

// special8 returns a mask of the high bits of those of the 8 bytes of x
// that are '"', '\\' or a control character, all 8 tested at once (the
// classic haszero/hasless tricks). Borrows can flag bytes after a flagged
// one, never before it, so the lowest bit set marks the first such byte
// exactly.
func special8(x uint64) uint64 {
	q := x ^ (lsb * '"')
	s := x ^ (lsb * '\\')
	return ((q-lsb)&^q | (s-lsb)&^s | (x-lsb*0x20)&^x) & msb
}

// plainRun returns the index of the first byte at or after i that is '"',
// '\\' or a control character, or len(b).
func plainRun(b []byte, i int) int {
	for i+8 <= len(b) {
		if m := special8(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
		i++
	}
	return i
}

// ScanString validates the string starting at b[i] == '"' and returns the
// index just past its closing quote and whether it holds escapes. Its
// bytes are not checked as UTF-8: Node decodes a file before JSON.parse
// sees it, so invalid UTF-8 is no JSON error (readers decode lines as
// Node does, see ToValidUTF8).
func ScanString(b []byte, i int) (end int, escaped bool, err error) {
	if end = shortString(b, i); end > 0 {
		return end, false, nil
	}
	return scanFrom(b, i+1, i, false, true)
}

// shortString returns the index just past the string at b[i] == '"' when
// it closes within 16 bytes holding nothing special, else 0: most strings
// of a line are keys, ids and dates.
func shortString(b []byte, i int) int {
	if i+17 > len(b) {
		return 0
	}
	m := special8(binary.LittleEndian.Uint64(b[i+1:]))
	k := i + 1
	if m == 0 {
		m = special8(binary.LittleEndian.Uint64(b[i+9:]))
		k += 8
	}
	if m == 0 {
		return 0
	}
	if k += bits.TrailingZeros64(m) >> 3; b[k] == '"' {
		return k + 1
	}
	return 0
}

// longString is the length past which a string is read in blocks.
const longString = 48

// scanFrom goes on reading the string that starts at b[start] from b[i],
// a byte that is not inside an escape, one special byte at a time; blocks,
// when allowed, take over once the string is long.
func scanFrom(b []byte, i, start int, escaped, blocks bool) (int, bool, error) {
	for {
		if blocks && i-start >= longString && i+64 <= len(b) {
			return scanBlocks(b, i, start, escaped)
		}
		i = plainRun(b, i)
		if i >= len(b) {
			return 0, false, ErrAt(i, "unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, ErrAt(i, "unterminated escape")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return 0, false, ErrAt(i, "short \\u escape")
				}
				for k := i + 2; k < i+6; k++ {
					if !isHex(b[k]) {
						return 0, false, ErrAt(k, "bad \\u escape")
					}
				}
				i += 6
			default:
				return 0, false, ErrAt(i, "bad escape \\%c", b[i+1])
			}
		default:
			return 0, false, ErrAt(i, "control character in string")
		}
	}
}

// movemask packs the high bits of the 8 bytes of m (which has no other
// bits set) into its low 8 bits, byte k's into bit k.
func movemask(m uint64) uint64 { return (m >> 7) * 0x0102040810204080 >> 56 }

// word returns, for the 8 bytes of x, the movemasks of its quotes and of
// its backslashes, and the high bits of its control characters.
func word(x uint64) (q, bs, ctl uint64) {
	lo := x & lo7 // "| x" below: a byte with the high bit set matches neither '"' nor '\\'
	q = movemask(^(lo ^ (lsb * '"') + lo7 | x) & msb)
	bs = movemask(^(lo ^ (lsb * '\\') + lo7 | x) & msb)
	return q, bs, ^(lo + lsb*0x60 | x) & msb
}

// escapedBits returns the bits of the bytes that backslashes escape in a
// block whose backslashes are bs, without a branch per backslash: a run of
// backslashes escapes every second byte after its start and the byte after
// it when the run is odd. carry says the block's first byte is escaped, and
// is set for the next block.
func escapedBits(bs uint64, carry *uint64) uint64 {
	const even = 0x5555555555555555
	bs &^= *carry // an escaped backslash starts nothing
	follows := bs<<1 | *carry
	oddStarts := bs &^ even &^ follows
	evenRuns, c := bits.Add64(oddStarts, bs, 0)
	*carry = c
	return (even ^ evenRuns<<1) & follows
}

// masks64 returns the masks of the quotes, the backslashes and the
// control characters of the 64 bytes of blk, byte k's in bit k.
func masks64(b []byte) (q, bs, ctl uint64) {
	blk := (*[64]byte)(b)
	q0, b0, c0 := word(binary.LittleEndian.Uint64(blk[0:]))
	q1, b1, c1 := word(binary.LittleEndian.Uint64(blk[8:]))
	q2, b2, c2 := word(binary.LittleEndian.Uint64(blk[16:]))
	q3, b3, c3 := word(binary.LittleEndian.Uint64(blk[24:]))
	q4, b4, c4 := word(binary.LittleEndian.Uint64(blk[32:]))
	q5, b5, c5 := word(binary.LittleEndian.Uint64(blk[40:]))
	q6, b6, c6 := word(binary.LittleEndian.Uint64(blk[48:]))
	q7, b7, c7 := word(binary.LittleEndian.Uint64(blk[56:]))
	q = q0 | q1<<8 | q2<<16 | q3<<24 | q4<<32 | q5<<40 | q6<<48 | q7<<56
	bs = b0 | b1<<8 | b2<<16 | b3<<24 | b4<<32 | b5<<40 | b6<<48 | b7<<56
	if c0|c1|c2|c3|c4|c5|c6|c7 != 0 { // rare: packed only when there is one
		ctl = movemask(c0) | movemask(c1)<<8 | movemask(c2)<<16 | movemask(c3)<<24 |
			movemask(c4)<<32 | movemask(c5)<<40 | movemask(c6)<<48 | movemask(c7)<<56
	}
	return q, bs, ctl
}

// validEscape tells the bytes a backslash may escape ('u' is checked apart).
var validEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true, 'u': true}

// scanBlocks reads the string that starts at b[start] from b[i] on, 64
// bytes at a time: masks of its quotes and backslashes, with escapes worked
// out from the backslashes (see escapedBits), so that only the end of the
// string and the escapes' letters are looked at one by one. On anything
// invalid it reads the string again one byte at a time, for the same error.
func scanBlocks(b []byte, i, start int, escaped bool) (int, bool, error) {
	var carry uint64
	for ; i+64 <= len(b); i += 64 {
		q, bs, c := masks64(b[i : i+64])
		var esc uint64
		if bs|carry != 0 {
			esc = escapedBits(bs, &carry)
		}
		end := bits.TrailingZeros64(q &^ esc)
		in := ^uint64(0) // the bytes inside the string
		if end < 64 {
			in = 1<<end - 1
		}
		if c&in != 0 { // a control character inside the string is an error
			return scanFrom(b, start+1, start, false, false)
		}
		if esc&in != 0 {
			escaped = true
			for m := esc & in; m != 0; m &= m - 1 {
				p := i + bits.TrailingZeros64(m)
				if !validEscape[b[p]] {
					return scanFrom(b, start+1, start, false, false)
				}
				if b[p] == 'u' && (p+5 > len(b) || !isHex(b[p+1]) || !isHex(b[p+2]) || !isHex(b[p+3]) || !isHex(b[p+4])) {
					return scanFrom(b, start+1, start, false, false)
				}
			}
		}
		if end < 64 {
			return i + end + 1, escaped, nil
		}
	}
	if carry != 0 {
		i-- // the backslash whose escape crosses into what is left
	}
	return scanFrom(b, i, start, escaped, false)
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// IsDigit reports whether c is an ASCII digit.
func IsDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber validates a JSON number starting at b[i].
func scanNumber(b []byte, i int) (int, error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) || !IsDigit(b[i]) {
		return 0, ErrAt(start, "bad number")
	}
	if b[i] == '0' {
		i++
	} else {
		for i < len(b) && IsDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !IsDigit(b[i]) {
			return 0, ErrAt(i, "bad fraction")
		}
		for i < len(b) && IsDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !IsDigit(b[i]) {
			return 0, ErrAt(i, "bad exponent")
		}
		for i < len(b) && IsDigit(b[i]) {
			i++
		}
	}
	return i, nil
}

func scanLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, ErrAt(i, "unexpected character %q", b[i])
	}
	return i + len(lit), nil
}

// ScanValue validates one JSON value starting at b[i] (after whitespace)
// and returns the index just past it. Containers are walked with an
// explicit stack of one byte per level, so arbitrarily deep input cannot
// exhaust the goroutine stack; like V8's JSON.parse it sets no depth limit.
func ScanValue(b []byte, i int) (int, error) {
	var stackBuf [64]byte
	stack := stackBuf[:0] // '{' or '['
	for {
		i = SkipWS(b, i)
		if i >= len(b) {
			return 0, ErrAt(i, "unexpected end of input")
		}
		// Parse one scalar or open a container.
		var err error
		switch c := b[i]; {
		case c == '"':
			i, _, err = ScanString(b, i)
		case c == '{':
			j := SkipWS(b, i+1)
			if j < len(b) && b[j] == '}' {
				i = j + 1
				break
			}
			stack = append(stack, '{')
			if i, err = scanKey(b, j); err != nil {
				return 0, err
			}
			continue
		case c == '[':
			j := SkipWS(b, i+1)
			if j < len(b) && b[j] == ']' {
				i = j + 1
				break
			}
			stack = append(stack, '[')
			i = j
			continue
		case c == '-' || IsDigit(c):
			i, err = scanNumber(b, i)
		case c == 't':
			i, err = scanLiteral(b, i, "true")
		case c == 'f':
			i, err = scanLiteral(b, i, "false")
		case c == 'n':
			i, err = scanLiteral(b, i, "null")
		default:
			return 0, ErrAt(i, "unexpected character %q", c)
		}
		if err != nil {
			return 0, err
		}
		// After a value: close containers or move to the next element.
		for {
			if len(stack) == 0 {
				return i, nil
			}
			i = SkipWS(b, i)
			if i >= len(b) {
				return 0, ErrAt(i, "unexpected end of input")
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i++
				if top == '{' {
					if i, err = scanKey(b, SkipWS(b, i)); err != nil {
						return 0, err
					}
				}
				break
			}
			if (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return 0, ErrAt(i, "expected ',' or close, got %q", b[i])
		}
	}
}

// scanKey validates `"key" :` at b[i] and returns the index after the colon.
func scanKey(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return 0, ErrAt(i, "expected object key")
	}
	end, _, err := ScanString(b, i)
	if err != nil {
		return 0, err
	}
	end = SkipWS(b, end)
	if end >= len(b) || b[end] != ':' {
		return 0, ErrAt(end, "expected ':'")
	}
	return end + 1, nil
}

// Member is one top-level member of an object: raw key (with quotes) and raw value.
type Member struct {
	Key, Val []byte
}

// ErrNotObject is returned by eachMember when the value is not an object.
var ErrNotObject = errors.New("not an object")

// EachMember validates the object b[i:] and calls fn for each member.
// It returns the index just past the object. Values are validated in full.
func EachMember(b []byte, i int, fn func(m Member)) (int, error) {
	return eachNested(b, i, fn, nil)
}

// at returns b[i], or 0 past the end.
func at(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

// Nested asks EachMemberNested to read, in the same pass, the members of
// the value of one member: an object, or with Each the objects of an array.
type Nested struct {
	Key   string       // the member's key as written, without escapes
	Each  bool         // the value is an array, whose object elements are read
	Start func()       // before such a value is read (a later member of the same key replaces an earlier)
	Begin func()       // before the members of each object, when not nil
	Fn    func(Member) // for each member of those objects
	End   func()       // after them, when not nil
	In    []*Nested    // what to read the same way inside those objects
}

// EachMemberNested is EachMember that also reads, as it goes, the values
// that the Nested in describe. The depth of what it reads is that of in,
// whatever the input.
func EachMemberNested(b []byte, i int, fn func(m Member), in []*Nested) (int, error) {
	end, err := eachNested(b, i, fn, in)
	if err != nil && len(in) > 0 && err != ErrNotObject {
		_, err = eachNested(b, i, func(Member) {}, nil) // the error as EachMember words it
	}
	return end, err
}

// nestedFor returns the Nested of in that reads the value v of key k, or nil.
func nestedFor(in []*Nested, k []byte, v byte) *Nested {
	for _, n := range in {
		open := byte('{')
		if n.Each {
			open = '['
		}
		if v == open && len(k) == len(n.Key)+2 && string(k[1:len(k)-1]) == n.Key {
			return n
		}
	}
	return nil
}

// readNested reads the value at b[i] that n describes and returns its end.
func readNested(b []byte, i int, n *Nested) (int, error) {
	if n.Start != nil {
		n.Start()
	}
	if !n.Each {
		return readObject(b, i, n)
	}
	i = SkipWS(b, i+1) // past '['
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var end int
		var err error
		if i < len(b) && b[i] == '{' {
			end, err = readObject(b, i, n)
		} else {
			end, err = ScanValue(b, i)
		}
		if err != nil {
			return 0, err
		}
		var done bool
		if i, done, err = afterItem(b, end, ']'); err != nil || done {
			return i, err
		}
	}
}

// afterItem reads what follows an element or a member ending at b[i]:
// the closing byte (done) or a comma, and returns the index after it and
// after the whitespace that follows.
func afterItem(b []byte, i int, close byte) (int, bool, error) {
	if i = SkipWS(b, i); i >= len(b) {
		return 0, false, ErrAt(i, "unexpected end of input")
	}
	if b[i] == close {
		return i + 1, true, nil
	}
	if b[i] != ',' {
		return 0, false, ErrAt(i, "expected ',' or '%c', got %q", close, b[i])
	}
	return SkipWS(b, i+1), false, nil
}

// readObject reads the object at b[i] for n.
func readObject(b []byte, i int, n *Nested) (int, error) {
	if n.Begin != nil {
		n.Begin()
	}
	end, err := eachNested(b, i, n.Fn, n.In)
	if err == nil && n.End != nil {
		n.End()
	}
	return end, err
}

// eachNested is EachMemberNested with errors worded where they are found.
func eachNested(b []byte, i int, fn func(m Member), in []*Nested) (int, error) {
	i = SkipWS(b, i)
	if i >= len(b) {
		return 0, ErrAt(i, "unexpected end of input")
	}
	if b[i] != '{' {
		return 0, ErrNotObject
	}
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		ks := i
		if i >= len(b) || b[i] != '"' {
			return 0, ErrAt(i, "expected object key")
		}
		ke, _, err := ScanString(b, i)
		if err != nil {
			return 0, err
		}
		i = SkipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return 0, ErrAt(i, "expected ':'")
		}
		vs := SkipWS(b, i+1)
		var ve int
		if n := nestedFor(in, b[ks:ke], at(b, vs)); n != nil {
			ve, err = readNested(b, vs, n)
		} else {
			ve, err = ScanValue(b, vs)
		}
		if err != nil {
			return 0, err
		}
		fn(Member{Key: b[ks:ke], Val: b[vs:ve]})
		var done bool
		if i, done, err = afterItem(b, ve, '}'); err != nil || done {
			return i, err
		}
	}
}

// KeyIs reports whether the raw quoted key equals name. Keys with escapes
// are decoded first, since JSON.parse treats "\u0069d" as "id".
func KeyIs(raw []byte, name string) bool {
	if len(raw) == len(name)+2 && string(raw[1:len(raw)-1]) == name {
		return true
	}
	if len(raw) > len(name)+2 && HasBackslash(raw) {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s == name
		}
	}
	return false
}

// HasBackslash reports whether b holds a backslash (a string with escapes).
func HasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// Key returns the decoded key.
func Key(raw []byte) string {
	if !HasBackslash(raw) {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// String decodes a raw JSON value that must be a string. ok is false for
// any other JSON type. Invalid UTF-8 becomes U+FFFD, as Node's decoder does.
func String(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if !HasBackslash(inner) && utf8.Valid(inner) {
		return string(inner), true
	}
	if !utf8.Valid(inner) {
		// As Node decodes the file (WHATWG: one U+FFFD per maximal invalid
		// subpart), not as encoding/json does (one per byte).
		inner = ToValidUTF8(inner)
		if !HasBackslash(inner) {
			return string(inner), true
		}
		raw = append(append([]byte{'"'}, inner...), '"')
	}
	if s, ok := unquote(inner); ok {
		return s, true
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// IsNull reports whether raw is the JSON literal null.
func IsNull(raw []byte) bool { return len(raw) == 4 && string(raw) == "null" }

// Truthy reports whether the JSON value is truthy in JavaScript.
func Truthy(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case 'n', 'f':
		return false
	case '"':
		return len(raw) > 2
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var f float64
		if json.Unmarshal(raw, &f) != nil {
			return true // out of float range: ±Infinity is truthy
		}
		return f != 0
	}
	return true
}

// The functions below walk JSON that has already been validated (by
// EachMember or scanValue): they skip values without checking them, which
// is several times faster than validating again. On invalid input they
// stop early or return spans that are not values, but never panic.

// Skip returns the index just past the value starting at b[i].
func Skip(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) { // a number or a literal
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	// Most strings are keys, ids and dates: their first 32 bytes 8 at a
	// time (the lowest byte flagged is exact), before bytes.IndexByte.
	for j := i + 1; j <= i+25 && j+8 <= len(b); j += 8 {
		x := binary.LittleEndian.Uint64(b[j:])
		q := x ^ (lsb * '"')
		s := x ^ (lsb * '\\')
		if m := ((q-lsb)&^q | (s-lsb)&^s) & msb; m != 0 {
			if k := j + bits.TrailingZeros64(m)>>3; b[k] == '"' {
				return k + 1
			}
			break
		}
	}
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		// The quote is escaped if an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
}

// Members calls fn for each member of the object b, which must be
// valid JSON whose first byte but white space is '{' (anything else calls
// fn for no member).
func Members(b []byte, fn func(m Member)) {
	i := SkipWS(b, 0) // white space may come first, as in JSON.parse
	if i >= len(b) || b[i] != '{' {
		return
	}
	i = SkipWS(b, i+1)
	for i < len(b) && b[i] == '"' {
		ke := skipString(b, i)
		j := SkipWS(b, ke)
		if j >= len(b) || b[j] != ':' {
			return
		}
		vs := SkipWS(b, j+1)
		ve := Skip(b, vs)
		if ve <= vs {
			return
		}
		fn(Member{Key: b[i:ke], Val: b[vs:ve]})
		i = SkipWS(b, ve)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i = SkipWS(b, i+1)
	}
}

// KeyBytes returns the raw key without quotes, decoded when it holds
// escapes. switch string(KeyBytes(k)) compares without allocating.
func KeyBytes(raw []byte) []byte {
	inner := raw[1 : len(raw)-1]
	if HasBackslash(inner) {
		return []byte(Key(raw))
	}
	return inner
}

// Str decodes a raw string value; non-strings give "".
func Str(raw []byte) string {
	s, _ := String(raw)
	return s
}
