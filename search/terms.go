package search

import (
	"unicode"
	"unicode/utf8"
)

// MaxTerm is the longest term Terms emits, in bytes; longer words are cut
// (at a rune boundary) and found by prefix.
const MaxTerm = 64

// Camel-case parts are words of their own only inside short runs: a long
// run of letters and digits (base64, a hash, minified code) is one word, so
// that it does not multiply the index.
const (
	maxCamelRun   = 40 // bytes
	maxCamelParts = 6  // internal boundaries
)

// Rune classes.
const (
	cSep  = iota // separates words
	cWord        // letters, digits and marks outside CJK
	cCJK         // Han, Hiragana, Katakana, Hangul: every character starts a word
	cSym         // pictographic symbols (emoji, ✓): each is a word of its own
)

var asciiClass [utf8.RuneSelf]uint8

func init() {
	for c := 0; c < utf8.RuneSelf; c++ {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			asciiClass[c] = cWord
		}
	}
}

// class returns the class of r.
func class(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case r == 0x30FC || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
		if unicode.IsLetter(r) || unicode.IsNumber(r) || r == 0x30FC {
			return cCJK
		}
		return cSep // CJK punctuation
	case 0xFE00 <= r && r <= 0xFE0F, 0xE0100 <= r && r <= 0xE01EF, 0x1F3FB <= r && r <= 0x1F3FF:
		return cSep // variation selectors and skin tones belong to the symbol before them
	case unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
		return cWord
	case unicode.Is(unicode.So, r):
		return cSym
	}
	return cSep
}

func isUpper(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.IsUpper(r)
}

func isLower(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.IsLower(r)
}

