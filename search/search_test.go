package search

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 5, 10, 15, 30, 0, 0, time.UTC)

func mustParse(t testing.TB, q string) *Query {
	t.Helper()
	p, err := ParseAt(q, testNow)
	if err != nil {
		t.Fatalf("ParseAt(%q): %v", q, err)
	}
	return p
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"", "empty query"},
		{"   \t ", "empty query"},
		{`""`, "empty query"},
		{strings.Repeat("a", 10<<10), "query too long: 10240 bytes, at most 1000"},
		{"abc\x00def", "control character (U+0000) (at character 4)"},
		{"abc\x1b[31m", "control character (U+001B)"},
		{"abc\u0085", "control character (U+0085)"},
		{"abc\xff", "not valid UTF-8 (at character 4)"},
		{`re:(a`, "invalid regular expression \"(a\": missing closing ): `(a`"},
		{`re:a(?=b)`, "look-ahead (?=…) is JavaScript syntax RE2 cannot run"},
		{`re:(?<!a)b`, "look-behind (?<!…) is JavaScript syntax RE2 cannot run"},
		{`re:(a)\1`, "back-references (\\1) are JavaScript syntax RE2 cannot run"},
		{`re:a**`, "invalid nested repetition operator"},
		{`re:(?i)a`, "(?i is not a JavaScript group"},
		{`re:a\b+`, "nothing to repeat: \\b takes no quantifier"},
		{`re:^{2}`, "nothing to repeat"},
		{`re:a\`, "\\ at the end of the pattern"},
		{`re:(?<n>a)\k<n>`, "named back-references"},
		{`re:x{1001}`, "invalid repeat count"},
		{`re:(x{1000}){1000}`, "invalid repeat count"},
		{`re:(foo|bar|baz){1000}`, "too complex (9002 steps, at most 5000)"},
		{"re:" + strings.Repeat("a", 301), "regular expression too long: 301 bytes, at most 300"},
		{`re:`, "re: needs a value"},
		{`re:   `, "re: needs a value"},
		{`role:robot`, `unknown role "robot": use one of user, assistant, tool, bash, summary, label`},
		{`role:`, "role: needs a value, e.g. role:user"},
		{`after:2026-13-01`, "after:2026-13-01: not a date"},
		{`before:yesterdayish`, "not a date"},
		{`after:-3d`, "not a date"},
		{`after:2026-05-01 before:2026-04-01`, "after: must be earlier than before:"},
		{`-after:7d`, "-after: is not supported: use before: instead"},
		{`is:archived`, "unknown is:archived: use is:offpath or is:onpath"},
		{`foo "bar`, `unclosed quote: add the closing " (at character 5)`},
		{`label:"x`, "unclosed quote"},
		{strings.Repeat("a ", 33), "too many words and filters: at most 32"},
	} {
		_, err := ParseAt(c.q, testNow)
		var qe *Error
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseAt(%.40q) = %v, want an *Error containing %q", c.q, err, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	q := mustParse(t, `Foo "bar  Baz" -qux role:user -role:TOOL project:PiWeb -project:old label:"before refactor" -label:wip is:offpath after:7d before:2026-05-09 http://a.b/c re:fail(ed|ure) -re:^x`)
	var got []string
	for _, tk := range q.Text {
		got = append(got, [...]string{"word", "phrase", "regex"}[tk.Kind]+":"+tk.Value)
	}
	want := []string{"word:Foo", "phrase:bar  Baz", "word:http://a.b/c", "regex:fail(ed|ure) -re:^x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Text = %q, want %q", got, want)
	}
	if len(q.Not) != 1 || q.Not[0].Value != "qux" {
		t.Errorf("Not = %+v", q.Not)
	}
	if strings.Join(q.Roles, ",") != "user" || strings.Join(q.NotRoles, ",") != "tool" {
		t.Errorf("roles %v / %v", q.Roles, q.NotRoles)
	}
	if strings.Join(q.Projects, ",") != "piweb" || strings.Join(q.NotProjects, ",") != "old" {
		t.Errorf("projects %v / %v", q.Projects, q.NotProjects)
	}
	if strings.Join(q.Labels, ",") != "before refactor" || strings.Join(q.NotLabels, ",") != "wip" {
		t.Errorf("labels %v / %v", q.Labels, q.NotLabels)
	}
	if q.Path != OffPath {
		t.Errorf("Path = %v", q.Path)
	}
	if !q.After.Equal(testNow.AddDate(0, 0, -7)) || !q.Before.Equal(time.Date(2026, 5, 9, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("After %v Before %v", q.After, q.Before)
	}
	if q := mustParse(t, `role:user -re:^x  y `); len(q.Not) != 1 || q.Not[0].Kind != Regex || q.Not[0].Value != "^x  y" || len(q.Roles) != 1 {
		t.Errorf("-re: takes the rest of the query: %+v", q)
	}
}

