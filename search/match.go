package search

import (
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Range is a half-open byte range [Start, End) of a text.
type Range struct{ Start, End int }

// ErrBudget is returned by Excerpt when a regular expression ran out of time.
var ErrBudget = errors.New("the regular expression took too long on this text")

// maxRanges bounds the ranges marked for one token.
const maxRanges = 32

// find returns up to limit ranges where t matches text. f is the folded
// text, made on first need and shared between tokens; it folds only as
// much of the text as the search needs.
func (t *Token) find(text string, f **folded, deadline time.Time, limit int) ([]Range, error) {
	if t.Kind == Regex {
		return findRegex(t.re, text, deadline, limit)
	}
	if t.needle == "" {
		return nil, nil
	}
	if *f == nil {
		*f = &folded{text: text}
	}
	ft := *f
	first := t.words[0]
	var out []Range
	for from := 0; len(out) < limit; {
		ft.need(from + len(first))
		k := strings.Index(ft.s[from:], first)
		if k < 0 {
			if ft.full() {
				break
			}
			from = max(from, len(ft.s)-len(first)+1)
			ft.grow()
			continue
		}
		k += from
		start := ft.orig(k)
		end := k + len(first)
		ok := true
		// The other words of a phrase follow, each after a run of white space.
		for _, w := range t.words[1:] {
			if !ok {
				break
			}
			e := ft.skipSpace(end)
			ft.need(e + len(w))
			ok = e > end && strings.HasPrefix(ft.s[e:], w)
			end = e + len(w)
		}
		if ok {
			out = append(out, Range{start, ft.orig(end)})
			from = end
			continue
		}
		_, size := utf8.DecodeRuneInString(ft.s[k:])
		from = k + size
	}
	return out, nil
}

// folded is a prefix of a text lower-cased rune by rune (all of it once
// full), and where each of its bytes came from.
type folded struct {
	text string
	b    []byte
	s    string  // b as a string
	off  []int32 // off[i] is the text offset of s[i], off[len(s)] = len(text); nil: the same offsets
	done bool
}

func (f *folded) orig(i int) int {
	if f.off == nil {
		return i
	}
	return int(f.off[i])
}

func (f *folded) full() bool { return f.done }

// need folds at least n bytes, or all of the text.
func (f *folded) need(n int) {
	for len(f.s) < n && !f.done {
		f.grow()
	}
}

// grow folds twice as much as before (64 KiB first). Almost always every
// rune keeps its length and offsets do not move; a text with a rune whose
// lower case is longer or shorter (the Kelvin sign, say) is folded whole
// with a table of offsets.
func (f *folded) grow() {
	if f.done {
		return
	}
	n := min(len(f.text), max(64<<10, 2*len(f.b)))
	for n < len(f.text) && !utf8.RuneStart(f.text[n]) {
		n++
	}
	i := len(f.b)
	f.b = append(f.b, f.text[i:n]...)
	for i < n {
		c := f.b[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				f.b[i] = c + 'a' - 'A'
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(f.text[i:])
		if l := lower(r); l != r {
			if utf8.RuneLen(l) != size {
				f.shifted()
				return
			}
			utf8.EncodeRune(f.b[i:], l)
		}
		i += size
	}
	f.done = n == len(f.text)
	if len(f.b) > 0 {
		f.s = string(f.b)
	}
}

// shifted folds the whole text with a table of offsets.
func (f *folded) shifted() {
	b := make([]byte, 0, len(f.text)+8)
	off := make([]int32, 0, len(f.text)+9)
	for i, r := range f.text {
		n := len(b)
		b = utf8.AppendRune(b, lower(r))
		for range len(b) - n {
			off = append(off, int32(i))
		}
	}
	off = append(off, int32(len(f.text)))
	f.b, f.s, f.off, f.done = b, string(b), off, true
}

// skipSpace returns the offset after the white space at s[i:], folding more as needed.
func (f *folded) skipSpace(i int) int {
	for {
		f.need(i + utf8.UTFMax)
		if i >= len(f.s) {
			return i
		}
		c := f.s[i]
		if c < utf8.RuneSelf {
			if c != ' ' && (c < '\t' || c > '\r') {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(f.s[i:])
		if !isSpace(r) {
			return i
		}
		i += size
	}
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

// ReadRune returns the next rune, or io.EOF at the end or once the deadline passed.
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

// Excerpt reports whether text satisfies every text condition of q (its
// tokens, phrases and regular expressions, and none of the negated ones;
// the filters are not looked at), looking only for the first match of
// each token (all of a text only to make sure a negated token is absent),
// and returns about width bytes of text around the earliest match with
// every match inside them marked, as Snippet makes them. A regular
// expression that exceeds q.Budget makes the text not match, with ErrBudget.
func (q *Query) Excerpt(text string, width int) (string, []Range, bool, error) {
	var f *folded
	deadline := time.Time{}
	if q.Budget > 0 {
		deadline = time.Now().Add(q.Budget)
	}
	first := -1
	for i := range q.Text {
		rs, err := q.Text[i].find(text, &f, deadline, 1)
		if err != nil || len(rs) == 0 {
			return "", nil, false, err
		}
		if first < 0 || rs[0].Start < first {
			first = rs[0].Start
		}
	}
	for i := range q.Not {
		rs, err := q.Not[i].find(text, &f, deadline, 1)
		if err != nil || len(rs) > 0 {
			return "", nil, false, err
		}
	}
	if first < 0 {
		s, _ := Snippet(text, nil, width)
		return s, nil, true, nil
	}
	// Mark the matches in and around the part shown: search a window of it
	// with its own offsets.
	if width <= 0 {
		width = 160
	}
	lo, hi := max(0, first-width), min(len(text), first+2*width)
	for lo > 0 && !utf8.RuneStart(text[lo]) {
		lo--
	}
	for hi < len(text) && !utf8.RuneStart(text[hi]) {
		hi++
	}
	part := text[lo:hi]
	var fp *folded
	var ranges []Range
	for i := range q.Text {
		rs, _ := q.Text[i].find(part, &fp, deadline, maxRanges)
		for _, r := range rs {
			// A match the window cut short is not marked: only whole ones.
			if (r.Start > 0 || lo == 0) && (r.End < len(part) || hi == len(text)) {
				ranges = append(ranges, Range{r.Start + lo, r.End + lo})
			}
		}
	}
	if len(ranges) == 0 || ranges[0].Start > first {
		ranges = append(ranges, Range{first, first})
	}
	s, rs := Snippet(text, mergeRanges(ranges), width)
	out := rs[:0]
	for _, r := range rs {
		if r.End > r.Start {
			out = append(out, r)
		}
	}
	return s, out, true, nil
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
