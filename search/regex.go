package search

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// compileRegex compiles a user's pattern, written as JavaScript writes
// one (pi makes it with new RegExp(pattern, "i")), case-insensitively. It
// refuses what RE2 cannot run (look-around, back-references) by name, and
// patterns whose program would be too large to run under a budget. It
// returns the literals every match contains (see required).
func compileRegex(pat string) (*regexp.Regexp, []string, error) {
	goPat, err := fromJS(pat)
	if err != nil {
		return nil, nil, fmt.Errorf("regular expression %q: %v", pat, err)
	}
	re, err := syntax.Parse(goPat, syntax.Perl|syntax.FoldCase)
	if err != nil {
		msg := err.Error()
		if e, ok := err.(*syntax.Error); ok {
			msg = fmt.Sprintf("%s: `%s`", e.Code, e.Expr)
		}
		return nil, nil, fmt.Errorf("invalid regular expression %q: %s", pat, msg)
	}
	simple := re.Simplify()
	prog, err := syntax.Compile(simple)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid regular expression %q: %v", pat, err)
	}
	if len(prog.Inst) > maxProgInst {
		return nil, nil, fmt.Errorf("regular expression %q is too complex (%d steps, at most %d): use fewer or smaller repetitions", pat, len(prog.Inst), maxProgInst)
	}
	compiled, err := regexp.Compile("(?i)" + goPat)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid regular expression %q: %v", pat, err)
	}
	return compiled, required(simple), nil
}

// fromJS rewrites JavaScript's regular expression syntax as RE2 spells
// it: \uXXXX and \u{X…} as \x{…}, \0 as \x00, \cX as the control
// character, [^] (any character) and [] (none). Look-ahead, look-behind
// and back-references have no RE2 form: they are refused by name.
func fromJS(p string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			n := p[i+1]
			switch {
			case n == 'u' && i+2 < len(p) && p[i+2] == '{':
				end := strings.IndexByte(p[i+3:], '}')
				if end < 0 {
					return "", fmt.Errorf("\\u{ without its closing }")
				}
				fmt.Fprintf(&b, `\x{%s}`, p[i+3:i+3+end])
				i += 3 + end
			case n == 'u' && i+5 < len(p) && isHex(p[i+2:i+6]):
				fmt.Fprintf(&b, `\x{%s}`, p[i+2:i+6])
				i += 5
			case n == 'c' && i+2 < len(p) && isLetter(p[i+2]):
				fmt.Fprintf(&b, `\x{%x}`, p[i+2]%32)
				i += 2
			case n == '0' && (i+2 >= len(p) || p[i+2] < '0' || p[i+2] > '9'):
				b.WriteString(`\x00`)
				i++
			case n >= '1' && n <= '9' && !inClass:
				return "", fmt.Errorf("back-references (\\%c) are JavaScript syntax RE2 cannot run", n)
			case n == 'k' && i+2 < len(p) && p[i+2] == '<':
				return "", fmt.Errorf("named back-references (\\k<…>) are JavaScript syntax RE2 cannot run")
			case n == '/' || n == '-' && !inClass:
				b.WriteByte(n) // JavaScript allows these escapes; RE2 needs none
				i++
			default:
				b.WriteByte(c)
				b.WriteByte(n)
				i++
			}
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			switch {
			case strings.HasPrefix(p[i:], "[^]"):
				b.WriteString(`(?s:.)`)
				i += 2
			case strings.HasPrefix(p[i:], "[]"):
				b.WriteString(`[^\x00-\x{10FFFF}]`)
				i++
			default:
				inClass = true
				b.WriteByte(c)
				if i+1 < len(p) && p[i+1] == '^' {
					b.WriteByte('^')
					i++
				}
				if i+1 < len(p) && p[i+1] == ']' { // a ] first in a class is literal
					b.WriteString(`\]`)
					i++
				}
			}
		case c == '(' && strings.HasPrefix(p[i:], "(?="), c == '(' && strings.HasPrefix(p[i:], "(?!"):
			return "", fmt.Errorf("look-ahead %s…) is JavaScript syntax RE2 cannot run", p[i:i+3])
		case c == '(' && strings.HasPrefix(p[i:], "(?<="), c == '(' && strings.HasPrefix(p[i:], "(?<!"):
			return "", fmt.Errorf("look-behind %s…) is JavaScript syntax RE2 cannot run", p[i:i+4])
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func isHex(s string) bool {
	for k := 0; k < len(s); k++ {
		c := s[k]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c&^0x20 && c&^0x20 <= 'z' }

// required returns literal strings that every match of re contains,
// lower-cased, each as long as the pattern allows: runs of literals in a
// concatenation, and what a capture or a repetition of at least one
// requires. Alternations and optional parts require nothing.
func required(re *syntax.Regexp) []string {
	var out []string
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			out = append(out, literal(re))
		case syntax.OpCapture:
			walk(re.Sub[0])
		case syntax.OpPlus:
			walk(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min >= 1 {
				walk(re.Sub[0])
			}
		case syntax.OpConcat:
			var run strings.Builder
			flush := func() {
				if run.Len() > 0 {
					out = append(out, run.String())
					run.Reset()
				}
			}
			for _, sub := range flat(re.Sub) {
				if sub.Op == syntax.OpLiteral {
					run.WriteString(literal(sub))
					continue
				}
				// A literal repeated at least n times: n of it go on the
				// run, and its last one begins the next.
				if n, many := repeats(sub); n > 0 {
					lit := literal(sub.Sub[0])
					run.WriteString(strings.Repeat(lit, n))
					if many {
						flush()
						run.WriteString(lit)
					}
					continue
				}
				flush()
				walk(sub)
			}
			flush()
		}
	}
	walk(re)
	keep := out[:0]
	for _, s := range out {
		// As Normalize writes a text: a regular expression's literal may
		// hold control characters (\0, \x01), which the index holds as spaces.
		if s = strings.Join(strings.FieldsFunc(s, Blank), " "); s != "" {
			keep = append(keep, s)
		}
	}
	return keep
}

// flat returns subs with the concatenations among them spliced in (a
// simplified x{1,2} is a concatenation x x?).
func flat(subs []*syntax.Regexp) []*syntax.Regexp {
	var out []*syntax.Regexp
	for _, sub := range subs {
		if sub.Op == syntax.OpConcat {
			out = append(out, flat(sub.Sub)...)
		} else {
			out = append(out, sub)
		}
	}
	return out
}

// repeats returns how many times at least re repeats a literal (0: re is
// not such a repetition) and whether it may repeat it more.
func repeats(re *syntax.Regexp) (int, bool) {
	if len(re.Sub) != 1 || re.Sub[0].Op != syntax.OpLiteral {
		return 0, false
	}
	switch re.Op {
	case syntax.OpPlus:
		return 1, true
	case syntax.OpRepeat:
		return re.Min, re.Max != re.Min
	}
	return 0, false
}

// literal returns a literal node's text, lower-cased.
func literal(re *syntax.Regexp) string {
	b := make([]byte, 0, len(re.Rune))
	for _, r := range re.Rune {
		b = utf8.AppendRune(b, lower(r))
	}
	return string(b)
}
