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

// SWAR constants: one in every byte, and the high bit of every byte.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plain8 reports whether none of the 8 bytes of x is '"', '\\' or a
// control character, testing all 8 at once (the classic haszero/hasless
// tricks, which are exact for "is there any such byte").
func plain8(x uint64) bool {
	q := x ^ (lsb * '"')
	s := x ^ (lsb * '\\')
	return ((q-lsb)&^q|(s-lsb)&^s|(x-lsb*0x20)&^x)&msb == 0
}

// ScanString validates the string starting at b[i] == '"' and returns the
// index just past its closing quote and whether it holds escapes.
func ScanString(b []byte, i int) (end int, escaped bool, err error) {
	i++ // opening quote
	for {
		// Fast path over ordinary bytes: 8 at a time, then one by one.
		for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) {
			c := b[i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			i++
		}
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
		ve, err := ScanValue(b, vs)
		if err != nil {
			return 0, err
		}
		fn(Member{Key: b[ks:ke], Val: b[vs:ve]})
		i = SkipWS(b, ve)
		if i >= len(b) {
			return 0, ErrAt(i, "unexpected end of input")
		}
		if b[i] == '}' {
			return i + 1, nil
		}
		if b[i] != ',' {
			return 0, ErrAt(i, "expected ',' or '}', got %q", b[i])
		}
		i = SkipWS(b, i+1)
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
// valid JSON starting with '{' (anything else calls fn for no member).
func Members(b []byte, fn func(m Member)) {
	if len(b) == 0 || b[0] != '{' {
		return
	}
	i := SkipWS(b, 1)
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
