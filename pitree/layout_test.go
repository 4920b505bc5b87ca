package pitree

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/suite"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/sessions"
)

var layUpdate = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// layHome is the home directory the fixtures' tool-call paths live in.
const layHome = oracle.TreeHome

// layCase is one rendering of a fixture in testdata.
type layCase struct {
	name   string // golden file: golden/<file>-<name>.txt
	file   string // fixture name without .jsonl
	leaf   string // leaf id; "" for the file's leaf
	filter Filter
	search string
	fold   []string
}

var layCases = []layCase{
	{name: "default", file: "branches"},
	{name: "no-tools", file: "branches", filter: FilterNoTools},
	{name: "user-only", file: "branches", filter: FilterUserOnly},
	{name: "labeled-only", file: "branches", filter: FilterLabeledOnly},
	{name: "all", file: "branches", filter: FilterAll},
	{name: "search-auth", file: "branches", search: "auth"},
	{name: "search-tokens", file: "branches", search: "  FIX\tlogin "},
	{name: "search-none", file: "branches", search: "zzz"},
	{name: "search-label-all", file: "branches", filter: FilterAll, search: "label"},
	{name: "search-settings", file: "branches", filter: FilterAll, search: "context edit omit r4"},
	{name: "leaf-a6", file: "branches", leaf: "a6"},
	{name: "leaf-a1-tool-only", file: "branches", leaf: "a1"},
	{name: "leaf-r8-user-only", file: "branches", leaf: "r8", filter: FilterUserOnly},
	{name: "fold-u2", file: "branches", fold: []string{"u2"}},
	{name: "fold-bs-u3", file: "branches", fold: []string{"bs", "u3"}},
	{name: "fold-root", file: "branches", fold: []string{"u1"}},
	{name: "default", file: "roots"},
	{name: "leaf-x2", file: "roots", leaf: "x2"},
	{name: "leaf-o2", file: "roots", leaf: "o2"},
	{name: "fold-y1", file: "roots", fold: []string{"y1"}},
	{name: "user-only", file: "roots", filter: FilterUserOnly},
	{name: "search-answer", file: "roots", search: "answer"},
	{name: "default", file: "gutters"},
	{name: "leaf-d1", file: "gutters", leaf: "d1"},
	{name: "leaf-e2-fold-b1", file: "gutters", leaf: "e2", fold: []string{"b1"}},
	{name: "fold-b2a", file: "gutters", fold: []string{"b2a"}},
	{name: "user-only-leaf-d2", file: "gutters", leaf: "d2", filter: FilterUserOnly},
	{name: "default", file: "odd"},
	{name: "all", file: "odd", filter: FilterAll},
}

func (c layCase) path() string { return filepath.Join("testdata", c.file+".jsonl") }

func (c layCase) golden() string {
	return filepath.Join("testdata", "golden", c.file+"-"+c.name+".txt")
}

// render lays the case out and renders it as `piweb tree` prints it.
func (c layCase) render(t *testing.T) string {
	t.Helper()
	s, err := sessions.Load(c.path())
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Leaf: s.Leaf(), Filter: c.filter, Search: c.search, Home: layHome}
	if c.leaf != "" {
		opt.Leaf = readtest.MustLookup(t, s, c.leaf)
	}
	if len(c.fold) > 0 {
		opt.Folded = map[string]bool{}
		for _, id := range c.fold {
			opt.Folded[id] = true
		}
	}
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l, err := New(s, r, opt)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := l.Render(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestLayoutGolden compares renderings with golden files (go test -update rewrites them).
func TestLayoutGolden(t *testing.T) {
	for _, c := range layCases {
		t.Run(c.file+"-"+c.name, func(t *testing.T) {
			got := c.render(t)
			if *layUpdate {
				if err := os.MkdirAll(filepath.Dir(c.golden()), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(c.golden(), []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(c.golden())
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("rendering differs from %s:\n%s", c.golden(), layDiff(string(want), got))
			}
		})
	}
}

// layDiff shows the lines of want and got that differ.
func layDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, a, c)
		}
	}
	return b.String()
}