func lower(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

// camelStarts appends to dst the byte offsets (relative to run) where a
// camelCase part starts inside run, a run of cWord runes: a lower-case
// letter or digit followed by an upper-case one, or the last upper-case
// letter of an acronym followed by a lower-case one ("HTTPServer": S). A
// run longer than maxCamelRun bytes, or with more than maxCamelParts such
// places, has none.
func camelStarts(dst []int, run string) []int {
	if len(run) > maxCamelRun || len(run) < 2 {
		return dst
	}
	var rs [maxCamelRun]rune
	var offs [maxCamelRun]int
	n := 0
	for i, r := range run {
		rs[n], offs[n] = r, i
		n++
	}
	base := len(dst)
	for k := 1; k < n; k++ {
		p, c := rs[k-1], rs[k]
		if !isUpper(c) {
			continue
		}
		if isLower(p) || unicode.IsDigit(p) || isUpper(p) && k+1 < n && isLower(rs[k+1]) {
			dst = append(dst, offs[k])
		}
	}
	if len(dst)-base > maxCamelParts {
		return dst[:base]
	}
	return dst
}

// appendLowerCut appends s lower-cased to dst, at most MaxTerm bytes of it,
// and reports whether it was cut.
func appendLowerCut(dst []byte, s string) ([]byte, bool) {
	start := len(dst)
	for _, r := range s {
		r = lower(r)
		if len(dst)-start+utf8.RuneLen(r) > MaxTerm {
			return dst, true
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst, false
}

// Terms calls fn with every index term of text, in order, duplicates
// included. term is only valid during the call.
func Terms(text string, fn func(term []byte)) {
	TermOffsets(text, func(term []byte, _ int) { fn(term) })
}

// TermAt appends to dst the term Terms gives for the word, pair of CJK
// characters or symbol starting at byte off of text (an offset
// TermOffsets reported), so that an index may keep offsets, not words.
func TermAt(dst []byte, text string, off int) []byte {
	if c := text[off]; c < utf8.RuneSelf && asciiClass[c] == cWord {
		j := off + 1
		for j < len(text) && text[j] < utf8.RuneSelf && asciiClass[text[j]] == cWord {
			j++
		}
		if j == len(text) || text[j] < utf8.RuneSelf {
			return appendLowerASCII(dst, text[off:j]) // an ASCII word
		}
	}
	r, size := utf8.DecodeRuneInString(text[off:])
	switch class(r) {
	case cSym:
		return append(dst, text[off:off+size]...)
	case cCJK:
		if r2, s2 := utf8.DecodeRuneInString(text[off+size:]); s2 > 0 && class(r2) == cCJK {
			size += s2
		}
		return append(dst, text[off:off+size]...)
	case cWord:
		j := off + size
		for j < len(text) {
			r2, s2 := utf8.DecodeRuneInString(text[j:])
			if class(r2) != cWord {
				break
			}
			j += s2
		}
		dst, _ = appendLowerCut(dst, text[off:j])
		return dst
	}
	return dst
}

// TermOffsets is Terms with the byte offset in text where each term starts.
func TermOffsets(text string, fn func(term []byte, off int)) {
	var buf []byte
	var starts []int
	i := 0
	for i < len(text) {
		if c := text[i]; c < utf8.RuneSelf && asciiClass[c] == cSep {
			i++
			continue
		}
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		switch class(r) {
		case cSep:
			i += size
		case cSym:
			fn(append(buf[:0], text[i:i+size]...), i)
			i += size
		case cCJK:
			j := i + size
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if class(r2) != cCJK {
					break
				}
				fn(append(buf[:0], text[i:j+s2]...), i) // the pair starting at i
				i, j = j, j+s2
			}
			fn(append(buf[:0], text[i:j]...), i) // the last one alone
			i = j
		case cWord:
			j := i + size
			ascii := r < utf8.RuneSelf
			upper := false // an upper-case letter after the first: maybe camel parts
			if ascii {
				for j < len(text) {
					c := text[j]
					if c >= utf8.RuneSelf || asciiClass[c] != cWord {
						break
					}
					upper = upper || 'A' <= c && c <= 'Z'
					j++
				}
			}
			for j < len(text) {
				r2, s2 := rune(text[j]), 1
				if r2 >= utf8.RuneSelf {
					r2, s2 = utf8.DecodeRuneInString(text[j:])
					ascii = false
				}
				if class(r2) != cWord {
					break
				}
				upper = upper || isUpper(r2)
				j += s2
			}
			run := text[i:j]
			if ascii {
				buf = appendLowerASCII(buf[:0], run)
			} else {
				buf, _ = appendLowerCut(buf[:0], run)
			}
			fn(buf, i)
			if upper {
				starts = camelStarts(starts[:0], run)
				for _, s := range starts {
					buf, _ = appendLowerCut(buf[:0], run[s:])
					fn(buf, i+s)
				}
			}
			i = j
		}
	}
}

// appendLowerASCII appends the ASCII s lower-cased to dst, at most MaxTerm bytes of it.
func appendLowerASCII(dst []byte, s string) []byte {
	s = s[:min(len(s), MaxTerm)]
	n := len(dst)
	dst = append(dst, s...)
	for k := n; k < len(dst); k++ {
		if c := dst[k]; 'A' <= c && c <= 'Z' {
			dst[k] = c + 'a' - 'A'
		}
	}
	return dst
}

// qterm is one term a query needs in the index: exactly, or as a prefix.
type qterm struct {
	text   string
	prefix bool
}

// maxTokenTerms bounds the terms one token contributes to an index query;
// using fewer only widens the candidates Match then checks.
const maxTokenTerms = 8

// queryTerms returns the index terms a document must hold for Match to
// accept tok (a word or phrase, not yet lower-cased).
func queryTerms(tok string) []qterm {
	var out []qterm
	var buf []byte
	i := 0
	for i < len(tok) && len(out) < maxTokenTerms {
		r, size := utf8.DecodeRuneInString(tok[i:])
		switch class(r) {
		case cSep:
			i += size
		case cSym:
			out = append(out, qterm{text: tok[i : i+size]})
			i += size
		case cCJK:
			j := i + size
			n := 1
			for j < len(tok) {
				r2, s2 := utf8.DecodeRuneInString(tok[j:])
				if class(r2) != cCJK {
					break
				}
				if len(out) < maxTokenTerms {
					out = append(out, qterm{text: tok[i : j+s2]})
				}
				i, j = j, j+s2
				n++
			}
			if n == 1 {
				// One character: the first of a pair, or alone at the end of a run.
				out = append(out, qterm{text: tok[i:j], prefix: true})
			}
			i = j
		case cWord:
			j := i + size
			for j < len(tok) {
				r2, s2 := utf8.DecodeRuneInString(tok[j:])
				if class(r2) != cWord {
					break
				}
				j += s2
			}
			var cut bool
			buf, cut = appendLowerCut(buf[:0], tok[i:j])
			// The last word of the token may continue in the text.
			out = append(out, qterm{text: string(buf), prefix: cut || j == len(tok)})
			i = j
		}
	}
	return out
}
