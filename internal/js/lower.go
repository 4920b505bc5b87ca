package js

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ToLower is JavaScript's String.prototype.toLowerCase: Unicode's full
// lower-case mapping without a locale. It differs from strings.ToLower in
// two places: İ (U+0130) becomes "i̇" (i and U+0307), and Σ becomes final ς
// at the end of a word (Final_Sigma: after a cased letter, not before one,
// case-ignorable characters skipped both ways).
func ToLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case 'İ':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(s, i, i+n) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
		i += n
	}
	return b.String()
}

// finalSigma reports whether the Σ at s[at:end] is at a word's end: a
// cased letter before it and none after it, case-ignorables skipped.
func finalSigma(s string, at, end int) bool {
	before := false
	for i := at; i > 0; {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		i -= n
		if caseIgnorable(r) {
			continue
		}
		before = cased(r)
		break
	}
	if !before {
		return false
	}
	for i := end; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if caseIgnorable(r) {
			continue
		}
		return !cased(r)
	}
	return true
}

// cased is Unicode's Cased property: Lowercase, Uppercase or Lt.
func cased(r rune) bool {
	return unicode.IsLower(r) || unicode.IsUpper(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// caseIgnorable is Unicode's Case_Ignorable property: Mn, Me, Cf, Lm, Sk,
// and the Word_Break classes MidLetter, MidNumLet and Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '\u00B7', '\u0387', '\u055F', '\u05F4', '\u2018', '\u2019', '\u2024', '\u2027',
		'\uFE13', '\uFE52', '\uFE55', '\uFF07', '\uFF0E', '\uFF1A':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
