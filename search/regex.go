package search

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/piweb/piweb/internal/js"
)

// compileRegex compiles a user's pattern, written as JavaScript writes
// one (pi makes it with new RegExp(pattern, "i")), case-insensitively. It
// refuses what RE2 cannot run (look-around, back-references) by name, and
// patterns whose program would be too large to run under a budget. It
// returns the literals every match contains (see required).
func compileRegex(pat string) (*regexp.Regexp, []string, error) {
	goPat, err := js.RegExp(pat)
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
