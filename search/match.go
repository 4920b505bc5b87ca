package search

import (
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Range is a half-open byte range [Start, End) of a text.
type Range struct{ Start, End int }

// ErrBudget is returned by Match when a regular expression ran out of time.
var ErrBudget = errors.New("the regular expression took too long on this text")

// maxRanges bounds the ranges Match returns for one token.
const maxRanges = 32

// Match reports whether text satisfies every text condition of q (its
// tokens, phrases and regular expressions, and none of the negated ones;
// the filters are not looked at), with the byte ranges of text to
// highlight, sorted and not overlapping. A regular expression that exceeds
// q.Budget makes the text not match, with ErrBudget.
func (q *Query) Match(text string) ([]Range, bool, error) {
	var f *folded
	deadline := time.Time{}
	if q.Budget > 0 {
		deadline = time.Now().Add(q.Budget)
	}
	var out []Range
	for i := range q.Text {
		t := &q.Text[i]
		rs, err := t.find(text, &f, deadline, maxRanges)
		if err != nil || len(rs) == 0 {
			return nil, false, err
		}
		out = append(out, rs...)
	}
	for i := range q.Not {
		t := &q.Not[i]
		rs, err := t.find(text, &f, deadline, 1)
		if err != nil || len(rs) > 0 {
			return nil, false, err
		}
	}
	return mergeRanges(out), true, nil
}

// find returns up to max ranges where t matches text. f is the folded
// text, made on first need and shared between tokens.
func (t *Token) find(text string, f **folded, deadline time.Time, max int) ([]Range, error) {
	if t.Kind == Regex {
		return findRegex(t.re, text, deadline, max)
	}
	if t.needle == "" {
		return nil, nil
	}
	if *f == nil {
		*f = fold(text)
	}
	ft := *f
	first, _ := utf8.DecodeRuneInString(t.needle)
	anchored := class(first) == cWord
	var out []Range
	for from := 0; from <= len(ft.s) && len(out) < max; {
		k := strings.Index(ft.s[from:], t.needle)
		if k < 0 {
			break
		}
		k += from
		start := ft.orig(k)
		if !anchored || wordStart(text, start) {
			out = append(out, Range{start, ft.orig(k + len(t.needle))})
			from = k + len(t.needle)
			if len(t.needle) == 0 {
				from++
			}
			continue
		}
		_, size := utf8.DecodeRuneInString(ft.s[k:])
		from = k + size
	}
	return out, nil
}

// folded is a text lower-cased rune by rune with runs of white space
// turned into one space, and where each of its bytes came from.
type folded struct {
	s   string
	off []int32 // off[i] is the text offset of s[i]; off[len(s)] = len(text). nil: the same offsets.
	n   int
}

func (f *folded) orig(i int) int {
	if f.off == nil {
		return i
	}
	return int(f.off[i])
}

func fold(text string) *folded {
	simple := true
	for k := 0; k < len(text); k++ {
		c := text[k]
		if c >= utf8.RuneSelf || c < 0x20 || c == ' ' && k+1 < len(text) && isSpace(text[k+1]) {
			simple = false
			break
		}
	}
	if simple {
		b := []byte(text)
		for k, c := range b {
			if 'A' <= c && c <= 'Z' {
				b[k] = c + 'a' - 'A'
			}
		}
		return &folded{s: string(b), n: len(text)}
	}
	b := make([]byte, 0, len(text))
	off := make([]int32, 0, len(text)+1)
	space := false
	for i, r := range text {
		if unicode.IsSpace(r) {
			if !space {
				b = append(b, ' ')
				off = append(off, int32(i))
			}
			space = true
			continue
		}
		space = false
		n := len(b)
		b = utf8.AppendRune(b, lower(r))
		for range len(b) - n {
			off = append(off, int32(i))
		}
	}
	off = append(off, int32(len(text)))
	return &folded{s: string(b), off: off, n: len(text)}
}

// wordStart reports whether the rune at byte i of text starts a word:
// the start of a run of letters and digits, a camelCase part of a short
// run (see camelStarts), a CJK character or a symbol.
func wordStart(text string, i int) bool {
	r, _ := utf8.DecodeRuneInString(text[i:])
	if c := class(r); c != cWord {
		return c != cSep
	}
	p, _ := utf8.DecodeLastRuneInString(text[:i])
	if i == 0 || class(p) != cWord {
		return true
	}
	// Inside a run: find it, up to the length camel parts are allowed in.
	s := i
	for s > 0 && i-s <= maxCamelRun {
		r2, size := utf8.DecodeLastRuneInString(text[:s])
		if class(r2) != cWord {
			break
		}
		s -= size
	}
	e := i
	for e < len(text) && e-s <= maxCamelRun {
		r2, size := utf8.DecodeRuneInString(text[e:])
		if class(r2) != cWord {
			break
		}
		e += size
	}
	if e-s > maxCamelRun {
		return false
	}
	var buf [maxCamelParts + 1]int
	return slices.Contains(camelStarts(buf[:0], text[s:e]), i-s)
}

// findRegex returns up to max matches of re in text, giving up with
// ErrBudget once deadline passes (a zero deadline: no limit).
func findRegex(re *regexp.Regexp, text string, deadline time.Time, max int) ([]Range, error) {
	rr := &budgetReader{s: text, deadline: deadline}
	loc := re.FindReaderIndex(rr)
	if rr.expired {
		return nil, ErrBudget
	}
	if loc == nil {
		return nil, nil
	}
	if max == 1 {
		return []Range{{loc[0], loc[1]}}, nil
	}
	// The first match is known; the others for highlighting come from a
	// bounded window after it, which costs at most as much again.
	end := min(len(text), loc[1]+64<<10)
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	var out []Range
	for _, m := range re.FindAllStringIndex(text[:end], max) {
		out = append(out, Range{m[0], m[1]})
	}
	if len(out) == 0 {
		out = []Range{{loc[0], loc[1]}}
	}
	return out, nil
}

// budgetReader reads a string rune by rune until a deadline.
type budgetReader struct {
	s        string
	i, n     int
	deadline time.Time
	expired  bool
}

func (r *budgetReader) ReadRune() (rune, int, error) {
	if r.i >= len(r.s) {
		return 0, 0, io.EOF
	}
	if r.n++; r.n&1023 == 0 && !r.deadline.IsZero() && time.Now().After(r.deadline) {
		r.expired = true
		return 0, 0, io.EOF
	}
	c, size := rune(r.s[r.i]), 1
	if c >= utf8.RuneSelf {
		c, size = utf8.DecodeRuneInString(r.s[r.i:])
	}
	r.i += size
	return c, size, nil
}

// mergeRanges sorts ranges and joins those that overlap or touch.
func mergeRanges(rs []Range) []Range {
	if len(rs) < 2 {
		return rs
	}
	slices.SortFunc(rs, func(a, b Range) int { return a.Start - b.Start })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.Start <= last.End {
			last.End = max(last.End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Snippet returns about width bytes of text around its first range, with
// white space shown as single spaces and "…" where text was cut, and the
// ranges that fall in it, relative to the snippet.
func Snippet(text string, ranges []Range, width int) (string, []Range) {
	if width <= 0 {
		width = 160
	}
	first := 0
	if len(ranges) > 0 {
		first = ranges[0].Start
	}
	start := max(0, first-width/3)
	end := min(len(text), start+width)
	if end-start < width {
		start = max(0, end-width)
	}
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	// Start and end at a word boundary when one is near.
	if start > 0 {
		if k := strings.IndexAny(text[start:min(first, start+20)], " \n\t"); k >= 0 {
			start += k + 1
		}
	}
	var b strings.Builder
	shift := 0
	if start > 0 {
		b.WriteString("…")
		shift = len("…")
	}
	var out []Range
	body := []byte(text[start:end])
	for k, c := range body {
		if c == '\n' || c == '\t' || c == '\r' || c < 0x20 {
			body[k] = ' '
		}
	}
	b.Write(body)
	for _, r := range ranges {
		if r.End <= start || r.Start >= end {
			continue
		}
		out = append(out, Range{max(r.Start, start) - start + shift, min(r.End, end) - start + shift})
	}
	if end < len(text) {
		b.WriteString("…")
	}
	return b.String(), out
}
