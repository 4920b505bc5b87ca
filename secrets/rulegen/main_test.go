package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/piweb/piweb/secrets"
	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// TestGeneratedCurrent checks that secrets/rules_gen.go is what this
// program writes from the pinned gitleaks (run `go generate ./secrets`).
func TestGeneratedCurrent(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../rules_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("secrets/rules_gen.go is not current: run `go generate ./secrets`")
	}
}

// TestSameFindings checks that secrets.Scan finds what gitleaks' detector
// with its default config finds, rule for rule and secret for secret, on
// text made to match each rule (in several settings), on the strings in
// gitleaks' own rule definitions (their true and false positives) and in
// package secrets' tests, and on piweb's session fixtures.
func TestSameFindings(t *testing.T) {
	var texts []string
	texts = append(texts, ruleSamples(t)...)
	texts = append(texts, gitleaksLiterals(t)...)
	texts = append(texts, literals(t, []string{"../secrets_test.go"})...)
	texts = append(texts, scanCases(t)...)
	texts = append(texts, fixtureLines(t)...)
	found, rules := 0, map[string]bool{}
	for _, text := range texts {
		want := gitleaksFinds(text)
		got := piwebFinds(text)
		if !slices.Equal(got, want) {
			t.Errorf("text %q\n gitleaks: %q\n   piweb: %q", text, want, got)
		}
		found += len(want)
		for _, f := range want {
			rules[strings.Fields(f)[0]] = true
		}
	}
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d texts, %d finds by %d of %d rules", len(texts), found, len(rules), len(cfg.Rules))
	if len(rules) < len(cfg.Rules)*9/10 {
		t.Errorf("finds by only %d of %d rules: the samples do not exercise the rules", len(rules), len(cfg.Rules))
	}
}

// FuzzSameFindings checks secrets.Scan against gitleaks on any text.
func FuzzSameFindings(f *testing.F) {
	for i, s := range ruleSamples(f) {
		if i%10 == 0 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		if want, got := gitleaksFinds(text), piwebFinds(text); !slices.Equal(got, want) {
			t.Errorf("text %q\n gitleaks: %q\n   piweb: %q", text, want, got)
		}
	})
}

var detector = sync.OnceValue(func() *detect.Detector {
	zerolog.SetGlobalLevel(zerolog.Disabled)
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		panic(err)
	}
	return d
})

// gitleaksFinds returns "rule secret" for each find of gitleaks' detector, sorted.
func gitleaksFinds(text string) []string {
	var out []string
	for _, f := range detector().DetectString(text) {
		out = append(out, f.RuleID+" "+f.Secret)
	}
	slices.Sort(out)
	return out
}

// piwebFinds returns "rule secret" for each find of secrets.Scan, sorted.
func piwebFinds(text string) []string {
	var out []string
	for _, l := range secrets.Scan(text) {
		out = append(out, l.Rule+" "+l.Secret)
	}
	slices.Sort(out)
	return out
}

// ruleSamples returns, for each rule of gitleaks' default config, strings
// made from its regex (random, and with runs of one character for low
// entropy) alone, in an assignment, in a JSON line and across lines.
func ruleSamples(t testing.TB) []string {
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(29, 4))
	var out []string
	for _, id := range cfg.OrderedRules {
		r := cfg.Rules[id]
		if r.Regex == nil {
			continue
		}
		re, err := syntax.Parse(r.Regex.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 12 {
			var b strings.Builder
			g := sampler{rng: rng, dull: i%4 == 3}
			g.write(&b, re.Simplify())
			s := b.String()
			kw := ""
			if len(r.Keywords) > 0 {
				kw = r.Keywords[rng.IntN(len(r.Keywords))]
			}
			switch i % 3 {
			case 0:
				out = append(out, s)
			case 1:
				out = append(out, kw+"_token = "+strconv.Quote(s)+" # "+id)
			case 2:
				out = append(out, `{"type":"message","text":`+strconv.Quote("see "+s+"\nnext line "+kw)+"}")
			}
		}
	}
	return out
}

