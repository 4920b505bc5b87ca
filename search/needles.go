package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Needles returns the literal strings every text matching q contains,
// lower-cased and with white space runs collapsed to one space, as
// Normalize writes a text: each word and phrase, and the literals each
// regular expression requires. An index of normalized texts that finds
// every text holding all of them finds a superset of q's matches.
func (q *Query) Needles() []string {
	var out []string
	for i := range q.Text {
		t := &q.Text[i]
		if t.Kind == Regex {
			out = append(out, t.lits...)
		} else if t.needle != "" {
			out = append(out, t.needle)
		}
	}
	return out
}

// Normalize returns text as an index holds it for Needles: lower-cased
// rune by rune, as matching folds it, every run of white space (and of
// control characters, which no needle holds) one space, and invalid UTF-8
// as U+FFFD.
func Normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	space := false
	for i := 0; i < len(text); {
		c := text[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			r = rune(c)
		} else {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		if Blank(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
			continue
		}
		b.WriteRune(lower(r))
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}

// Blank reports whether Normalize writes r as white space: white space
// (JavaScript's U+FEFF too) and control characters.
func Blank(r rune) bool {
	return r <= ' ' || r == 0x7f || r >= utf8.RuneSelf && (isSpace(r) || unicode.IsControl(r))
}

// isSpace reports whether r is white space to a phrase: Unicode's, and
// U+FEFF, which JavaScript's \s (pi's picker) counts too.
func isSpace(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' }

// lower folds one rune for a search: the lower case of its upper case, so
// that the letters case folding makes one (RE2's, for a regular
// expression) lower alike: ς and σ (pi's picker lower-cases a Σ that ends
// a word as ς), µ and μ, ſ and s, ϑ and θ. Turkish ı, whose upper case is
// I, stays itself, as case folding leaves it.
func lower(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	if r == 'ı' {
		return r
	}
	return unicode.ToLower(unicode.ToUpper(r))
}