func TestParseFilters(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	now := time.Date(2026, 5, 10, 1, 0, 0, 0, loc)
	for _, c := range []struct {
		q             string
		after, before time.Time
		path          PathFilter
	}{
		{"x after:today", time.Date(2026, 5, 10, 0, 0, 0, 0, loc), time.Time{}, AnyPath},
		{"x before:yesterday", time.Time{}, time.Date(2026, 5, 9, 0, 0, 0, 0, loc), AnyPath},
		{"x after:12h", now.Add(-12 * time.Hour), time.Time{}, AnyPath},
		{"x after:2w before:1d", now.AddDate(0, 0, -14), now.AddDate(0, 0, -1), AnyPath},
		{"x after:1y", now.AddDate(-1, 0, 0), time.Time{}, AnyPath},
		{"x after:2026-01-31", time.Date(2026, 1, 31, 0, 0, 0, 0, loc), time.Time{}, AnyPath},
		{"x -is:offpath", time.Time{}, time.Time{}, OnPath},
		{"x is:ONPATH", time.Time{}, time.Time{}, OnPath},
		{"x -is:onpath", time.Time{}, time.Time{}, OffPath},
	} {
		q, err := ParseAt(c.q, now)
		if err != nil {
			t.Fatalf("%q: %v", c.q, err)
		}
		if !q.After.Equal(c.after) || !q.Before.Equal(c.before) || q.Path != c.path {
			t.Errorf("%q: after %v before %v path %v; want %v %v %v", c.q, q.After, q.Before, q.Path, c.after, c.before, c.path)
		}
	}
	// Filters alone are a query.
	q := mustParse(t, "role:user after:7d")
	if len(q.Text) != 0 || len(q.Needles()) != 0 {
		t.Errorf("filters only: %+v %q", q.Text, q.Needles())
	}
	if !q.AllowRole("user") || q.AllowRole("tool") {
		t.Error("AllowRole")
	}
	if !q.AllowTime(testNow.UnixMilli()) || q.AllowTime(testNow.AddDate(0, 0, -8).UnixMilli()) {
		t.Error("AllowTime")
	}
	q = mustParse(t, "x project:web -project:old")
	for p, want := range map[string]bool{"--home-PiWeb--": true, "--home-piweb-old--": false, "--other--": false} {
		if q.AllowProject(p) != want {
			t.Errorf("AllowProject(%q) = %v", p, !want)
		}
	}
	q = mustParse(t, "x label:todo -label:done")
	for l, want := range map[string]bool{"TODO later": true, "todo done": false, "": false, "other": false} {
		if q.AllowLabel(l) != want {
			t.Errorf("AllowLabel(%q) = %v", l, !want)
		}
	}
	if q := mustParse(t, "x -label:done"); !q.AllowLabel("") || q.AllowLabel("Done") {
		t.Error("-label: alone")
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		q, text string
		ok      bool
		hits    []string // highlighted substrings
	}{
		{"handler", "the requestHandler ran", true, []string{"Handler"}},
		{"hand", "the requestHandler ran", true, []string{"Hand"}},
		{"andler", "the requestHandler ran", true, []string{"andler"}},
		{"ncoding", "base64 Encoding", true, []string{"ncoding"}},
		{"HANDLER", "a handler", true, []string{"handler"}},
		{"ttp", "newHTTPServer()", true, []string{"TTP"}},
		{"foo bar", "bar then foo, foo", true, []string{"bar", "foo", "foo"}},
		{"foo bar", "bar alone", false, nil},
		{`"foo bar"`, "x foo   bar y", true, []string{"foo   bar"}},
		{`"foo bar"`, "foo\n\tbar", true, []string{"foo\n\tbar"}},
		{`"foo bar"`, "bar foo", false, nil},
		{`"oo ba"`, "foo bar", true, []string{"oo ba"}},
		{"日本", "これは日本語です", true, []string{"日本"}},
		{"語で", "これは日本語です", true, []string{"語で"}},
		{"語は", "これは日本語です", false, nil},
		{"🚀", "launch 🚀 now", true, []string{"🚀"}},
		{"café", "Café au lait", true, []string{"Café"}},
		{"cafe", "Café au lait", false, nil},
		{"ÉCOLE", "à l'école", true, []string{"école"}},
		{"/api", "GET /api/sessions", true, []string{"/api"}},
		{"ain.go", "edit main.go now", true, []string{"ain.go"}},
		{"foo -bar", "foo and bar", false, nil},
		{"foo -bar", "foo and baz", true, []string{"foo"}},
		{"foo -bar", "foo and rebar", false, nil},
		{`foo -"a b"`, "foo a  b", false, nil},
		{"re:fail(ed|ure)", "it Failed twice, failure", true, []string{"Failed", "failure"}},
		{"re:^abc$", "abc", true, []string{"abc"}},
		{"re:^abc$", "xabc", false, nil},
		{"re:ail", "it Failed", true, []string{"ail"}},
		{`re:digest\(\) returns b[a-z]+64`, "so digest() returns base64 text", true, []string{"digest() returns base64"}},
		// JavaScript's syntax as pi reads it (no u flag): \u{3} is three u's,
		// \p and \z stand for p and z, a [ in a class for itself.
		{`re:a\u0041\u{3}`, "xaauuu", true, []string{"aauuu"}},
		{`re:\p{L}`, "é", false, nil},
		{`re:\p{L}`, "p{L}", true, []string{"p{L}"}},
		{`re:a\z`, "az", true, []string{"az"}},
		{`re:[[:alpha:]]`, "x :]", true, []string{":]"}},
		{`re:[[:alpha:]]`, "x", false, nil},
		{`re:a.b`, "a\rb a\u2028b", false, nil},
		{`re:a\sb`, "a\u00a0b", true, []string{"a\u00a0b"}},
		{`re:a\Sb`, "a\u00a0b", false, nil},
		{`re:\101\x42\cJ`, "AB\n", true, []string{"AB\n"}},
		{`re:\uD83D\uDE00`, "\U0001F600", true, []string{"\U0001F600"}},
		{`re:[\d-z]+`, "1-z", true, []string{"1-z"}},
		{`re:[^]`, "\n", true, []string{"\n"}},
		{`re:a\/b`, "a/b", true, []string{"a/b"}},
		{"x -re:\\d{3}", "x 12", true, []string{"x"}},
		{"k", "\u212a", true, []string{"\u212a"}},   // Kelvin sign lower-cases to k
		{"ΔΌΣ", "στην Οδός", true, []string{"δός"}}, // pi lower-cases a final Σ as ς
		{"οδοσ", "ΟΔΟΣ", true, []string{"ΟΔΟΣ"}},
		{"東京\u3000大阪", "大阪と東京", true, []string{"大阪", "東京"}}, // an input method's space parts words, as in pi
		{"İs", "İstanbul", true, []string{"İs"}},            // a word, not the filter is:
		{`"a b"`, "a\ufeffb", true, []string{"a\ufeffb"}},   // U+FEFF is white space to pi (JavaScript's \s)
		{"\"a\ufeffb\"", "a b", true, []string{"a b"}},
		{"role:user", "anything", true, nil},
	} {
		q := mustParse(t, c.q)
		rs, ok, err := q.Match(c.text)
		if err != nil || ok != c.ok {
			t.Errorf("%q in %q: ok %v err %v, want %v", c.q, c.text, ok, err, c.ok)
			continue
		}
		var got []string
		for _, r := range rs {
			got = append(got, c.text[r.Start:r.End])
		}
		if strings.Join(got, "|") != strings.Join(c.hits, "|") {
			t.Errorf("%q in %q: highlights %q, want %q", c.q, c.text, got, c.hits)
		}
		if ok && !indexAccepts(q, c.text) {
			t.Errorf("%q in %q: matches, but the needles %q are not all in %q", c.q, c.text, q.Needles(), Normalize(c.text))
		}
	}
}

