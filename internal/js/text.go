package js

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Prefix decodes a raw JSON string until it holds at least n UTF-16
// units (or ends). A lone surrogate escape becomes U+FFFD.
func Prefix(raw []byte, n int) string { return prefix(raw, n, false) }

// PrefixWTF8 is Prefix keeping a lone surrogate as WTF-8 (see StringWTF8),
// for text that is joined to other text before it is shown (FromWTF8).
func PrefixWTF8(raw []byte, n int) string { return prefix(raw, n, true) }

func prefix(raw []byte, n int, wtf8 bool) string {
	if len(raw) < 2 || raw[0] != '"' || n <= 0 {
		return ""
	}
	in := raw[1:]
	// The common case: no escape soon. 3n bytes of UTF-8 hold at least n units.
	lim := min(len(in), 3*n)
	switch k := bytes.IndexAny(in[:lim], "\\\""); {
	case k >= 0 && in[k] == '"':
		return string(in[:k])
	case k < 0 && lim == 3*n:
		p := in[:lim]
		j := len(p) - 1 // drop a rune cut in half
		for j > 0 && len(p)-j < utf8.UTFMax && !utf8.RuneStart(p[j]) {
			j--
		}
		if !utf8.FullRune(p[j:]) {
			p = p[:j]
		}
		return string(p)
	}
	var b strings.Builder
	units := 0
	for i := 0; i < len(in) && units < n; {
		c := in[i]
		if c == '"' {
			break
		}
		if c != '\\' {
			r, size := utf8.DecodeRune(in[i:])
			b.WriteRune(r)
			units += runeUnits(r)
			i += size
			continue
		}
		if i+1 >= len(in) {
			break
		}
		var r rune
		switch e := in[i+1]; e {
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			v, ok := hex4(in, i+2)
			if !ok {
				return b.String()
			}
			r = rune(v)
			i += 6
			if utf16.IsSurrogate(r) {
				lo, ok := hex4(in, i+2)
				if r < 0xDC00 && ok && in[i] == '\\' && in[i+1] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
					r = utf16.DecodeRune(r, rune(lo))
					i += 6
				} else if wtf8 {
					b.Write([]byte{0xED, byte(0xA0 | (r>>6)&0x1F), byte(0x80 | r&0x3F)})
					units++
					continue
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
			units += runeUnits(r)
			continue
		default:
			r = rune(e)
		}
		b.WriteRune(r)
		units++
		i += 2
	}
	return b.String()
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (uint64, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return v, err == nil
}

func runeUnits(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// Blank reports whether a raw JSON string holds only JavaScript whitespace.
func Blank(raw []byte) bool {
	if len(raw) < 2 {
		return true
	}
	in := raw[1 : len(raw)-1]
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '\\':
			if i+1 >= len(in) {
				return false
			}
			switch in[i+1] {
			case 'n', 't', 'r', 'f':
				i += 2
			case 'u':
				if i+6 > len(in) {
					return false
				}
				v, err := strconv.ParseUint(string(in[i+2:i+6]), 16, 32)
				if err != nil || !IsSpace(rune(v)) {
					return false
				}
				i += 6
			default:
				return false
			}
		case c < utf8.RuneSelf:
			if !IsSpace(rune(c)) {
				return false
			}
			i++
		default:
			r, n := utf8.DecodeRune(in[i:])
			if !IsSpace(r) {
				return false
			}
			i += n
		}
	}
	return true
}

// IsSpace reports whether r is whitespace to JavaScript (\s, trim).
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// Elems calls fn with each element of a raw JSON array until fn
// returns false; anything else calls nothing. It does not validate: strings
// are skipped with bytes.IndexByte. On invalid input it stops early rather
// than failing.
func Elems(raw []byte, fn func(el []byte) bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return
	}
	i := SkipWS(raw, 1)
	for i < len(raw) && raw[i] != ']' {
		end := Skip(raw, i)
		if end <= i || !fn(raw[i:end]) {
			return
		}
		i = SkipWS(raw, end)
		if i >= len(raw) || raw[i] != ',' {
			return
		}
		i = SkipWS(raw, i+1)
	}
}

// UTF16Len is JavaScript's String length.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// UTF16Prefix is JavaScript's s.slice(0, n). A surrogate pair cut in half
// leaves a lone surrogate, which Node prints as U+FFFD.
func UTF16Prefix(s string, n int) string {
	units := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			if units < n {
				return s[:i] + "\uFFFD"
			}
			return s[:i]
		}
		units += w
	}
	return s
}

// CapRunes cuts s to at most n runes.
func CapRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	k := 0
	for i := range s {
		if k == n {
			return s[:i]
		}
		k++
	}
	return s
}

