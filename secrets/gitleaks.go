package secrets

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
)

//go:generate go run -C rulegen -mod=mod . -o ../rules_gen.go

// rule is one of gitleaks' rules (rules_gen.go, generated from its config).
type rule struct {
	id          string
	regex       string      // RE2 syntax, as gitleaks compiles it with Go's regexp
	secretGroup int         // the submatch that is the secret; 0: the first non-empty one, or the whole match
	entropy     float64     // when set, a secret needs more Shannon entropy than this
	keywords    []string    // lower case; the rule runs only on a text holding one
	allow       []allowlist // what the rule lets through
}

// allowlist says which of a rule's finds are not secrets.
type allowlist struct {
	all       bool     // regex and stopwords must both allow (gitleaks' condition "AND"); else either
	target    target   // what regex is tested on
	regex     string   // allows what it matches; "" for none
	stopwords []string // lower case; allow a secret that contains one
}

// target is what an allowlist's regex is tested on.
type target uint8

const (
	targetSecret target = iota // the secret
	targetMatch                // the rule's whole match
	targetLine                 // the line of the text holding the match (as gitleaks cuts it)
)

// compiled is gitleaks' rules, compiled; read-only once made.
type compiled struct {
	rules    []compiledRule
	allow    []compiledAllow // the global allowlist
	keywords *keywords
}

type compiledRule struct {
	rule
	re      *regexp.Regexp
	allow   []compiledAllow
	generic bool // a "generic" rule, which yields to another rule that finds the same secret
}

type compiledAllow struct {
	allowlist
	re *regexp.Regexp
}

// table compiles gitleaks' rules on first use (some tens of milliseconds).
var table = sync.OnceValue(func() *compiled {
	c := &compiled{allow: compileAllow(gitleaksAllow), keywords: newKeywords(gitleaksRules)}
	for _, r := range gitleaksRules {
		c.rules = append(c.rules, compiledRule{
			rule:    r,
			re:      regexp.MustCompile(r.regex),
			allow:   compileAllow(r.allow),
			generic: strings.Contains(strings.ToLower(r.id), "generic"),
		})
	}
	return c
})

func compileAllow(as []allowlist) []compiledAllow {
	out := make([]compiledAllow, len(as))
	for i, a := range as {
		out[i].allowlist = a
		if a.regex != "" {
			out[i].re = regexp.MustCompile(a.regex)
		}
	}
	return out
}

// leak is what a gitleaks rule found.
type leak struct {
	rule, secret string
	line         int // the line of the text it is on, as gitleaks counts
	generic      bool
}

// gitleaks runs gitleaks' rules over text as its detector's DetectString
// does with the default config (no decoding of encoded text, no file path).
func gitleaks(text string) []leak {
	c := table()
	run := c.keywords.match(strings.ToLower(text))
	var found []leak
	var lines *lines
	for i := range c.rules {
		r := &c.rules[i]
		if !run[i] {
			continue
		}
		for _, m := range r.re.FindAllStringIndex(text, -1) {
			if lines == nil {
				lines = newLines(text)
			}
			if l, ok := r.check(c, text, m[0], m[1], lines); ok {
				found = append(found, l)
			}
		}
	}
	return dropGeneric(found)
}

// check returns what r's match text[start:end] finds, unless it is allowed.
func (r *compiledRule) check(c *compiled, text string, start, end int, ls *lines) (leak, bool) {
	match := strings.Trim(text[start:end], "\n")
	end = start + len(match) // gitleaks moves the end, not the start
	line, lineText := ls.at(start, end)
	if strings.Contains(lineText, "gitleaks:allow") {
		return leak{}, false
	}
	secret := match
	// As gitleaks, the submatches are those of the regex on the match alone.
	if g := r.re.FindStringSubmatch(match); len(g) >= 2 {
		if r.secretGroup > 0 {
			if len(g) <= r.secretGroup {
				return leak{}, false
			}
			secret = g[r.secretGroup]
		} else {
			for _, s := range g[1:] {
				if s != "" {
					secret = s
					break
				}
			}
		}
	}
	if r.entropy != 0 && entropy(secret) <= r.entropy {
		return leak{}, false
	}
	if allowed(c.allow, secret, match, lineText) || allowed(r.allow, secret, match, lineText) {
		return leak{}, false
	}
	return leak{rule: r.id, secret: secret, line: line, generic: r.generic}, true
}

// allowed reports whether one of as allows a find.
func allowed(as []compiledAllow, secret, match, line string) bool {
	for i := range as {
		a := &as[i]
		t := secret
		switch a.target {
		case targetMatch:
			t = match
		case targetLine:
			t = line
		}
		re := a.re != nil && t != "" && a.re.MatchString(t)
		stop := false
		if secret != "" && len(a.stopwords) > 0 {
			lower := strings.ToLower(secret)
			stop = slices.ContainsFunc(a.stopwords, func(w string) bool { return strings.Contains(lower, w) })
		}
		if a.all {
			if (a.re == nil || re) && (len(a.stopwords) == 0 || stop) {
				return true
			}
		} else if re || stop {
			return true
		}
	}
	return false
}

// dropGeneric drops what a generic rule found when another, not generic,
// rule found a secret on the same line that holds it (gitleaks' filter).
func dropGeneric(found []leak) []leak {
	var specific map[int][]leak // by line
	for _, l := range found {
		if !l.generic {
			if specific == nil {
				specific = map[int][]leak{}
			}
			specific[l.line] = append(specific[l.line], l)
		}
	}
	out := found[:0]
	for _, l := range found {
		if l.generic && slices.ContainsFunc(specific[l.line], func(o leak) bool {
			return o.rule != l.rule && strings.Contains(o.secret, l.secret)
		}) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// entropy is the Shannon entropy of s in bits, over its runes but divided
// by its length in bytes, as gitleaks computes it.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	var order []rune // first seen first: a fixed order of summing
	for _, r := range s {
		if counts[r] == 0 {
			order = append(order, r)
		}
		counts[r]++
	}
	inv := 1 / float64(len(s))
	h := 0.0
	for _, r := range order {
		p := float64(counts[r]) * inv
		h -= p * math.Log2(p)
	}
	return h
}

// lines finds the line of a match in a text the way gitleaks' detector
// does: a line runs from the newline before it (included) to the next one,
// and a match after the last newline gets a "line" from the text's start.
type lines struct {
	text string
	nl   []int // offsets of the newlines; with none, one past the end
}

func newLines(text string) *lines {
	ls := &lines{text: text}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			ls.nl = append(ls.nl, i)
		}
	}
	if ls.nl == nil {
		ls.nl = []int{len(text)}
	}
	return ls
}

// at returns the line number of text[start:end] and the text of its line(s).
func (ls *lines) at(start, end int) (int, string) {
	// The first newline at or after start ends its line; the line begins at
	// the newline before (its index), or at 0.
	k, _ := slices.BinarySearch(ls.nl, start+1)
	if k == len(ls.nl) {
		// After the last newline: gitleaks' line is from the text's start to the next \n or \r after end.
		stop := end
		for stop < len(ls.text) && ls.text[stop] != '\n' && ls.text[stop] != '\r' {
			stop++
		}
		return len(ls.nl), ls.text[:stop]
	}
	from := 0
	if k > 0 {
		from = ls.nl[k-1]
	}
	to := ls.nl[k]
	// The line holding end (prev < end <= newline) ends the cut.
	if j, _ := slices.BinarySearch(ls.nl, end); j < len(ls.nl) && j > k && (j == 0 || ls.nl[j-1] < end) {
		to = ls.nl[j]
	}
	return k, ls.text[from:max(to, end)]
}
