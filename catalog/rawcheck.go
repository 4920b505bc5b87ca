package catalog

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/piweb/piweb/search"
)

// rawCheck tells from a line's bytes, before any decoding, that no text
// of it can hold a query's needles (search.Query.Needles), so that the
// candidates of a loose index are not all decoded. It checks only what
// any line holding the needles holds: each needle's runs of plain bytes
// (printable ASCII but for the space and " \ / $ :, which JSON escapes
// or pieces adds between a line's strings), case aside; and two runs a
// needle joins with white space, joined in the line by white space, raw
// or escaped, or each at an edge of a JSON value (pieces joins values with
// line breaks). Lines with \u escapes, or with runes that fold to ASCII
// letters (İ, the Kelvin sign, ſ), are not checked. A nil rawCheck passes
// every line.
type rawCheck struct {
	runs  [][]byte    // every line holds each
	pairs [][2][]byte // runs joined by white space
	low   []byte      // the line, ASCII lower-cased
}

// newRawCheck returns the check of needles; nil when it has nothing to check.
func newRawCheck(needles []string) *rawCheck {
	rc := &rawCheck{}
	plain := func(c byte) bool { return c > ' ' && c < 0x7f && !strings.ContainsRune(`"\/$:`, rune(c)) }
	runs := func(w string) [][]byte {
		var out [][]byte
		for _, r := range strings.FieldsFunc(w, func(r rune) bool { return r >= utf8.RuneSelf || !plain(byte(r)) }) {
			out = append(out, []byte(r))
		}
		return out
	}
	for _, n := range needles {
		words := strings.Split(n, " ")
		for k, w := range words {
			rs := runs(w)
			rc.runs = append(rc.runs, rs...)
			if k+1 < len(words) && w != "" && words[k+1] != "" && plain(w[len(w)-1]) && plain(words[k+1][0]) {
				rc.pairs = append(rc.pairs, [2][]byte{rs[len(rs)-1], runs(words[k+1])[0]})
			}
		}
	}
	if len(rc.runs) == 0 {
		return nil
	}
	return rc
}

// may reports whether line may hold every needle.
func (rc *rawCheck) may(line []byte) bool {
	if rc == nil || rc.holds(line) {
		return true
	}
	// Not as written: lower-cased, unless the line spells letters in ways
	// the check does not read.
	if bytes.Contains(line, []byte(`\u`)) || bytes.Contains(line, []byte("\u0130")) ||
		bytes.Contains(line, []byte("\u212a")) || bytes.Contains(line, []byte("\u017f")) {
		return true
	}
	rc.low = append(rc.low[:0], line...)
	for i, c := range rc.low {
		if 'A' <= c && c <= 'Z' {
			rc.low[i] = c + 'a' - 'A'
		}
	}
	return rc.holds(rc.low)
}

// holds reports whether b holds every run, and every pair joined.
func (rc *rawCheck) holds(b []byte) bool {
	for _, r := range rc.runs {
		if !bytes.Contains(b, r) {
			return false
		}
	}
	for _, p := range rc.pairs {
		if !joined(b, p[0], p[1]) {
			return false
		}
	}
	return true
}

// joined reports whether low holds u, white space (raw or escaped), then
// v; or u at the end of a JSON value and v at the start of one.
func joined(low, u, v []byte) bool {
	atEnd := false
	for i := 0; ; i++ {
		k := bytes.Index(low[i:], u)
		if k < 0 {
			break
		}
		i += k
		j := i + len(u)
		g := j
		for g < len(low) && blankAt(low, g) > 0 {
			g += blankAt(low, g)
		}
		if g > j && bytes.HasPrefix(low[g:], v) {
			return true
		}
		atEnd = atEnd || g == len(low) || low[g] == '"' || strings.IndexByte(`,}]`, low[g]) >= 0 && valueEnd(low, i, j)
	}
	for i := 0; atEnd; i++ {
		k := bytes.Index(low[i:], v)
		if k < 0 {
			break
		}
		i += k
		g := i
		for g > 0 {
			if _, n := utf8.DecodeLastRune(low[:g]); blankAt(low, g-n) == n {
				g -= n
			} else if g >= 2 && blankAt(low, g-2) == 2 {
				g -= 2
			} else {
				break
			}
		}
		if g == 0 || strings.IndexByte(`":[,{`, low[g-1]) >= 0 {
			return true
		}
	}
	return false
}

// valueEnd reports whether low[i:j], followed by , } or ], ends a JSON
// value that is not a string: an array or object, or a number or literal
// (true, null) whose bytes before i continue it from its start.
func valueEnd(low []byte, i, j int) bool {
	if low[j-1] == ']' || low[j-1] == '}' {
		return true
	}
	for i > 0 && (low[i-1] >= 'a' && low[i-1] <= 'z' || low[i-1] >= '0' && low[i-1] <= '9' || strings.IndexByte("+-.", low[i-1]) >= 0) {
		i--
	}
	for i > 0 && blankAt(low, i-1) == 1 {
		i--
	}
	return i == 0 || strings.IndexByte(":[,", low[i-1]) >= 0
}

// blankAt returns the length of the white space at low[i] as a line holds
// it (a rune Normalize writes as a space, or an escaped one), 0 when there
// is none.
func blankAt(low []byte, i int) int {
	if low[i] == '\\' && i+1 < len(low) && strings.IndexByte("ntrbf", low[i+1]) >= 0 {
		return 2
	}
	if r, n := utf8.DecodeRune(low[i:]); search.Blank(r) {
		return n
	}
	return 0
}