// TestLayoutMatchesPi renders every case with pi's own TreeList (driven
// from Node with a colorless theme) and requires the very same text:
// order, visibility, indents, connectors, gutters, markers and previews.
func TestLayoutMatchesPi(t *testing.T) {
	oracle.Package(t) // skips without pi
	jobs := make([]oracle.TreeJob, len(layCases))
	for i, c := range layCases {
		jobs[i] = oracle.TreeJob{File: c.path(), Leaf: c.leaf, Filter: string(c.filter), Search: c.search, Fold: c.fold}
	}
	pi := oracle.Tree(t, jobs)
	for i, c := range layCases {
		if got := c.render(t); got != pi[i] {
			t.Errorf("%s-%s differs from pi:\n%s", c.file, c.name, layDiff(pi[i], got))
		}
	}
}

// TestLayoutMatchesPiOnScenarios compares with pi on every session that
// conformance/gen.mjs writes with pi's SessionManager, in two filter modes
// and with a search. Two edge files are left out on purpose: pi draws a
// node shared by duplicate ids (or by id-less lines) once per occurrence,
// piweb draws every line once.
func TestLayoutMatchesPiOnScenarios(t *testing.T) {
	oracle.Package(t) // skips without pi
	list := oracle.Scenarios(t)
	skip := map[string]bool{"edge-duplicate-ids": true, "edge-non-object-lines": true}
	var jobs []oracle.TreeJob
	var names []string
	for _, sc := range list {
		if sc.NoOracle || sc.ExpectError || skip[sc.Scenario] {
			continue
		}
		for _, j := range []oracle.TreeJob{{Filter: string(FilterDefault)}, {Filter: string(FilterAll)}, {Filter: string(FilterAll), Search: "a"}} {
			j.File = sc.File
			jobs = append(jobs, j)
			names = append(names, fmt.Sprintf("%s/%s/%q", sc.Scenario, j.Filter, j.Search))
		}
	}
	if len(jobs) < 60 {
		t.Fatalf("only %d jobs from gen.mjs", len(jobs))
	}
	pi := oracle.Tree(t, jobs)
	for i, j := range jobs {
		c := layCase{filter: Filter(j.Filter), search: j.Search}
		got := c.renderFile(t, j.File)
		if got != pi[i] {
			t.Errorf("%s differs from pi:\n%s", names[i], layDiff(pi[i], got))
		}
	}
}