// sampler writes random text that a regex matches, more or less: anchors
// and word boundaries are ignored, so some samples do not match.
type sampler struct {
	rng  *rand.Rand
	dull bool // repeat one character in classes, for low entropy
	last rune
}

func (g *sampler) write(b *strings.Builder, re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && g.rng.IntN(2) == 0 {
				r = unicode.SimpleFold(r)
			}
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		b.WriteRune(g.pick(re.Rune))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteRune(g.pick([]rune{'!', '~'}))
	case syntax.OpCapture:
		g.write(b, re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			g.write(b, s)
		}
	case syntax.OpAlternate:
		g.write(b, re.Sub[g.rng.IntN(len(re.Sub))])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := re.Min, re.Max
		switch re.Op {
		case syntax.OpStar:
			lo, hi = 0, 4
		case syntax.OpPlus:
			lo, hi = 1, 4
		case syntax.OpQuest:
			lo, hi = 0, 1
		}
		if hi < 0 {
			hi = lo + 8
		}
		for range lo + g.rng.IntN(hi-lo+1) {
			g.write(b, re.Sub[0])
		}
	}
}

// pick returns a rune from a class's ranges, ASCII where it can.
func (g *sampler) pick(ranges []rune) rune {
	if g.dull && g.last != 0 {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= g.last && g.last <= ranges[i+1] {
				return g.last
			}
		}
	}
	var ascii []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1] && r < 0x7f; r++ {
			if r >= ' ' || r == '\n' || r == '\t' {
				ascii = append(ascii, r)
			}
		}
	}
	r := ranges[0]
	if len(ascii) > 0 {
		r = ascii[g.rng.IntN(len(ascii))]
	}
	g.last = r
	return r
}

// gitleaksLiterals returns the string constants in the Go definitions of
// gitleaks' rules: mostly their sample true and false positives.
func gitleaksLiterals(t *testing.T) []string {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(dir)), "cmd", "generate", "config", "rules", "*.go"))
	if err != nil || len(files) < 100 {
		t.Fatalf("gitleaks' rule definitions: %d files, %v", len(files), err)
	}
	return literals(t, files)
}

// literals returns the string constants of 8 bytes or more in Go files.
func literals(t *testing.T, files []string) []string {
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && len(s) >= 8 {
					out = append(out, s)
				}
			}
			return true
		})
	}
	return out
}

// scanCases returns the texts of package secrets' TestScan.
func scanCases(t *testing.T) []string {
	b, err := os.ReadFile("../testdata/scan.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ In string }
	if err := json.Unmarshal(b, &cases); err != nil || len(cases) == 0 {
		t.Fatalf("../testdata/scan.json: %d cases, %v", len(cases), err)
	}
	var out []string
	for _, c := range cases {
		out = append(out, c.In)
	}
	return out
}

// fixtureLines returns the lines of piweb's session fixtures.
func fixtureLines(t testing.TB) []string {
	files, err := filepath.Glob("../../sessions/testdata/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("session fixtures: %v", err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			out = append(out, sc.Text())
		}
	}
	return out
}

// TestSamplesMatch guards the sampler: most samples of a rule match its regex.
func TestSamplesMatch(t *testing.T) {
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	matched, total := 0, 0
	rng := rand.New(rand.NewPCG(1, 2))
	for _, r := range cfg.Rules {
		if r.Regex == nil {
			continue
		}
		re, _ := syntax.Parse(r.Regex.String(), syntax.Perl)
		var b strings.Builder
		(&sampler{rng: rng}).write(&b, re.Simplify())
		total++
		if r.Regex.MatchString(b.String()) {
			matched++
		}
	}
	if matched < total*9/10 {
		t.Errorf("%d of %d samples match their rule", matched, total)
	}
}

// BenchmarkScan compares secrets.Scan with gitleaks' detector on piweb's session fixtures, line by line.
func BenchmarkScan(b *testing.B) {
	lines := fixtureLines(b)
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	b.Run("piweb", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, l := range lines {
				secrets.Scan(l)
			}
		}
	})
	b.Run("gitleaks", func(b *testing.B) {
		d := detector()
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, l := range lines {
				d.DetectString(l)
			}
		}
	})
}
