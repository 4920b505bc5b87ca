package search

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzParse parses arbitrary queries and matches them against arbitrary
// texts: no panic, errors are *Error, ranges lie in the text, in order, and
// whatever Match accepts holds every needle once normalized (so an index
// never hides a hit).
func FuzzParse(f *testing.F) {
	for _, s := range [][2]string{
		{"foo", "a foo b"},
		{`"foo bar" -baz`, "foo  bar"},
		{"re:(a*)*b", "aaaaaaaaaaaaaaaaaaaaaaaac"},
		{"handler -re:^x", "requestHandler"},
		{"日本 🚀", "日本語 🚀"},
		{"role:user project:x after:7d before:2026-01-01 is:offpath label:\"a b\"", "t"},
		{`-"" -`, "-"},
		{"re:\\bfoo\\b", "a foo"},
		{"K", "\u212a\u212a"},
		{"ǂroleuser", "ǂroleuser"},
		{"\"\u00a0x\"", "\u00a0x"},
		{"İ", "i̇"},
		{"ΔΌΣ İs:x 東京\u3000大阪", "Οδός İs:x 大阪と東京"},
		{"re:ses+ion tre{1,2}", "a sesssion treee"},
		{"re:x(ab)+Y{2,}z", "XABABYYYZ"},
		{`re:[[:alpha:]]\u{3}\101\cJ.[^]`, ":]uuuA\nxy"},
		{`re:\uD83D\uDE00[\s\S-]\p{L}\b`, "\U0001F600\u00a0p{L}"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, query, text string) {
		q, err := ParseAt(query, testNow)
		if err != nil {
			var qe *Error
			if !errors.As(err, &qe) || qe.Msg == "" {
				t.Fatalf("error %v (%T) is not a *Error with a message", err, err)
			}
			return
		}
		if !utf8.ValidString(text) {
			return
		}
		q.Budget = 0 // no timing in a fuzz run: RE2 is linear in the text
		rs, ok, err := q.Match(text)
		if err != nil {
			t.Fatalf("Match: %v", err)
		}
		last := 0
		for _, r := range rs {
			if r.Start < last || r.End < r.Start || r.End > len(text) {
				t.Fatalf("ranges %v out of order or outside %d bytes", rs, len(text))
			}
			last = r.End
		}
		if ok && !indexAccepts(q, text) {
			t.Fatalf("Match accepts %q for %q but its needles %q are not all in %q", text, query, q.Needles(), Normalize(text))
		}
		s, srs := Snippet(text, rs, 40)
		for _, r := range srs {
			if r.Start < 0 || r.End > len(s) || r.Start > r.End {
				t.Fatalf("snippet range %v outside %q", r, s)
			}
		}
		es, ers, eok, err := q.Excerpt(text, 40)
		if err != nil || eok != ok {
			t.Fatalf("Excerpt says %v (%v), Match %v", eok, err, ok)
		}
		for _, r := range ers {
			if r.Start < 0 || r.End > len(es) || r.Start >= r.End || !utf8.ValidString(es[r.Start:r.End]) {
				t.Fatalf("excerpt range %v outside %q or empty", r, es)
			}
		}
	})
}
