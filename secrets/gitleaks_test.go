package secrets

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestScan checks gitleaks' semantics on its own rules (testdata/scan.json):
// keywords, entropy, allowlists, the gitleaks:allow comment, secret groups,
// and generic rules yielding to specific ones. secrets/rulegen's
// TestSameFindings checks the same texts against gitleaks itself.
func TestScan(t *testing.T) {
	b, err := os.ReadFile("testdata/scan.json")
	if err != nil {
		t.Fatal(err)
	}
	var tests []struct {
		Name, In string
		Want     [][2]string // rule, secret
	}
	if err := json.Unmarshal(b, &tests); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			var got [][2]string
			for _, l := range Scan(tt.In) {
				got = append(got, [2]string{l.Rule, l.Secret})
			}
			slices.SortFunc(got, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
			if !slices.Equal(got, tt.Want) && len(got)+len(tt.Want) > 0 {
				t.Errorf("Scan(%q)\n got %q\nwant %q", tt.In, got, tt.Want)
			}
		})
	}
}

// TestLines checks where gitleaks says a match is: its line number and the
// text of its line, from the newline before (included) to the next.
func TestLines(t *testing.T) {
	tests := []struct {
		text       string
		start, end int
		line       int
		lineText   string
	}{
		{"abc", 0, 3, 0, "abc"},
		{"abc", 3, 3, 1, "abc"}, // an empty match at the end: past the one "line"
		{"ab\ncd\nef", 0, 2, 0, "ab"},
		{"ab\ncd\nef", 3, 5, 1, "\ncd"},
		{"ab\ncd\nef", 2, 5, 1, "\ncd"}, // starts at the newline: the newline is the line's first byte
		{"ab\ncd\nef", 1, 4, 0, "ab\ncd"},
		{"ab\ncd\nef", 6, 8, 2, "ab\ncd\nef"},     // after the last newline: from the start
		{"ab\ncd\nef\rgh", 6, 7, 2, "ab\ncd\nef"}, // to the next \r too
		{"ab\n", 3, 3, 1, "ab\n"},
		{"", 0, 0, 1, ""},
	}
	for _, tt := range tests {
		line, text := newLines(tt.text).at(tt.start, tt.end)
		if line != tt.line || text != tt.lineText {
			t.Errorf("%q[%d:%d]: line %d %q, want %d %q", tt.text, tt.start, tt.end, line, text, tt.line, tt.lineText)
		}
	}
}

// TestKeywords checks the keyword automaton against strings.Contains, on
// keywords that share prefixes and suffixes and texts made of their letters.
func TestKeywords(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 29))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abc-_"[rng.IntN(5)]
		}
		return string(b)
	}
	for round := range 50 {
		rules := make([]rule, 1+rng.IntN(12))
		for i := range rules {
			for range rng.IntN(4) {
				rules[i].keywords = append(rules[i].keywords, word(1+rng.IntN(5)))
			}
		}
		k := newKeywords(rules)
		for range 40 {
			text := word(rng.IntN(30))
			got := k.match(text)
			for i, r := range rules {
				want := len(r.keywords) == 0 || slices.ContainsFunc(r.keywords, func(w string) bool { return strings.Contains(text, w) })
				if got[i] != want {
					t.Fatalf("round %d: keywords %q in %q: %v, want %v", round, r.keywords, text, got[i], want)
				}
			}
		}
	}
}

// TestTable checks the generated table: every regex compiles, secret groups
// exist, keywords are lower case, and the rules are unique.
func TestTable(t *testing.T) {
	if len(gitleaksRules) < 200 {
		t.Fatalf("%d rules", len(gitleaksRules))
	}
	seen := map[string]bool{}
	for _, r := range gitleaksRules {
		if seen[r.id] {
			t.Errorf("rule %s twice", r.id)
		}
		seen[r.id] = true
		re, err := regexp.Compile(r.regex)
		if err != nil {
			t.Errorf("%s: %v", r.id, err)
			continue
		}
		if r.secretGroup > re.NumSubexp() {
			t.Errorf("%s: secret group %d of %d", r.id, r.secretGroup, re.NumSubexp())
		}
		for _, k := range r.keywords {
			if k != strings.ToLower(k) || k == "" {
				t.Errorf("%s: keyword %q", r.id, k)
			}
		}
	}
}

// TestPinned checks that rules_gen.go was generated from the gitleaks that
// secrets/rulegen pins: the version in its go.mod and the hash in its go.sum.
func TestPinned(t *testing.T) {
	mod, err := os.ReadFile("rulegen/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/zricethezav/gitleaks/v8 (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("rulegen/go.mod requires no gitleaks")
	}
	if v := string(m[1]); v != gitleaksVersion {
		t.Fatalf("rulegen pins gitleaks %s, rules_gen.go is from %s: run `go generate ./secrets`", v, gitleaksVersion)
	}
	sum, err := os.Open("rulegen/go.sum")
	if err != nil {
		t.Fatal(err)
	}
	defer sum.Close()
	want := "github.com/zricethezav/gitleaks/v8 " + gitleaksVersion + " " + gitleaksSum
	sc := bufio.NewScanner(sum)
	for sc.Scan() {
		if sc.Text() == want {
			return
		}
	}
	t.Fatalf("rulegen/go.sum has no line %q: run `go generate ./secrets`", want)
}

// TestConcurrent scans from many goroutines at once (run with -race): the
// results are those of a scan alone.
func TestConcurrent(t *testing.T) {
	texts := []string{
		`api_key = "Zb9defghijk1mnopqrs7uvwxyzABCDEFGHIJ"`,
		"AKIAZ2QWXH7YRM4LP6TN and ghp_Zb9defghijk1mnopqrs7uvwxyzABCDEFGHIJ",
		"password: hunter2hunter2, token=abc123def",
		"nothing here",
	}
	want := make([][]Finding, len(texts))
	for i, s := range texts {
		want[i] = Find(s)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Go(func() {
			for n := range 50 {
				i := (g + n) % len(texts)
				if got := Find(texts[i]); !slices.Equal(got, want[i]) {
					errs <- texts[i]
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for s := range errs {
		t.Errorf("concurrent Find(%q) differs", s)
	}
}
