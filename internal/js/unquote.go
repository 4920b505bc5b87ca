package js

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// unquote decodes the inside of a JSON string exactly as encoding/json
// does (invalid UTF-8 and unpaired surrogates become U+FFFD), without its
// reflection: String's path for strings with escapes. ok is false for
// anything encoding/json would refuse (a control character, a bad escape);
// the caller then asks encoding/json.
func unquote(s []byte) (string, bool) {
	b := make([]byte, 0, len(s)+8)
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			if r+1 >= len(s) {
				return "", false
			}
			if e := shortEscape[s[r+1]]; e != 0 {
				b = append(b, e)
				r += 2
				break
			}
			switch s[r+1] {
			case 'u':
				rr := getu4(s[r:])
				if rr < 0 {
					return "", false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						b = utf8.AppendRune(b, dec)
						break
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
			default:
				return "", false
			}
		case c == '"' || c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return string(b), true
}

// shortEscape maps the letter of each two-byte JSON escape (\n, \", ...)
// to the byte it stands for; 0 for any other byte.
var shortEscape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