func TestMatchBudget(t *testing.T) {
	q := mustParse(t, `re:(a*)*b`)
	q.Budget = 0 // no limit: this part must not depend on the machine's speed
	text := strings.Repeat("a", 1<<20)
	if _, ok, err := q.Match(text); ok || err != nil {
		t.Errorf("(a*)*b on 1 MiB of a: ok %v err %v (RE2 is linear: it finishes)", ok, err)
	}
	q.Budget = time.Nanosecond // spent before the first check
	if _, ok, err := q.Match(text + "b"); ok || !errors.Is(err, ErrBudget) {
		t.Errorf("with no budget left: ok %v err %v, want ErrBudget", ok, err)
	}
	q.Budget = 0 // no limit
	if _, ok, err := q.Match(text + "b"); !ok || err != nil {
		t.Errorf("unlimited: ok %v err %v", ok, err)
	}
}

func TestSnippet(t *testing.T) {
	text := strings.Repeat("word ", 100) + "the\nneedle here " + strings.Repeat("tail ", 100)
	i := strings.Index(text, "needle")
	s, rs := Snippet(text, []Range{{i, i + 6}}, 80)
	if len(rs) != 1 || s[rs[0].Start:rs[0].End] != "needle" {
		t.Fatalf("snippet %q ranges %v", s, rs)
	}
	if !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") || strings.Contains(s, "\n") || len(s) > 80+2*len("…") {
		t.Errorf("snippet %q", s)
	}
	s, rs = Snippet("short", nil, 80)
	if s != "short" || rs != nil {
		t.Errorf("short: %q %v", s, rs)
	}
	// Multi-byte text is cut at rune boundaries.
	jp := strings.Repeat("日本語", 100)
	s, _ = Snippet(jp, []Range{{150, 153}}, 40)
	if !strings.HasPrefix(s, "…") || strings.ContainsRune(s, '\uFFFD') {
		t.Errorf("cut inside a rune: %q", s)
	}
}

