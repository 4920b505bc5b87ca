package js

import (
	"regexp"
	"strings"
	"testing"
)

// TestRegExp: a pattern rewritten in RE2's syntax matches what
// JavaScript's new RegExp(pattern) matches on each text (as node says;
// search's TestRegexAsPi asks pi itself), and what RE2 cannot run is
// refused by name.
func TestRegExp(t *testing.T) {
	for _, c := range []struct {
		pat       string
		match     []string
		miss      []string
		errSubstr string
	}{
		{pat: `a.b`, match: []string{"axb", "a\u00a0b"}, miss: []string{"a\nb", "a\rb", "a\u2028b"}},
		{pat: `a\sb`, match: []string{"a b", "a\vb", "a\u3000b", "a\ufeffb"}, miss: []string{"axb"}},
		{pat: `a\Sb`, match: []string{"axb"}, miss: []string{"a\u3000b"}},
		{pat: `[^]`, match: []string{"\n"}},
		{pat: `x[]`, miss: []string{"x", "x]"}},
		{pat: `\uD83D\uDE00`, match: []string{"\U0001F600"}},
		{pat: `\u00e9\x41\101`, match: []string{"éAA"}},
		{pat: `\u12`, match: []string{"u12"}},
		{pat: `\cJ`, match: []string{"\n"}},
		{pat: `\c1`, match: []string{`\c1`}},
		{pat: `[\b]`, match: []string{"\x08"}, miss: []string{"b"}},
		{pat: `\p\z\Q`, match: []string{"pzQ"}},
		{pat: `[[:alpha:]]`, match: []string{":]", "a]"}, miss: []string{"b"}},
		{pat: `[\w-.]+$`, match: []string{"a-b.c"}},
		{pat: `a{,2}`, match: []string{"a{,2}"}, miss: []string{"aa"}},
		{pat: `(?<year>\d{4})`, match: []string{"2026"}},
		{pat: `\8`, match: []string{"8"}},
		{pat: `a(?=b)`, errSubstr: "look-ahead (?=…) is JavaScript syntax RE2 cannot run"},
		{pat: `(?<!a)b`, errSubstr: "look-behind (?<!…)"},
		{pat: `(a)\1`, errSubstr: `back-references (\1)`},
		{pat: `(?<n>a)\k<n>`, errSubstr: "named back-references"},
		{pat: `(?i)a`, errSubstr: "not a JavaScript group"},
		{pat: `^*`, errSubstr: "nothing to repeat"},
		{pat: `a\`, errSubstr: `\ at the end`},
	} {
		got, err := RegExp(c.pat)
		if c.errSubstr != "" {
			if err == nil || !strings.Contains(err.Error(), c.errSubstr) {
				t.Errorf("RegExp(%q) = %q, %v; want an error saying %q", c.pat, got, err, c.errSubstr)
			}
			continue
		}
		if err != nil {
			t.Errorf("RegExp(%q): %v", c.pat, err)
			continue
		}
		re, err := regexp.Compile(got)
		if err != nil {
			t.Errorf("RegExp(%q) = %q, which RE2 refuses: %v", c.pat, got, err)
			continue
		}
		for _, s := range c.match {
			if !re.MatchString(s) {
				t.Errorf("RegExp(%q) = %q does not match %q; JavaScript's does", c.pat, got, s)
			}
		}
		for _, s := range c.miss {
			if re.MatchString(s) {
				t.Errorf("RegExp(%q) = %q matches %q; JavaScript's does not", c.pat, got, s)
			}
		}
	}
}
