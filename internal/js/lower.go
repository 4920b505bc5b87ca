package js

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ToLower is JavaScript's String.prototype.toLowerCase: Unicode's full
// lowercase mapping, not Go's rune by rune one. It differs from
// strings.ToLower in two places pi's searches meet: "İ" (U+0130) becomes
// "i" and a combining dot above (U+0307), and a capital sigma at the end of
// a word becomes the final form "ς" (Unicode's Final_Sigma condition).
func ToLower(s string) string {
	ascii := true
	for k := 0; k < len(s); k++ {
		if s[k] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch r {
		case 'İ':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(s, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma reports Unicode's Final_Sigma condition for the sigma at byte
// i of s: a cased letter before it and none after it, skipping
// case-ignorable characters on both sides.
func finalSigma(s string, i int) bool {
	before := false
	for j := i; j > 0; {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		j -= n
		if caseIgnorable(r) {
			continue
		}
		before = cased(r)
		break
	}
	if !before {
		return false
	}
	for j := i + len("Σ"); j < len(s); {
		r, n := utf8.DecodeRuneInString(s[j:])
		j += n
		if caseIgnorable(r) {
			continue
		}
		return !cased(r)
	}
	return true
}

// cased is Unicode's Cased property.
func cased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: marks, format
// characters, modifiers, and the characters that may sit inside a word
// (Word_Break MidLetter, MidNumLet, Single_Quote).
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '·', '\u0387', '\u055F', '\u05F4', '\u2018', '\u2019', '\u2024', '\u2027', '\uFE13', '\uFE52', '\uFE55', '\uFF07', '\uFF0E', '\uFF1A', '\u00AD':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