// indexAccepts reports whether an index of Normalize(text) finds text for
// q: it holds every needle.
func indexAccepts(q *Query, text string) bool {
	norm := Normalize(text)
	for _, n := range q.Needles() {
		if !strings.Contains(norm, n) {
			return false
		}
	}
	return true
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("filler text here ", 5000)
	for _, c := range []struct {
		q, text string
		ok      bool
		marked  []string
	}{
		{"needle", long + "the needle and another needle" + long, true, []string{"needle", "needle"}},
		{"needle hay", "hay " + long + "needle", true, []string{"hay"}},
		{"needle -hay", long + "needle " + long + " hay", false, nil},
		{`"foo bar" re:b.z`, "x baz foo  bar", true, []string{"baz", "foo  bar"}},
		{"andler", "requestHandler", true, []string{"andler"}},
		{"role:user", "anything at all", true, nil},
	} {
		q := mustParse(t, c.q)
		s, rs, ok, err := q.Excerpt(c.text, 60)
		if err != nil || ok != c.ok {
			t.Errorf("%q: ok %v err %v", c.q, ok, err)
			continue
		}
		if _, mok, _ := q.Match(c.text); mok != ok {
			t.Errorf("%q: Excerpt %v, Match %v", c.q, ok, mok)
		}
		var got []string
		for _, r := range rs {
			got = append(got, s[r.Start:r.End])
		}
		if strings.Join(got, "|") != strings.Join(c.marked, "|") || len(s) > 60+2*len("…") {
			t.Errorf("%q: excerpt %q marks %q, want %q", c.q, s, got, c.marked)
		}
	}
}

func TestNeedles(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"Foo  bar", "foo|bar"},
		{`"Fix   The" -cache`, "fix the"},
		{`role:user re:digest\(\) returns b[a-z]+64`, "digest() returns b|64"},
		{`re:(foo|bar)baz+`, "baz|z"}, // z+: its first z ends a run, its last begins the next
		{`re:ses+ion tre{1,2}`, "ses|sion tre"},
		{`re:HeLLo+ world`, "hello|o world"},
		{`re:\x41\u0062c`, "abc"},
		{"ΟΔΟΣ ςx", "οδοσ|σx"},
		{`re:µs ſ`, "μs s"}, // as Normalize folds what RE2's case folding matches
		{`re:x?y*`, ""},
		{`re:[ab]c`, "c"},
		{`re:Hello\s+World`, "hello|world"},
		{`re:a{2,3}b`, "aa|b"},
	} {
		if got := strings.Join(mustParse(t, c.q).Needles(), "|"); got != c.want {
			t.Errorf("Needles(%q) = %q, want %q", c.q, got, c.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"Hello\n\t  World ":   "hello world ",
		"\u00a0Ünï\u2003cödé": " ünï cödé",
		"a\xffb":              "a\ufffdb",
		"\u212a":              "k",
		"Οδός":                "οδόσ",
		"µs ſ ϑ ᲀ ı":          "μs s θ в ı",
		"a\ufeffb":            "a b",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
