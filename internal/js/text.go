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

// PrefixWTF8 is Prefix keeping a lone surrogate escape as its three-byte
// WTF-8 form, for text joined to other text before it is shown: FromWTF8
// then pairs halves that meet, as JavaScript's strings do.
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
					b.WriteString(wtf8Surrogate(r))
					units++
					continue
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
			units += runeUnits(r)
			continue
		default: // as JSON.parse, which checked the line: \" \\ \/ \b \f \n \r \t
			r = rune(e)
			if c := shortEscape[e]; c != 0 {
				r = rune(c)
			}
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
			if out, ok := Restringify(raw[i:end], false); ok {
				b.Write(out) // a lone surrogate stays "\ud83d", as JSON.stringify writes it
			} else {
				s, _ := String(raw[i:end])
				quoteTo(&b, s)
			}
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

// quoteTo writes s quoted as JSON.stringify does.
func quoteTo(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
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
	if f, ok := shortDecimal(raw); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

// pow10 holds the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// shortDecimal reads a number of at most 15 digits without exponent, such
// as token counts and costs, exactly as strconv.ParseFloat does: its digits
// and the power of ten are exact float64s, and one division of exact
// values rounds correctly (Clinger's fast path). ok is false for any other.
func shortDecimal(raw []byte) (float64, bool) {
	i, neg := 0, false
	if len(raw) > 0 && raw[0] == '-' {
		i, neg = 1, true
	}
	var m uint64
	digits, frac, dot := 0, 0, false
	for ; i < len(raw); i++ {
		switch c := raw[i]; {
		case IsDigit(c):
			m = m*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 || (dot && frac == 0) {
		return 0, false
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
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

// Restringify is JSON.stringify(JSON.parse(raw)) for a raw JSON string,
// trimmed first as String.prototype.trim does when trim is set. It works on
// UTF-16 code units as JavaScript does, so a lone surrogate (pi cuts text by
// UTF-16 length, which can halve an emoji) comes out as JSON.stringify
// writes it, "\ud83d", not as U+FFFD. ok is false when raw is not a string.
func Restringify(raw []byte, trim bool) (out json.RawMessage, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	in := ToValidUTF8(raw[1 : len(raw)-1]) // as Node decodes the file
	units := make([]uint16, 0, len(in))
	for i := 0; i < len(in); {
		c := in[i]
		if c != '\\' {
			r, size := utf8.DecodeRune(in[i:])
			i += size
			if r >= 0x10000 {
				a, b := utf16.EncodeRune(r)
				units = append(units, uint16(a), uint16(b))
			} else {
				units = append(units, uint16(r))
			}
			continue
		}
		if i+1 >= len(in) {
			return nil, false
		}
		e := in[i+1]
		i += 2
		switch e {
		case 'u':
			if i+4 > len(in) {
				return nil, false
			}
			v, err := strconv.ParseUint(string(in[i:i+4]), 16, 16)
			if err != nil {
				return nil, false
			}
			units = append(units, uint16(v))
			i += 4
		default: // " \ / b f n r t
			if c := shortEscape[e]; c != 0 {
				e = c
			}
			units = append(units, uint16(e))
		}
	}
	if trim {
		lo, hi := 0, len(units)
		for lo < hi && IsSpace(rune(units[lo])) {
			lo++
		}
		for hi > lo && IsSpace(rune(units[hi-1])) {
			hi--
		}
		units = units[lo:hi]
	}
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(in)+2)
	b = append(b, '"')
	for k := 0; k < len(units); k++ {
		u := units[k]
		switch {
		case u == '"':
			b = append(b, `\"`...)
		case u == '\\':
			b = append(b, `\\`...)
		case u == '\b':
			b = append(b, `\b`...)
		case u == '\f':
			b = append(b, `\f`...)
		case u == '\n':
			b = append(b, `\n`...)
		case u == '\r':
			b = append(b, `\r`...)
		case u == '\t':
			b = append(b, `\t`...)
		case u < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[u>>4], hex[u&15])
		case u >= 0xD800 && u < 0xDC00 && k+1 < len(units) && units[k+1] >= 0xDC00 && units[k+1] < 0xE000:
			b = utf8.AppendRune(b, utf16.DecodeRune(rune(u), rune(units[k+1])))
			k++
		case u >= 0xD800 && u < 0xE000: // a lone surrogate
			b = append(b, '\\', 'u', hex[u>>12], hex[u>>8&15], hex[u>>4&15], hex[u&15])
		default:
			b = utf8.AppendRune(b, rune(u))
		}
	}
	return append(b, '"'), true
}

// wtf8Surrogate is the three-byte WTF-8 form of surrogate u (not UTF-8).
func wtf8Surrogate(u rune) string {
	return string([]byte{0xED, byte(0xA0 | (u>>6)&0x1F), byte(0x80 | u&0x3F)})
}

// loneSurrogate reports whether s starts with a surrogate in WTF-8, and which.
func loneSurrogate(s string) (rune, bool) {
	if len(s) < 3 || s[0] != 0xED || s[1] < 0xA0 || s[1] > 0xBF || s[2] < 0x80 || s[2] > 0xBF {
		return 0, false
	}
	return 0xD000 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), true
}

// StringWTF8 decodes a raw JSON string as String does, except that a lone
// surrogate escape is kept in WTF-8 (see PrefixWTF8, FromWTF8).
func StringWTF8(raw []byte) (string, bool) {
	if !bytes.Contains(raw, []byte(`\u`)) {
		return String(raw)
	}
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	raw = ToValidUTF8(raw)
	return PrefixWTF8(raw, len(raw)), true
}

// FromWTF8 turns text holding lone surrogates in WTF-8, once its pieces
// are joined, into UTF-8 as JavaScript shows it: a high surrogate right
// before a low one is the character they make (pi joins a message's text
// blocks, so an emoji cut into two blocks is whole again), any other is
// U+FFFD.
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
