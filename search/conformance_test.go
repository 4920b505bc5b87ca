package search

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/oracle"
)

// regexCases are patterns where JavaScript's syntax (pi's new RegExp(p,
// "i"), without the u flag) and RE2's part ways.
var regexCases = []string{
	`\p{L}+`, `\P{L}`, `\z`, `\A`, `\Qa.b\E`, `\a`, `\e`, `\h`, `\C`, `\pN`, `\x{41}`,
	`[[:alpha:]]+`, `[[:digit:]]`, `a\u0041\u{42}`, `\u{2}`, `\u004`, `\x4`, `\x41\x4a`,
	`\101`, `\0`, `\08`, `\1`, `(a)\1`, `(a)\2`, `(a)\10`, `\8`, `\9`, `\377`, `\400`,
	`\cA`, `\cz`, `\c1`, `\c`, `[\c1]`, `[\c_]`, `[\cA]`, `[\b]`, `[\B]`, `\b\w+\b`,
	`.`, `a.b`, `^.$`, `\s`, `\S+`, `[\s]`, `[\S]+`, `[^\s]+`, `a\sb`, `a\vb`, `[\d-z]+`, `[a-\d]+`, `[a-c-e]+`,
	`[-a]`, `[a-]`, `[^-a]`, `[]a]`, `[^]a]`, `[]`, `[^]`, `[\]]`, `[\-]`, `[a\-z]+`, `[\w-.]+`,
	`(?i)a`, `(?s).`, `(?P<n>a)`, `(?<n>a)`, `(?<n>a)\k<n>`, `\k<n>`, `\k`, `(?:ab)+`, `a(?=b)`, `(?<!a)b`,
	`a{2,`, `a{,2}`, `{`, `}`, `]`, `x{1}{2}`, `a**`, `a++`, `a{2}?`, `(`, `)`, `\`, `a|`, `|`,
	`\uD83D\uDE00`, `\uD83D`, `\/`, `\-`, `\ `, `\é`, `é+`, `\u00e9`, `[\u0041-\u005a]+`, `\$`, `$a`, `a$`,
}

// regexTexts are the texts every pattern is matched on.
var regexTexts = []string{
	"abc ABC", "p{L}}} P{L} pN", "z A Q a.b E a e h C", "aAuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu u{2}", "x4 u004 JAJ",
	"\x00 \x01 8 9 \u00ff 8a", "a\u00a0b a\u2028b a\vb a\rb a\tb a\ufeffb", "\x08 \\c1 \\c \x01 \x1f", "[:alpha:] :]",
	"a-z 0-9 x.y w-.", "]a ^a", "k<n> k", "é É", "{a{2,} a{,2} }}", "a/b a-b a b a$b $a",
}

// TestRegexAsPi: every pattern either matches what pi's own search
// matches (the first match in each text), or is refused where pi refuses
// it, or is one RE2 cannot run (look-around, back-references, too many
// repeats), refused by name.
func TestRegexAsPi(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 1))
	tokens := []string{`a`, `b`, `A`, `.`, `\s`, `\S`, `\d`, `\w`, `\b`, `\B`, `[ab]`, `[^a]`, `[[:alpha:]]`, `[\s]`, `[\S]`,
		`[a-c]`, `[\d-z]`, `[-.]`, `\p{L}`, `\z`, `\Q`, `\x41`, `\x4`, `\u0041`, `\u{2}`, `\101`, `\8`, `\0`, `\cA`, `\c1`, `\c`,
		`{`, `}`, `]`, `{2}`, `{1,2}`, `{2,}`, `*`, `+`, `?`, `*?`, `|`, `(`, `)`, `(?:`, `(?<n>`, `^`, `$`, ` `, `\k<n>`, `\1`, `-`, `:`, `é`, `\/`,
		`\v`, `[\b]`, `[\B]`, `\uD83D`, `[^]`, `[]`, `{,2}`, `{1,}`, `[\w-]`, `\2`, `(?=`, `\-`, `[[]`, `[^\S]`}
	patterns := append([]string{}, regexCases...)
	for len(patterns) < 3000 {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(tokens[r.IntN(len(tokens))])
		}
		if p := strings.TrimSpace(b.String()); p != "" {
			patterns = append(patterns, p)
		}
	}
	var pi []struct {
		Error   string    `json:"error"`
		Matches []*string `json:"matches"`
	}
	askPi(t, "regex.mjs", map[string]any{"patterns": patterns, "texts": regexTexts}, &pi)
	if len(pi) != len(patterns) {
		t.Fatalf("regex.mjs printed %d answers for %d patterns", len(pi), len(patterns))
	}
	bad := 0
	for k, p := range patterns {
		re, _, err := compileRegex(strings.TrimFunc(p, isSpace)) // as the query's parser, and pi's

		want := pi[k]
		switch {
		case err != nil && want.Error == "":
			if !strings.Contains(err.Error(), "RE2 cannot run") && !strings.Contains(err.Error(), "invalid repeat count") {
				t.Errorf("%q: piweb refuses it (%v), pi runs it", p, err)
				bad++
			}
		case err == nil && want.Error != "":
			t.Errorf("%q: pi refuses it (%s), piweb runs it", p, want.Error)
			bad++
		case err == nil:
			for j, text := range regexTexts {
				var got *string
				if loc := re.FindStringIndex(text); loc != nil {
					m := text[loc[0]:loc[1]]
					got = &m
				}
				if (got == nil) != (want.Matches[j] == nil) || got != nil && *got != *want.Matches[j] {
					t.Errorf("%q on %q: piweb %s, pi %s", p, text, show(got), show(want.Matches[j]))
					bad++
				}
			}
		}
		if bad > 40 {
			t.Fatal("too many differences")
		}
	}
}

func show(s *string) string {
	if s == nil {
		return "no match"
	}
	b, _ := json.Marshal(*s)
	return string(b)
}

// askPi runs a script of conformance/ on pi's package with in as JSON on
// its stdin, and decodes what it prints into out.
func askPi(t *testing.T, script string, in, out any) {
	t.Helper()
	pkg := oracle.Package(t)
	b, _ := json.Marshal(in)
	cmd := exec.Command("node", filepath.Join(oracle.Dir(t), script), pkg)
	cmd.Stdin = bytes.NewReader(b)
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, oracle.Stderr(err))
	}
	if err := json.Unmarshal(got, out); err != nil {
		t.Fatalf("%s printed %q: %v", script, got, err)
	}
}
