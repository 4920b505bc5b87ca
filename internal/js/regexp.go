package js

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// RegExp rewrites a pattern as JavaScript's new RegExp(pattern) reads it
// (no u flag, so with the web's legacy syntax) in RE2's syntax, so that it
// matches what JavaScript's would (docs/search.md lists where RE2 still
// differs). What RE2 spells otherwise is rewritten: \uXXXX (a surrogate pair as its
// character), \xHH, octal escapes, \cX, [^] (any character) and []
// (none); JavaScript's . (no line terminator) and \s (Unicode white
// space); and what JavaScript reads as a literal but RE2 would not: an
// unknown escape (\p, \z, \Q), \u without four hex digits, a [ inside a
// class ([[:alpha:]]). A group JavaScript has no syntax for, such as
// (?i), is an error, as in JavaScript; look-around and back-references,
// which RE2 cannot run, are refused by name.
func RegExp(p string) (string, error) {
	rs := []rune(p)
	groups, named := countGroups(rs)
	var b strings.Builder
	assertion := "" // the last item, if ^, $, \b or \B, which take no quantifier
	for i := 0; i < len(rs); i++ {
		if assertion != "" && isQuantifier(rs[i:]) {
			return "", fmt.Errorf("nothing to repeat: %s takes no quantifier", assertion)
		}
		c := rs[i]
		switch assertion = ""; {
		case c == '^' || c == '$':
			assertion = string(c)
		case c == '\\' && i+1 < len(rs) && (rs[i+1] == 'b' || rs[i+1] == 'B'):
			assertion = string(rs[i : i+2])
		}
		switch c {
		case '\\':
			if _, err := jsEscape(&b, rs, &i, false, groups, named); err != nil {
				return "", err
			}
		case '[':
			if err := jsClass(&b, rs, &i, named); err != nil {
				return "", err
			}
		case '(':
			if err := jsGroup(&b, rs, &i); err != nil {
				return "", err
			}
		case '.':
			b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		default:
			b.WriteRune(c)
		}
	}
	return b.String(), nil
}

// isQuantifier reports whether rs begins with a quantifier: *, +, ?, or
// braces JavaScript reads as one ({2}, {2,}, {2,3}; other braces are
// literal).
func isQuantifier(rs []rune) bool {
	if len(rs) > 0 && (rs[0] == '*' || rs[0] == '+' || rs[0] == '?') {
		return true
	}
	s := string(rs)
	end := strings.IndexByte(s, '}')
	if !strings.HasPrefix(s, "{") || end < 0 {
		return false
	}
	lo, hi, comma := strings.Cut(s[1:end], ",")
	digits := func(d string) bool { return d != "" && strings.Trim(d, "0123456789") == "" }
	return digits(lo) && (!comma || hi == "" || digits(hi))
}

// JavaScript's white space (\s): RE2's \s lacks \v and all beyond ASCII.
const (
	jsSpace    = `\t-\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`
	jsNotSpace = `\x00-\x08\x0e-\x1f!-\x{9f}\x{a1}-\x{167f}\x{1681}-\x{1fff}\x{200b}-\x{2027}\x{202a}-\x{202e}\x{2030}-\x{205e}\x{2060}-\x{2fff}\x{3001}-\x{fefe}\x{ff00}-\x{10ffff}`
)

// never matches no character (JavaScript's []).
const never = `[^\x00-\x{10FFFF}]`

// countGroups counts the capturing groups of a pattern (a back-reference
// names one of them; a larger number is an octal escape) and says whether
// any is named (then \k is a named back-reference).
func countGroups(rs []rune) (n int, named bool) {
	inClass := false
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == '\\':
			i++
		case inClass:
			inClass = rs[i] != ']'
		case rs[i] == '[':
			inClass = true
		case rs[i] == '(' && (i+1 >= len(rs) || rs[i+1] != '?'):
			n++
		case rs[i] == '(' && i+3 < len(rs) && rs[i+2] == '<' && rs[i+3] != '=' && rs[i+3] != '!':
			n++
			named = true
		}
	}
	return n, named
}

// jsGroup writes the group that opens at rs[*i].
func jsGroup(b *strings.Builder, rs []rune, i *int) error {
	rest := string(rs[*i:min(*i+4, len(rs))])
	switch {
	case !strings.HasPrefix(rest, "(?"):
		b.WriteByte('(')
	case strings.HasPrefix(rest, "(?:"):
		b.WriteString("(?:")
		*i += 2
	case strings.HasPrefix(rest, "(?="), strings.HasPrefix(rest, "(?!"):
		return fmt.Errorf("look-ahead %s…) is JavaScript syntax RE2 cannot run", rest[:3])
	case strings.HasPrefix(rest, "(?<="), strings.HasPrefix(rest, "(?<!"):
		return fmt.Errorf("look-behind %s…) is JavaScript syntax RE2 cannot run", rest[:4])
	case strings.HasPrefix(rest, "(?<"):
		b.WriteString("(?P<")
		*i += 2
	default:
		return fmt.Errorf("%s is not a JavaScript group: write (…), (?:…) or (?<name>…); case is ignored already", rest[:min(3, len(rest))])
	}
	return nil
}