// ToString converts a raw JSON value as JavaScript's String() and template
// literals do; an absent value (nil) is "undefined".
func ToString(raw []byte) string {
	if len(raw) == 0 {
		return "undefined"
	}
	switch raw[0] {
	case '"':
		s, _ := String(raw)
		return s
	case '{':
		return "[object Object]"
	case '[':
		return toArrayString(raw)
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	return FormatNumber(ToNumber(raw))
}

// Join converts a value as Array.prototype.join does: null and undefined are "".
func Join(raw []byte) string {
	if len(raw) == 0 || IsNull(raw) {
		return ""
	}
	return ToString(raw)
}

// toArrayString is Array.prototype.toString: elements (nested arrays flattened)
// joined by commas, null as "".
func toArrayString(raw []byte) string {
	var b strings.Builder
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '[' || c == ']' || IsWS(c):
			i++
		case c == ',':
			b.WriteByte(',')
			i++
		default:
			end := max(Skip(raw, i), i+1)
			if v := raw[i:end]; !IsNull(v) {
				b.WriteString(ToString(v))
			}
			i = end
		}
	}
	return b.String()
}

// ToNumber is JavaScript's Number() of a raw JSON value; absent is NaN.
func ToNumber(raw []byte) float64 {
	if len(raw) == 0 {
		return math.NaN()
	}
	switch raw[0] {
	case 'n', 'f':
		return 0
	case 't':
		return 1
	case '{':
		return math.NaN()
	case '"', '[':
		return NumberOf(ToString(raw))
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}

// NumberOf is JavaScript's Number() of a string.
func NumberOf(s string) float64 {
	s = Trim(s)
	if s == "" {
		return 0
	}
	switch s {
	case "Infinity", "+Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			v, err := strconv.ParseUint(s[2:], base, 64)
			if err != nil || strings.Contains(s, "_") {
				return math.NaN()
			}
			return float64(v)
		}
	}
	// A decimal literal: digits, one dot, an exponent; nothing Go-specific.
	digits, dot, exp := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case IsDigit(c):
			digits = true
		case c == '.' && !dot && !exp:
			dot = true
		case (c == 'e' || c == 'E') && digits && !exp:
			exp = true
			digits = false
			if i+1 < len(s) && (s[i+1] == '+' || s[i+1] == '-') {
				i++
			}
		case (c == '+' || c == '-') && i == 0:
		default:
			return math.NaN()
		}
	}
	if !digits {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}

// Round is Math.round: halves round up.
func Round(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	f := math.Floor(x)
	if x-f >= 0.5 {
		return f + 1
	}
	return f
}

// FormatNumber formats a number as JavaScript's String(number) does.
func FormatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. 1.5e-07
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + string(sign) + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// Stringify re-serialises a valid raw JSON value as JSON.stringify would
// print it after JSON.parse: no whitespace, JavaScript's string escapes and
// number formatting.
func Stringify(raw []byte) string {
	var b strings.Builder
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case IsWS(c):
			i++
		case c == '"':
			end := skipString(raw, i)
			s, _ := StringWTF8(raw[i:end])
			quoteTo(&b, s)
			i = end
		case c == '-' || IsDigit(c):
			end := max(Skip(raw, i), i+1)
			f := ToNumber(raw[i:end])
			if math.IsInf(f, 0) {
				b.WriteString("null")
			} else {
				b.WriteString(FormatNumber(f))
			}
			i = end
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// quoteTo writes s quoted as JSON.stringify does; a lone surrogate (held
// as WTF-8, see StringWTF8) is escaped as \udxxx.
func quoteTo(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			if u, ok := loneSurrogate(s[i:]); ok {
				b.WriteString(`\u`)
				for sh := 12; sh >= 0; sh -= 4 {
					b.WriteByte(hex[u>>sh&15])
				}
				i += 3
				continue
			}
		}
		i += n
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&15])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// Number reads a raw JSON number; null reads as 0. ok is false for any
// other type and for numbers out of float64 range.
func Number(raw []byte) (float64, bool) {
	if IsNull(raw) {
		return 0, true
	}
	if len(raw) == 0 || (raw[0] != '-' && !IsDigit(raw[0])) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

// Time converts a raw timestamp value to Unix ms as JavaScript's
// new Date(value).getTime() would; NoTime stands for NaN.
func Time(raw []byte, present bool) int64 {
	if !present {
		return NoTime // new Date(undefined) is NaN
	}
	switch {
	case IsNull(raw):
		return 0 // new Date(null) is the epoch
	case len(raw) > 0 && raw[0] == '"':
		if inner := raw[1 : len(raw)-1]; !HasBackslash(inner) && utf8.Valid(inner) {
			return ParseDate(string(inner))
		}
		s, _ := String(raw)
		return ParseDate(s)
	case len(raw) > 0 && (raw[0] == '-' || IsDigit(raw[0])):
		var f float64
		if json.Unmarshal(raw, &f) != nil || math.Abs(f) > 8.64e15 {
			return NoTime
		}
		return int64(f)
	}
	return NoTime
}

// Trim trims what JavaScript's String.prototype.trim removes.
func Trim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return r == '\uFEFF' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' ||
			r == 0xA0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200A) || r == 0x2028 || r == 0x2029 ||
			r == 0x202F || r == 0x205F || r == 0x3000
	})
}