// renderFile renders the case for another file.
func (c layCase) renderFile(t *testing.T, file string) string {
	t.Helper()
	s, err := sessions.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l, err := New(s, r, Options{Leaf: s.Leaf(), Filter: c.filter, Search: c.search, Home: layHome})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := l.Render(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// layOpen loads a fixture and lays it out.
func layOpen(t *testing.T, file string, opt Options, leaf string) (*sessions.Session, *sessions.Reader, *Layout) {
	t.Helper()
	s, err := sessions.Load(filepath.Join("testdata", file+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	opt.Leaf = s.Leaf()
	if leaf != "" {
		opt.Leaf = readtest.MustLookup(t, s, leaf)
	}
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	l, err := New(s, r, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s, r, l
}

// layRow returns the row of entry id, failing when it is not shown.
func layRow(t *testing.T, s *sessions.Session, l *Layout, id string) Row {
	t.Helper()
	i := l.RowOf(readtest.MustLookup(t, s, id))
	if i < 0 {
		t.Fatalf("entry %s is not shown", id)
	}
	return l.Rows(i, 1)[0]
}

func TestLayoutRows(t *testing.T) {
	s, r, l := layOpen(t, "branches", Options{}, "")
	if l.Len() != 24 {
		t.Fatalf("Len = %d, want 24", l.Len())
	}
	// Hidden: tool-only assistant turns, settings entries, usage.
	for _, id := range []string{"a1", "a2", "a4", "a8", "a9", "a10", "mc", "tl", "us", "cu", "ce1", "ce2", "si", "l1", "l5"} {
		if row := l.RowOf(readtest.MustLookup(t, s, id)); row != -1 {
			t.Errorf("%s: shown at row %d, want hidden", id, row)
		}
	}
	// Shown: turns that stopped abnormally, with no text.
	for _, id := range []string{"a6", "a7", "a11"} {
		layRow(t, s, l, id)
	}
	tests := []struct {
		id   string
		want Row
	}{
		{"u1", Row{Indent: 0, Active: true, Foldable: true, Label: "start", Labeled: true}},
		{"a3", Row{Indent: 0, Active: true, BranchPoint: true, Label: "diagnosis", Labeled: true}},
		{"u2", Row{Indent: 1, Connector: ConnBranch, Active: true, BranchPoint: true, Foldable: true}},
		{"bs", Row{Indent: 2, Connector: ConnBranch, Gutters: []Gutter{{0, true}}, Active: true, Foldable: true}},
		{"u5", Row{Indent: 3, Gutters: []Gutter{{0, true}, {1, true}}, Active: true}},
		{"r3", Row{Indent: 2, Connector: ConnLast, Gutters: []Gutter{{0, true}}, Foldable: true}},
		{"a5", Row{Indent: 3, Gutters: []Gutter{{0, true}, {1, false}}}},
		{"u3", Row{Indent: 1, Connector: ConnLast, Foldable: true}},
		{"u4", Row{Indent: 2, Gutters: []Gutter{{0, false}}, Label: "retry", Labeled: true}},
		{"a12", Row{Indent: 3, Gutters: []Gutter{{0, true}, {1, true}}, Active: true, Leaf: true}},
	}
	for _, tt := range tests {
		got := layRow(t, s, l, tt.id)
		tt.want.Pos = readtest.MustLookup(t, s, tt.id)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.id, got, tt.want)
		}
	}
	// Previews are filled only for the rows asked for.
	if err := l.Previews(r, 3, 2); err != nil {
		t.Fatal(err)
	}
	rows := l.Rows(2, 4)
	got := []string{rows[0].Preview, rows[1].Preview, rows[2].Preview, rows[3].Preview}
	want := []string{"", "assistant: The token check is inverted.  I'll fix it.", "user: Apply the fix", ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("previews after Previews(3, 2) = %q, want %q", got, want)
	}
	if p := rows[2].Prefix(); p != "├⊟ • " {
		t.Errorf("u2 prefix = %q", p)
	}
	if txt := rows[1].Text(); txt != "• [diagnosis] assistant: The token check is inverted.  I'll fix it." {
		t.Errorf("a3 text = %q", txt)
	}
	if p := layRow(t, s, l, "u5").Prefix(); p != "│  │     • " {
		t.Errorf("u5 prefix = %q", p)
	}
	// Windows are clamped.
	if n := len(l.Rows(20, 100)); n != 4 {
		t.Errorf("Rows(20, 100) gave %d rows, want 4", n)
	}
	if n := len(l.Rows(-5, 2)); n != 2 {
		t.Errorf("Rows(-5, 2) gave %d rows, want 2", n)
	}
	if n := len(l.Rows(30, 2)); n != 0 {
		t.Errorf("Rows(30, 2) gave %d rows, want 0", n)
	}
}

func TestLayoutIndexFlags(t *testing.T) {
	s, _, _ := layOpen(t, "branches", Options{}, "")
	for _, tt := range []struct {
		id    string
		flags sessions.Flags
	}{
		{"a1", 0}, {"a3", sessions.FlagText}, {"a9", 0}, {"a11", sessions.FlagOddStop},
		{"a6", sessions.FlagOddStop | sessions.FlagError}, {"a7", sessions.FlagOddStop | sessions.FlagError}, {"a12", sessions.FlagText},
		{"u1", 0}, // only assistant messages carry the flags
	} {
		got := s.Entries[readtest.MustLookup(t, s, tt.id)].Flags & (sessions.FlagText | sessions.FlagOddStop | sessions.FlagError)
		if got != tt.flags {
			t.Errorf("%s: flags %b, want %b", tt.id, got, tt.flags)
		}
	}
}

func TestLayoutNavigation(t *testing.T) {
	s, _, l := layOpen(t, "branches", Options{}, "")
	row := func(id string) int { return l.RowOf(readtest.MustLookup(t, s, id)) }
	for _, tt := range []struct {
		name      string
		got, want int
	}{
		{"Find(hidden a1) is u1", l.Find(readtest.MustLookup(t, s, "a1")), row("u1")},
		{"Find(hidden mc) is a3", l.Find(readtest.MustLookup(t, s, "mc")), row("a3")},
		{"Find(leaf)", l.Find(s.Leaf()), row("a12")},
		{"Find(-1) is the last row", l.Find(-1), l.Len() - 1},
		{"Find(out of range) is the last row", l.Find(len(s.Entries)), l.Len() - 1},
		{"Parent(u2) skips hidden settings", l.Parent(row("u2")), row("a3")},
		{"Parent(root)", l.Parent(row("u1")), -1},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: got row %d, want %d", tt.name, tt.got, tt.want)
		}
	}
	if got, want := l.Children(row("a3")), []int{row("u2"), row("u3")}; !reflect.DeepEqual(got, want) {
		t.Errorf("Children(a3) = %v, want %v", got, want)
	}
	if got := l.Children(row("a12")); len(got) != 0 {
		t.Errorf("Children(leaf) = %v", got)
	}

	// An empty layout.
	_, _, empty := layOpen(t, "branches", Options{Search: "no such words"}, "")
	if empty.Len() != 0 || empty.Find(0) != -1 {
		t.Errorf("empty layout: Len %d, Find %d", empty.Len(), empty.Find(0))
	}
}

func TestLayoutFoldsAndRoots(t *testing.T) {
	s, _, l := layOpen(t, "branches", Options{Folded: map[string]bool{"u2": true}}, "")
	u2 := layRow(t, s, l, "u2")
	if !u2.Folded || u2.Foldable || u2.Prefix() != "├⊞ • " {
		t.Errorf("folded u2: %+v prefix %q", u2, u2.Prefix())
	}
	for _, id := range []string{"bs", "u5", "a12", "r3"} {
		if l.RowOf(readtest.MustLookup(t, s, id)) != -1 {
			t.Errorf("%s shown under folded u2", id)
		}
	}
	if l.Find(s.Leaf()) != l.RowOf(readtest.MustLookup(t, s, "u2")) {
		t.Errorf("the leaf under a fold should find u2")
	}

	s, _, l = layOpen(t, "roots", Options{Folded: map[string]bool{"y1": true}}, "")
	y1 := layRow(t, s, l, "y1")
	if y1.Prefix() != "⊞ • " || y1.Connector != ConnNone || y1.Indent != 0 {
		t.Errorf("folded root: %+v prefix %q", y1, y1.Prefix())
	}

	// Several roots: the one with the leaf first, then file order; roots
	// draw at indent 0 and their first generation one level in.
	s, _, l = layOpen(t, "roots", Options{}, "")
	var order []string
	for _, row := range l.Rows(0, l.Len()) {
		order = append(order, s.Entries[row.Pos].ID)
	}
	if want := []string{"y1", "y2", "y3", "y4", "y5", "y6", "x1", "x2", "o1", "o2"}; !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	for id, indent := range map[string]int{"y1": 0, "y2": 1, "y3": 2, "y4": 3, "y5": 2, "y6": 3, "x1": 0, "x2": 1, "o1": 0} {
		if got := layRow(t, s, l, id).Indent; got != indent {
			t.Errorf("%s: indent %d, want %d", id, got, indent)
		}
	}
}

func TestLayoutOptionsErrors(t *testing.T) {
	s, err := sessions.Load(filepath.Join("testdata", "roots.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(s, nil, Options{Filter: "tools"}); !errors.Is(err, ErrFilter) {
		t.Errorf("unknown filter: err %v", err)
	}
	if _, err := New(s, nil, Options{Search: "x"}); err == nil {
		t.Errorf("a search without a sessions.Reader should fail")
	}
	// Blank searches need no Reader; a leaf without an id, or none, marks no path.
	l, err := New(s, nil, Options{Leaf: -1, Search: " \t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range l.Rows(0, l.Len()) {
		if row.Active || row.Leaf {
			t.Errorf("no leaf, yet row %+v is marked", row)
		}
	}
	if l.Leaf() != -1 || l.opt.Filter != FilterDefault {
		t.Errorf("Leaf %d Filter %q", l.Leaf(), l.opt.Filter)
	}
}

func TestFilters(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Filter
		tag  string
	}{
		{"", FilterDefault, ""},
		{"default", FilterDefault, ""},
		{"no-tools", FilterNoTools, "no-tools"},
		{"user-only", FilterUserOnly, "user"},
		{"labeled-only", FilterLabeledOnly, "labeled"},
		{"all", FilterAll, "all"},
	} {
		f, err := ParseFilter(tt.in)
		if err != nil || f != tt.want || f.Tag() != tt.tag {
			t.Errorf("%q: %q %v tag %q", tt.in, f, err, f.Tag())
		}
	}
	if _, err := ParseFilter("All"); !errors.Is(err, ErrFilter) {
		t.Errorf("ParseFilter(All): %v", err)
	}
}

func TestToolCallText(t *testing.T) {
	for _, tt := range []struct{ name, args, want string }{
		{`"read"`, `{"path":"/home/u/a.go"}`, "[read: ~/a.go]"},
		{`"read"`, `{"path":"/home/u/a.go","offset":10,"limit":20}`, "[read: ~/a.go:10-29]"},
		{`"read"`, `{"path":"/home/u/a.go","offset":null,"limit":5}`, "[read: ~/a.go:1-5]"},
		{`"read"`, `{"path":"/home/u/a.go","limit":1,"offset":0}`, "[read: ~/a.go:0]"},
		{`"read"`, `{"path":"/home/u/a.go","offset":" 7 "}`, "[read: ~/a.go:7]"},
		{`"read"`, `{"path":"/home/u/a.go","offset":" "}`, "[read: ~/a.go]"},
		{`"read"`, `{"path":"/home/u/a.go","offset":true}`, "[read: ~/a.go]"},
		{`"read"`, `{"path":"","file_path":"/home/u"}`, "[read: ~]"},
		{`"read"`, `{"path":"/home/user2/x"}`, "[read: /home/user2/x]"},
		{`"write"`, `{"path":"/home/u/x/../y//z/"}`, "[write: ~/y/z]"},
		{`"edit"`, `{"path":7}`, "[edit: 7]"},
		{`"edit"`, `"not an object"`, "[edit: ]"},
		{`"bash"`, `{"command":"` + strings.Repeat("a", 50) + `"}`, "[bash: " + strings.Repeat("a", 50) + "]"},
		{`"bash"`, `{"command":"` + strings.Repeat("a", 51) + `"}`, "[bash: " + strings.Repeat("a", 50) + "...]"},
		{`"bash"`, `{"command":"\n\tls  -l\n"}`, "[bash: ls  -l]"},
		{`"grep"`, `{"pattern":"x+"}`, "[grep: /x+/ in .]"},
		{`"find"`, `{"pattern":"*.go","path":"/home/u/p"}`, "[find: *.go in ~/p]"},
		{`"ls"`, `{"path":""}`, "[ls: .]"},
		{`"todo"`, `{"k": "v"}`, `[todo: {"k":"v"}]`},
		{`"todo"`, ``, `[todo: {}]`},
		{`"todo"`, `{"k":"` + strings.Repeat("é", 40) + `"}`, `[todo: {"k":"` + strings.Repeat("é", 34) + `...]`},
		{``, `{}`, "[undefined: {}]"},
	} {
		if got := formatToolCall([]byte(tt.name), []byte(tt.args), layHome); got != tt.want {
			t.Errorf("formatToolCall(%s, %s) = %q, want %q", tt.name, tt.args, got, tt.want)
		}
	}
	if got := formatToolCall([]byte(`"read"`), []byte(`{"path":"/home/u/a"}`), ""); got != "[read: /home/u/a]" {
		t.Errorf("without a home: %q", got)
	}
}

// layGenerate writes a session of n entries: turns of a user message,
// three tool rounds and a reply, with a branch every 50 entries and some
// labels. It returns the path.
func layGenerate(t testing.TB, dir string, n int, comb bool) string {
	p := filepath.Join(dir, fmt.Sprintf("gen-%d-%v.jsonl", n, comb))
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, `{"type":"session","version":3,"id":"gen","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`)
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	id := 0
	parent := ""
	var assistants []string
	emit := func(par, body string) string {
		id++
		ts = ts.Add(time.Millisecond)
		me := fmt.Sprintf("%08x", id)
		pj := "null"
		if par != "" {
			pj = `"` + par + `"`
		}
		fmt.Fprintf(w, `{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":%s}`+"\n",
			me, pj, ts.Format("2006-01-02T15:04:05.000Z"), body)
		return me
	}
	const usage = `"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0.001}}`
	for id < n {
		if comb {
			// A chain in which every entry also has a dead-end sibling: pi's
			// indent grows by one level per branch point.
			side := parent
			parent = emit(parent, `{"role":"user","content":"step"}`)
			emit(side, `{"role":"user","content":"side"}`)
			continue
		}
		if id > 0 && id%50 < 8 && len(assistants) > 3 {
			parent = assistants[len(assistants)-3] // branch off an earlier reply
		}
		parent = emit(parent, fmt.Sprintf(`{"role":"user","content":"please do step %d"}`, id))
		for k := 0; k < 3; k++ {
			call := fmt.Sprintf("call_%d", id)
			parent = emit(parent, `{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"toolCall","id":"`+call+`","name":"read","arguments":{"path":"/w/f.go"}}],"provider":"p","model":"m",`+usage+`,"stopReason":"toolUse"}`)
			parent = emit(parent, `{"role":"toolResult","toolCallId":"`+call+`","toolName":"read","content":[{"type":"text","text":"package f"}],"isError":false}`)
		}
		parent = emit(parent, `{"role":"assistant","content":[{"type":"text","text":"done"}],"provider":"p","model":"m",`+usage+`,"stopReason":"stop"}`)
		assistants = append(assistants, parent)
		if id%1000 < 8 && id < n-100 { // no label at the end: the leaf is a reply
			id++
			ts = ts.Add(time.Millisecond)
			fmt.Fprintf(w, `{"type":"label","id":"%08x","parentId":"%s","timestamp":"%s","targetId":"%s","label":"l%d"}`+"\n",
				id, parent, ts.Format("2006-01-02T15:04:05.000Z"), parent, id)
			parent = fmt.Sprintf("%08x", id)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLayoutLarge lays out 100k-entry sessions: a branchy one (its speed
// is BenchmarkLayout's), and a deep comb that would overflow any recursion.
func TestLayoutLarge(t *testing.T) {
	suite.Need(t, suite.Large)
	if testing.Short() {
		t.Skip("large session")
	}
	dir := t.TempDir()
	s, err := sessions.Load(layGenerate(t, dir, 100_000, false))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, opt := range []Options{
		{Leaf: s.Leaf()},
		{Leaf: s.Leaf(), Filter: FilterUserOnly},
		{Leaf: s.Leaf(), Filter: FilterAll, Folded: map[string]bool{s.Entries[10].ID: true}},
	} {
		start := time.Now()
		l, err := New(s, r, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d rows of %d entries in %v", opt.Filter, l.Len(), s.Len(), time.Since(start)) // speed: BenchmarkLayout
		sel := l.Find(s.Leaf())
		rows, err := l.Window(r, sel-25, 50)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			t.Errorf("an empty window")
		}
		if opt.Filter == "" {
			if leaf := rows[25]; !leaf.Leaf || leaf.Preview != "assistant: done" {
				t.Errorf("leaf row: %q leaf=%v", leaf.Preview, leaf.Leaf)
			}
			reads := 0
			for _, row := range rows {
				if row.Preview == "[read: /w/f.go]" {
					reads++
				}
			}
			if reads < 10 {
				t.Errorf("only %d tool call previews in the window", reads)
			}
		}
	}

	s, err = sessions.Load(layGenerate(t, dir, 100_000, true))
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(s, nil, Options{Leaf: s.Leaf()})
	if err != nil {
		t.Fatal(err)
	}
	sel := l.Find(s.Leaf())
	row := l.Rows(sel, 1)[0]
	if !row.Leaf || row.Indent < 49_000 || len(row.Gutters) < 49_000 {
		t.Errorf("deep leaf: indent %d, %d gutters", row.Indent, len(row.Gutters))
	}
}

// TestFastParsersOnGarbage feeds the non-validating parsers broken JSON, as
// a file rewritten under a Reader might hold: they must stop, not panic or spin.
func TestFastParsersOnGarbage(t *testing.T) {
	for _, raw := range []string{
		``, `{`, `[`, `{"`, `{"a`, `{"a"`, `{"a":`, `{"a":}`, `{"a" 1}`, `{"a":1,}`, `{"a":"\`, `{"a":"x\"`,
		`[}]`, `[1,`, `["a`, `[,]`, `[1 2]`, `{"a":[{"b":}]}`, `{}}`, `{"\":1}`, `]`, `}`, `"`, `-`,
	} {
		o := js.ObjectOf([]byte(raw))
		_ = js.ToString([]byte(raw))
		_ = js.Stringify([]byte(raw))
		_ = formatToolCall([]byte(`"x"`), []byte(raw), layHome)
		js.Elems([]byte(raw), func([]byte) bool { return true })
		for _, m := range o {
			if len(m.V) == 0 {
				t.Errorf("js.ObjectOf(%q) gave an empty value for %q", raw, m.K)
			}
		}
	}
	if o := js.ObjectOf([]byte(`{"a":1,"b":"x","a":2}`)); len(o) != 2 || string(o.Val("a")) != "2" || o[0].K != "a" {
		t.Errorf("repeated key: %v", o)
	}
}