// jsClass writes the character class that opens at rs[*i], as JavaScript
// reads it: [ and an escaped letter stand for themselves, \b is a
// backspace, and a - next to a class escape (\d) is a literal.
func jsClass(b *strings.Builder, rs []rune, i *int, named bool) error {
	j := *i + 1
	neg := j < len(rs) && rs[j] == '^'
	if neg {
		j++
	}
	if j < len(rs) && rs[j] == ']' { // [] matches nothing, [^] anything
		if neg {
			b.WriteString(`(?s:.)`)
		} else {
			b.WriteString(never)
		}
		*i = j
		return nil
	}
	b.WriteByte('[')
	if neg {
		b.WriteByte('^')
	}
	// A - between two characters makes a range; next to a class escape
	// (\d), after a range or at either end it is itself.
	const (
		start = iota
		char
		set
		rangeEnd
	)
	prev, inRange := start, false
	for ; j < len(rs) && rs[j] != ']'; j++ {
		c, item := rs[j], char
		switch {
		case c == '\\' && j+1 < len(rs):
			isSet, err := jsEscape(b, rs, &j, true, 0, named)
			if err != nil {
				return err
			}
			if isSet {
				item = set
			}
		case c == '-' && prev == char && !inRange && j+1 < len(rs) && rs[j+1] != ']' &&
			!(rs[j+1] == '\\' && j+2 < len(rs) && strings.ContainsRune("dDwWsS", rs[j+2])):
			b.WriteByte('-')
			inRange = true
			continue
		default:
			literalRune(b, c)
		}
		if inRange {
			item, inRange = rangeEnd, false
		}
		prev = item
	}
	if j < len(rs) {
		b.WriteByte(']')
	}
	*i = j
	return nil
}

// jsEscape writes the escape at rs[*i] (a backslash) as JavaScript reads
// it, outside a class or in one (where \b is a backspace, \B a B, and \c
// also takes a digit or _), and says whether it stands for a set of
// characters (\d, \s, …). groups and named are countGroups'.
func jsEscape(b *strings.Builder, rs []rune, i *int, inClass bool, groups int, named bool) (set bool, err error) {
	if *i+1 >= len(rs) {
		return false, fmt.Errorf("\\ at the end of the pattern")
	}
	n := rs[*i+1]
	next := func(k int) rune { // rs[*i+k], or 0 beyond it
		if *i+k < len(rs) {
			return rs[*i+k]
		}
		return 0
	}
	*i++
	switch {
	case inClass && n == 'b':
		b.WriteString(`\x08`)
	case strings.ContainsRune("dDwW", n):
		b.WriteByte('\\')
		b.WriteRune(n)
		return true, nil
	case n == 's' || n == 'S':
		sp := jsSpace
		if n == 'S' {
			sp = jsNotSpace
		}
		if !inClass {
			sp = "[" + sp + "]"
		}
		b.WriteString(sp)
		return true, nil
	case strings.ContainsRune("fnrtv", n) || strings.ContainsRune("bB", n) && !inClass:
		b.WriteByte('\\')
		b.WriteRune(n)
	case n >= '1' && n <= '9' && !inClass && backRef(rs[*i:]) <= groups:
		return false, fmt.Errorf("back-references (\\%d) are JavaScript syntax RE2 cannot run", backRef(rs[*i:]))
	case n >= '0' && n <= '7': // an octal escape: up to \377
		v, k := int(n-'0'), 1
		for ; k < 3 && next(k) >= '0' && next(k) <= '7' && v*8+int(next(k)-'0') <= 0377; k++ {
			v = v*8 + int(next(k)-'0')
		}
		*i += k - 1
		fmt.Fprintf(b, `\x{%x}`, v)
	case n == 'c' && (asciiLetter(next(1)) || inClass && (next(1) >= '0' && next(1) <= '9' || next(1) == '_')):
		fmt.Fprintf(b, `\x{%x}`, next(1)%32)
		*i++
	case n == 'c':
		b.WriteString(`\\`) // a literal \, then c as itself
		*i--
	case n == 'x' && hexRunes(next(1), next(2)):
		fmt.Fprintf(b, `\x{%c%c}`, next(1), next(2))
		*i += 2
	case n == 'u' && hexRunes(next(1), next(2), next(3), next(4)):
		u := hexValue(rs[*i+1 : *i+5])
		*i += 4
		if u >= 0xd800 && u < 0xdc00 && next(1) == '\\' && next(2) == 'u' && hexRunes(next(3), next(4), next(5), next(6)) {
			if lo := hexValue(rs[*i+3 : *i+7]); lo >= 0xdc00 && lo < 0xe000 {
				u = 0x10000 + (u-0xd800)<<10 + (lo - 0xdc00)
				*i += 6
			}
		}
		if u >= 0xd800 && u < 0xe000 {
			u = utf8.RuneError // a lone surrogate: as a text's JSON decodes one
		}
		fmt.Fprintf(b, `\x{%x}`, u)
	case n == 'k' && named:
		return false, fmt.Errorf("named back-references (\\k<…>) are JavaScript syntax RE2 cannot run")
	default: // any other character stands for itself
		literalRune(b, n)
	}
	return false, nil
}

// literalRune writes r to stand for itself, in a class or out of one.
func literalRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf && !asciiLetter(r) && (r < '0' || r > '9') { // RE2 reads \ and any such as itself
		b.WriteByte('\\')
	}
	b.WriteRune(r)
}

// backRef returns the number the digits at the start of rs spell.
func backRef(rs []rune) int {
	v := 0
	for _, r := range rs {
		if r < '0' || r > '9' || v > 1<<20 {
			break
		}
		v = v*10 + int(r-'0')
	}
	return v
}

func hexValue(rs []rune) int {
	v, _ := strconv.ParseInt(string(rs), 16, 32)
	return int(v)
}

func hexRunes(rs ...rune) bool {
	for _, c := range rs {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func asciiLetter(c rune) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