// WellFormed returns b with each maximal invalid UTF-8 subpart replaced by
// one U+FFFD, as the WHATWG decoder (Node's readFileSync(…, "utf8"),
// TextDecoder) does; unlike bytes.ToValidUTF8, which replaces whole runs,
// and a per-byte decode. b itself is returned when it is valid.
func WellFormed(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			out = append(out, b[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || n > 1 {
			out = append(out, b[i:i+n]...)
		} else {
			out = append(out, "\uFFFD"...)
			n = invalidLen(b[i:])
		}
		i += n
	}
	return out
}

// invalidLen is the length of the maximal subpart of an ill-formed UTF-8
// sequence at the start of b: a lead byte and the continuation bytes that
// fit it (Unicode 15, table 3-7), at least 1.
func invalidLen(b []byte) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	i := 1
	for i <= need && i < len(b) {
		l, h := byte(0x80), byte(0xBF)
		if i == 1 {
			l, h = lo, hi
		}
		if b[i] < l || b[i] > h {
			break
		}
		i++
	}
	return i
}

// StringWTF8 decodes a raw JSON string as String does, except that an
// escaped lone surrogate (\ud83d, as JSON.stringify writes what pi cut in
// half) is kept as its three-byte WTF-8 form, which Quote and Stringify
// escape again as JSON.stringify does. Such a string is not valid UTF-8:
// use it only to print JSON.
func StringWTF8(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if !bytes.Contains(raw, []byte(`\u`)) {
		return String(raw)
	}
	in := WellFormed(raw[1 : len(raw)-1])
	var b strings.Builder
	for i := 0; i < len(in); {
		c := in[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(in) {
			return "", false
		}
		switch e := in[i+1]; e {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			v, ok := hex4(in, i+2)
			if !ok {
				return "", false
			}
			r := rune(v)
			i += 6
			if utf16.IsSurrogate(r) {
				if lo, ok := hex4(in, i+2); r < 0xDC00 && ok && i+1 < len(in) && in[i] == '\\' && in[i+1] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
					b.WriteRune(utf16.DecodeRune(r, rune(lo)))
					i += 6
				} else {
					b.Write([]byte{0xED, byte(0xA0 | (r>>6)&0x1F), byte(0x80 | r&0x3F)})
				}
				continue
			}
			b.WriteRune(r)
			continue
		default:
			b.WriteByte(e)
		}
		i += 2
	}
	return b.String(), true
}

// loneSurrogate reports whether s starts with the WTF-8 form of a lone
// surrogate (U+D800 to U+DFFF encoded as if it were a character) and returns it.
func loneSurrogate(s string) (rune, bool) {
	if len(s) < 3 || s[0] != 0xED || s[1] < 0xA0 || s[1] > 0xBF || s[2] < 0x80 || s[2] > 0xBF {
		return 0, false
	}
	return 0xD000 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), true
}

// HasLoneSurrogate reports whether a raw JSON string escapes a lone surrogate.
func HasLoneSurrogate(raw []byte) bool {
	if !bytes.Contains(raw, []byte(`\u`)) {
		return false
	}
	s, _ := StringWTF8(raw)
	for i := 0; i < len(s); i++ {
		if _, ok := loneSurrogate(s[i:]); ok {
			return true
		}
	}
	return false
}

// FromWTF8 turns a string holding lone surrogates as WTF-8 (StringWTF8,
// PrefixWTF8), after pieces were joined, into UTF-8 as JavaScript would
// show it: a high surrogate followed by a low one is the character they
// make (pi joins text blocks, so an emoji cut in two blocks is whole again),
// any other lone surrogate is U+FFFD.
func FromWTF8(s string) string {
	if !strings.Contains(s, "\xED") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		hi, ok := loneSurrogate(s[i:])
		if !ok {
			b.WriteByte(s[i])
			i++
			continue
		}
		if lo, ok := loneSurrogate(s[i+3:]); ok && hi < 0xDC00 && lo >= 0xDC00 {
			b.WriteRune(utf16.DecodeRune(hi, lo))
			i += 6
			continue
		}
		b.WriteString("\uFFFD")
		i += 3
	}
	return b.String()
}
