package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/suite"

	"github.com/piweb/piweb/internal/sessiontest"
)

// Line builders, from sessiontest.
const tHeader = sessiontest.Header

var (
	tEntry = sessiontest.Entry
	tUser  = sessiontest.User
	tAsst  = sessiontest.Asst
	tLines = sessiontest.Lines
)

// tParse loads content from a temporary file and fails the test on error.
func tParse(t testing.TB, content string) *Session {
	t.Helper()
	s, err := tParseBytes(t, []byte(content), "test.jsonl")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

// tParseBytes writes data to a file named name (a plain file name) in a
// temporary folder and loads it (package readtest's Parse, which these
// tests cannot import).
func tParseBytes(t testing.TB, data []byte, name string) (*Session, error) {
	t.Helper()
	return Load(tWrite(t, t.TempDir(), name, string(data)))
}

// tWrite writes content to name under dir and returns its path.
func tWrite(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tLoad writes content to a temporary file and loads it.
func tLoad(t testing.TB, content string) (*Session, string) {
	t.Helper()
	p := tWrite(t, t.TempDir(), "s.jsonl", content)
	s, err := Load(p)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s, p
}

// tIDs returns the ids of the entries at positions ps.
func tIDs(s *Session, ps []int) []string {
	out := make([]string, len(ps))
	for k, p := range ps {
		out[k] = s.Entries[p].ID
	}
	return out
}

// tAllIDs returns the ids of all entries in file order.
func tAllIDs(s *Session) []string {
	out := make([]string, len(s.Entries))
	for i := range s.Entries {
		out[i] = s.Entries[i].ID
	}
	return out
}

// tHasDiag reports whether s has a diagnostic of kind on line (any line when line is 0).
func tHasDiag(s *Session, kind string, line int) bool {
	for _, d := range s.Diags {
		if d.Kind == kind && (line == 0 || d.Line == line) {
			return true
		}
	}
	return false
}

// tDiags returns "line:kind" for every diagnostic, sorted.
func tDiags(s *Session) []string {
	var out []string
	for _, d := range s.Diags {
		out = append(out, fmt.Sprintf("%d:%s", d.Line, d.Kind))
	}
	slices.Sort(out)
	return out
}

// tCheckTree checks the invariants every index must hold, whatever the input:
// Walk visits every entry exactly once with consistent depths, every Path
// ends at its entry and starts at a root, children are the entries naming
// that parent in pi's order, roots are the parentless entries in file order,
// and links resolve as pi resolves them, except where a cycle was broken.
func tCheckTree(t testing.TB, s *Session) {
	t.Helper()
	n := len(s.Entries)
	seen := make([]int, n)
	depth := make([]int, n)
	s.Walk(func(i, d int) bool {
		if i < 0 || i >= n {
			t.Fatalf("Walk visited position %d of %d", i, n)
		}
		seen[i]++
		depth[i] = d
		if p := s.Parent(i); p >= 0 {
			if seen[p] == 0 || d != depth[p]+1 {
				t.Fatalf("Walk visited %d at depth %d before or not under its parent %d", i, d, p)
			}
		} else if d != 0 {
			t.Fatalf("Walk visited root %d at depth %d", i, d)
		}
		return true
	})
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("entry %d (line %d, id %q) visited %d times by Walk", i, s.Entries[i].Line, s.Entries[i].ID, c)
		}
	}
	last := map[string]int{}
	for i := range s.Entries {
		if id := s.Entries[i].ID; id != "" {
			last[id] = i
		}
	}
	var roots []int
	kids := make([]int, n)
	for i := range s.Entries {
		e := &s.Entries[i]
		p := s.Parent(i)
		switch {
		case p < -1 || p >= n || p == i:
			t.Fatalf("entry %d: parent %d", i, p)
		case p == -1:
			roots = append(roots, i)
			if q, ok := last[e.ParentID]; ok && e.ParentID != e.ID && q != i && !tHasDiag(s, DiagCycle, e.Line) {
				t.Fatalf("entry %d (line %d) is a root though its parent %q exists and no cycle was reported", i, e.Line, e.ParentID)
			}
		default:
			kids[p]++
			if e.ParentID != s.Entries[p].ID || last[e.ParentID] != p {
				t.Fatalf("entry %d: parent %d (id %q) but parentId %q resolves to %d", i, p, s.Entries[p].ID, e.ParentID, last[e.ParentID])
			}
		}
		if id, ok := s.Lookup(e.ID); e.ID != "" && (!ok || id != last[e.ID]) {
			t.Fatalf("Lookup(%q) = %d, %v; want %d", e.ID, id, ok, last[e.ID])
		}
		c := s.Children(i)
		for k := range c {
			if s.Parent(c[k]) != i {
				t.Fatalf("child %d of %d has parent %d", c[k], i, s.Parent(c[k]))
			}
			// By time, ties in file order. An unparseable time compares equal
			// to every other (NaN in pi's comparator), so it is left out.
			if k > 0 {
				a, b := &s.Entries[c[k-1]], &s.Entries[c[k]]
				if a.Time != NoTime && b.Time != NoTime && (a.Time > b.Time || a.Time == b.Time && c[k-1] > c[k]) {
					t.Fatalf("children of %d out of order: %d before %d", i, c[k-1], c[k])
				}
			}
		}
	}
	for i := range s.Entries {
		if len(s.Children(i)) != kids[i] {
			t.Fatalf("entry %d has %d children, %d entries name it", i, len(s.Children(i)), kids[i])
		}
	}
	if !slices.Equal(roots, s.Roots()) {
		t.Fatalf("Roots() = %v, want %v", s.Roots(), roots)
	}
	// Paths: all of them for small sessions, a sample for big ones.
	step := max(1, n/500)
	for i := n - 1; i >= 0; i -= step {
		path := s.Path(i)
		if len(path) != depth[i]+1 || path[len(path)-1] != i || s.Parent(path[0]) != -1 {
			t.Fatalf("Path(%d) = %v (depth %d)", i, path, depth[i])
		}
		for k := 1; k < len(path); k++ {
			if s.Parent(path[k]) != path[k-1] {
				t.Fatalf("Path(%d) is not a chain of parents at %d", i, k)
			}
		}
	}
}

// tCheckProject projects at leaf and checks the result is well-formed JSON
// made from entries of the path.
func tCheckProject(t testing.TB, s *Session, leaf int) *Projection {
	t.Helper()
	p, err := s.Project(leaf)
	if err != nil {
		t.Fatalf("Project(%d): %v", leaf, err)
	}
	on := map[int]bool{}
	for _, i := range s.Path(leaf) {
		on[i] = true
	}
	for _, pe := range p.Entries {
		if !on[pe.Pos] {
			t.Fatalf("Project(%d) includes entry %d, which is not on the path", leaf, pe.Pos)
		}
	}
	for k, m := range p.Messages {
		if !json.Valid(m) {
			t.Fatalf("Project(%d): message %d is not valid JSON: %.200s", leaf, k, m)
		}
	}
	// A thinking_level_change without thinkingLevel leaves it undefined (nil) as in pi.
	if !json.Valid(p.Model) || (p.ThinkingLevel != nil && !json.Valid(p.ThinkingLevel)) {
		t.Fatalf("Project(%d): model %s, thinking level %s", leaf, p.Model, p.ThinkingLevel)
	}
	if len(p.Messages) < 1000 {
		if _, err := json.Marshal(p.Context); err != nil {
			t.Fatalf("Project(%d): context does not marshal: %v", leaf, err)
		}
	}
	return p
}

// tRoles returns the role of each context message.
func tRoles(t testing.TB, p *Projection) []string {
	t.Helper()
	var out []string
	for _, m := range p.Messages {
		var r struct {
			Role string `json:"role"`
		}
		if err := json.Unmarshal(m, &r); err != nil {
			t.Fatalf("message %s: %v", m, err)
		}
		out = append(out, r.Role)
	}
	return out
}

// tSameIndex fails unless got indexes exactly what want does.
func tSameIndex(t testing.TB, got, want *Session) {
	t.Helper()
	if got.Header != want.Header {
		t.Fatalf("Header = %+v, want %+v", got.Header, want.Header)
	}
	if got.Size != want.Size || got.FirstMessage != want.FirstMessage || got.Name() != want.Name() {
		t.Fatalf("Size/FirstMessage/Name = %d %q %q, want %d %q %q", got.Size, got.FirstMessage, got.Name(), want.Size, want.FirstMessage, want.Name())
	}
	if len(got.Entries) != len(want.Entries) {
		t.Fatalf("%d entries, want %d", len(got.Entries), len(want.Entries))
	}
	for i := range got.Entries {
		if got.Entries[i] != want.Entries[i] {
			t.Fatalf("entry %d = %+v,\nwant %+v", i, got.Entries[i], want.Entries[i])
		}
		if got.Parent(i) != want.Parent(i) || !slices.Equal(got.Children(i), want.Children(i)) {
			t.Fatalf("entry %d: parent %d children %v, want %d %v", i, got.Parent(i), got.Children(i), want.Parent(i), want.Children(i))
		}
	}
	if !slices.Equal(got.Roots(), want.Roots()) {
		t.Fatalf("Roots = %v, want %v", got.Roots(), want.Roots())
	}
	gl, wl := got.Labels(), want.Labels()
	if len(gl) != len(wl) {
		t.Fatalf("Labels = %v, want %v", gl, wl)
	}
	for k, v := range wl {
		if gl[k] != v {
			t.Fatalf("Labels = %v, want %v", gl, wl)
		}
	}
	if g, w := tDiags(got), tDiags(want); !slices.Equal(g, w) {
		t.Fatalf("diagnostics = %v,\nwant %v", got.Diags, want.Diags)
	}
}

func TestMalformedLines(t *testing.T) {
	s := tParse(t, tLines(tHeader,
		tUser("a1", "", 1, "hi"),
		`{"type":"message","id":"bad"`,
		`not json`,
		tAsst("a2", "a1", 2, "hello"),
		`{"type":"message","id":"x",}`,
		`{"type":"message","id":"y","parentId":"a2","timestamp":"2026-01-01T00:00:03Z","n":01}`,
	))
	if got := tAllIDs(s); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Fatalf("ids = %v", got)
	}
	if got, want := tDiags(s), []string{"3:malformed", "4:malformed", "6:malformed", "7:malformed"}; !slices.Equal(got, want) {
		t.Errorf("diagnostics = %v, want %v", got, want)
	}
	if s.Entries[1].Line != 5 || s.Parent(1) != 0 {
		t.Errorf("a2: line %d parent %d", s.Entries[1].Line, s.Parent(1))
	}
	tCheckTree(t, s)
}

func TestBlankLinesAndOffsets(t *testing.T) {
	content := tHeader + "\n\n   \n\t\r\n" + tUser("a1", "", 1, "hi") + "\n\n\n" + tAsst("a2", "a1", 2, "yo") + "\r\n" + tUser("a3", "a2", 3, "é") + "\n"
	s := tParse(t, content)
	if len(s.Diags) != 0 {
		t.Errorf("diagnostics: %v", s.Diags)
	}
	if got := tAllIDs(s); !slices.Equal(got, []string{"a1", "a2", "a3"}) {
		t.Fatalf("ids = %v", got)
	}
	if got := []int{s.Entries[0].Line, s.Entries[1].Line, s.Entries[2].Line}; !slices.Equal(got, []int{5, 8, 9}) {
		t.Errorf("lines = %v", got)
	}
	for i := range s.Entries {
		e := &s.Entries[i]
		line := content[e.Off : e.Off+int64(e.Len)]
		if !strings.HasPrefix(line, `{"type":"message","id":"`+e.ID+`"`) || content[e.Off+int64(e.Len)] != '\n' {
			t.Errorf("entry %d: Off/Len point at %q", i, line)
		}
		raw, err := s.Raw(i)
		if err != nil || string(raw) != line {
			t.Errorf("Raw(%d) = %q, %v", i, raw, err)
		}
	}
	if s.Size != int64(len(content)) {
		t.Errorf("Size = %d, want %d", s.Size, len(content))
	}
}

func TestPartialLastLine(t *testing.T) {
	full := tUser("a2", "a1", 2, "complete but unterminated")
	base := tLines(tHeader, tUser("a1", "", 1, "hi"))
	for _, c := range []struct {
		name    string
		tail    string
		ids     []string
		diags   []string
		flagged bool
	}{
		{"complete JSON", full, []string{"a1", "a2"}, []string{"3:unterminated"}, true},
		{"incomplete JSON", full[:40], []string{"a1"}, []string{"3:unterminated"}, false},
		{"whitespace", "  \t", []string{"a1"}, nil, false},
		{"falsy value", "0", []string{"a1"}, []string{"3:not-object", "3:unterminated"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := tLoad(t, base+c.tail)
			if got := tAllIDs(s); !slices.Equal(got, c.ids) {
				t.Fatalf("ids = %v, want %v", got, c.ids)
			}
			if got := tDiags(s); !slices.Equal(got, c.diags) {
				t.Errorf("diagnostics = %v, want %v", s.Diags, c.diags)
			}
			if got := s.Entries[len(s.Entries)-1].Flags.Has(FlagUnterminated); got != c.flagged {
				t.Errorf("last entry unterminated = %v, want %v", got, c.flagged)
			}
			if s.Size != int64(len(base)) {
				t.Errorf("Size = %d, want %d (just past the last complete line)", s.Size, len(base))
			}
			tCheckTree(t, s)
		})
	}
}

func TestNotSession(t *testing.T) {
	msg := tUser("m0", "", 1, "x")
	for name, content := range map[string]string{
		"empty":                    "",
		"blank lines only":         "\n \n\t\n",
		"garbage":                  "not json\n{\n",
		"message first":            tLines(msg, tHeader),
		"truthy non-object first":  tLines("42", tHeader),
		"array first":              tLines("[]", tHeader),
		"header in an array":       tLines(`[` + tHeader + `]`),
		"header without id":        tLines(`{"type":"session","version":3,"timestamp":"2026-01-01T00:00:00Z"}`, msg),
		"header with numeric id":   tLines(`{"type":"session","version":3,"id":7}`, msg),
		"header with null id":      tLines(`{"type":"session","id":null}`, tHeader),
		"header type capitalised":  tLines(`{"type":"Session","id":"s1"}`),
		"other jsonl":              tLines(`{"level":"info","msg":"started"}`, `{"level":"warn","msg":"x"}`),
		"empty object first":       tLines(`{}`, tHeader),
		"unterminated header only": tHeader[:len(tHeader)-1],
	} {
		t.Run(name, func(t *testing.T) {
			p := tWrite(t, t.TempDir(), "x.jsonl", content)
			if _, err := Load(p); !errors.Is(err, ErrNotSession) {
				t.Errorf("Load: err = %v, want ErrNotSession", err)
			}
		})
	}
	// The header must be the first parsed value, not the first physical line.
	for name, c := range map[string]struct {
		content string
		diags   []string
	}{
		"after blank lines":       {"\n  \n" + tLines(tHeader, msg), nil},
		"after malformed lines":   {tLines("{oops", "not json", tHeader, msg), []string{"1:malformed", "2:malformed"}},
		"after falsy values":      {tLines("null", "0", "false", `""`, tHeader, msg), []string{"1:not-object", "2:not-object", "3:not-object", "4:not-object"}},
		"unterminated header":     {tHeader, []string{"1:unterminated"}},
		"second header is extra":  {tLines(tHeader, msg, `{"type":"session","version":3,"id":"s2"}`), []string{"3:extra-header"}},
		"header without version":  {tLines(`{"type":"session","id":"s1"}`), []string{"1:old-version"}},
		"header with extra field": {tLines(`{"type":"session","version":3,"id":"s1","x":[1,{"y":null}]}`, msg), nil},
	} {
		t.Run(name, func(t *testing.T) {
			s := tParse(t, c.content)
			if s.Header.ID == "" {
				t.Fatal("no header")
			}
			if got := tDiags(s); !slices.Equal(got, c.diags) {
				t.Errorf("diagnostics = %v, want %v", s.Diags, c.diags)
			}
		})
	}
}

func TestDuplicateIDs(t *testing.T) {
	s := tParse(t, tLines(tHeader,
		tUser("a1", "", 1, "hi"),
		tAsst("x", "a1", 2, "first x"),
		tAsst("x", "a1", 3, "second x"),
		tUser("c", "x", 4, "child of x"),
		tEntry(TypeLabel, "l1", "c", 5, `,"targetId":"x","label":"dup"`),
	))
	if got := tDiags(s); !slices.Equal(got, []string{"4:duplicate-id"}) {
		t.Errorf("diagnostics = %v", s.Diags)
	}
	if i, ok := s.Lookup("x"); !ok || i != 2 {
		t.Errorf("Lookup(x) = %d, %v; want the last one, 2", i, ok)
	}
	if s.Parent(3) != 2 {
		t.Errorf("child links to %d, want the last x (2)", s.Parent(3))
	}
	if got := s.Children(0); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("children of a1 = %v", got)
	}
	if s.EntryCount() != 4 {
		t.Errorf("EntryCount = %d, want 4 distinct ids", s.EntryCount())
	}
	tCheckTree(t, s)
	tCheckProject(t, s, s.Leaf())
}

func TestOrphansAndSelfParents(t *testing.T) {
	s := tParse(t, tLines(tHeader,
		tUser("a1", "", 1, "hi"),
		tAsst("o1", "missing", 2, "orphan"),
		tUser("o2", "o1", 3, "child of an orphan"),
		tAsst("s1", "s1", 4, "self"),
		tUser("s2", "s1", 5, "child of self-parent"),
		tEntry(TypeModelChange, "n1", "", 6, `,"provider":"p","modelId":"m"`),
		`{"type":"message","parentId":"a1","timestamp":"2026-01-01T00:00:07Z","message":{"role":"user","content":"no id"}}`,
	))
	if got, want := tDiags(s), []string{"3:orphan", "5:self-parent", "8:no-id"}; !slices.Equal(got, want) {
		t.Errorf("diagnostics = %v, want %v", got, want)
	}
	if got := s.Roots(); !slices.Equal(got, []int{0, 1, 3, 5}) {
		t.Errorf("roots = %v", got)
	}
	if s.Parent(2) != 1 || s.Parent(4) != 3 || s.Parent(6) != 0 {
		t.Errorf("parents: %d %d %d", s.Parent(2), s.Parent(4), s.Parent(6))
	}
	if s.EntryCount() != 7 {
		t.Errorf("EntryCount = %d, want 6 ids + 1 for the id-less entries", s.EntryCount())
	}
	tCheckTree(t, s)
	for i := range s.Entries {
		tCheckProject(t, s, i)
	}
}

func TestCycles(t *testing.T) {
	for _, c := range []struct {
		name   string
		lines  []string
		cycles int
		roots  []string
	}{
		{"length 2", []string{
			tUser("a", "b", 1, "a"), tAsst("b", "a", 2, "b"), tUser("c", "b", 3, "tail"),
		}, 1, []string{"a"}},
		{"length 3", []string{
			tUser("a", "c", 1, "a"), tAsst("b", "a", 2, "b"), tUser("c", "b", 3, "c"), tAsst("d", "c", 4, "tail"), tAsst("e", "a", 5, "another"),
		}, 1, []string{"a"}},
		{"entered later in the file", []string{
			tUser("r", "", 1, "root"), tUser("t", "b", 2, "tail into loop"), tUser("b", "a", 3, "b"), tAsst("a", "b", 4, "a"),
		}, 1, []string{"r", "b"}},
		{"two loops and a self-parent", []string{
			tUser("a", "b", 1, ""), tUser("b", "a", 2, ""), tUser("c", "e", 3, ""), tUser("d", "c", 4, ""), tUser("e", "d", 5, ""), tUser("f", "f", 6, ""),
		}, 2, []string{"a", "c", "f"}},
		{"through a duplicate id", []string{
			tUser("a", "", 1, ""), tUser("b", "a", 2, ""), tUser("a", "b", 3, ""),
		}, 1, []string{"a", "b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := tParse(t, tLines(append([]string{tHeader}, c.lines...)...))
			n := 0
			for _, d := range s.Diags {
				if d.Kind == DiagCycle {
					n++
				}
			}
			if n != c.cycles {
				t.Errorf("%d cycle diagnostics, want %d: %v", n, c.cycles, s.Diags)
			}
			if got := tIDs(s, s.Roots()); !slices.Equal(got, c.roots) {
				t.Errorf("roots = %v, want %v", got, c.roots)
			}
			tCheckTree(t, s)
			for i := range s.Entries {
				tCheckProject(t, s, i)
			}
		})
	}
}

func TestLongChain(t *testing.T) {
	suite.Need(t, suite.Large)
	const n = 100_000
	content := sessiontest.String(7, n, sessiontest.Options{Chain: true, Scale: sessiontest.ChainScale})
	s := tParse(t, content)
	if len(s.Diags) != 0 {
		t.Fatalf("diagnostics on generated data: %v", s.Diags[:min(5, len(s.Diags))])
	}
	if len(s.Entries) != n || len(s.Roots()) != 1 {
		t.Fatalf("%d entries, %d roots", len(s.Entries), len(s.Roots()))
	}
	if p := s.Path(s.Leaf()); len(p) != n || p[0] != 0 || p[n-1] != n-1 {
		t.Fatalf("Path(leaf) has %d entries", len(p))
	}
	maxDepth := 0
	s.Walk(func(_, d int) bool { maxDepth = max(maxDepth, d); return true })
	if maxDepth != n-1 || s.SubtreeSize(0) != n {
		t.Errorf("Walk depth %d, SubtreeSize %d", maxDepth, s.SubtreeSize(0))
	}
	tCheckTree(t, s)
	p := tCheckProject(t, s, s.Leaf())
	// The generator compacts now and then: the context starts at the latest compaction.
	if r := tRoles(t, p); len(r) == 0 || r[0] != "compactionSummary" || len(p.Entries) >= n/10 {
		t.Errorf("context of %d entries starts with %v", len(p.Entries), r[:min(3, len(r))])
	}
	m := s.Meta()
	if m.Entries != n || m.Tokens == 0 || m.Cost == 0 || len(m.Models) == 0 || m.Leaves != 1 || m.Branches != 0 {
		t.Errorf("Meta = %+v", m)
	}
}

func TestHugeLine(t *testing.T) {
	suite.Need(t, suite.Large)
	const size = 50 << 20
	var b strings.Builder
	b.Grow(size + 1024)
	b.WriteString(tHeader + "\n" + tUser("u", "", 1, "cat big.log") + "\n")
	b.WriteString(`{"type":"message","id":"big","parentId":"u","timestamp":"2026-01-01T00:00:02Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"`)
	chunk := `log line with \"quotes\" and é \u00e9\n`
	b.WriteString(strings.Repeat(chunk, size/len(chunk)))
	b.WriteString(`"}],"isError":false,"timestamp":2}}` + "\n")
	start := int64(len(tHeader) + 1 + len(tUser("u", "", 1, "cat big.log")) + 1)
	lineLen := b.Len() - int(start) - 1
	b.WriteString(tAsst("after", "big", 3, "done") + "\n")
	s, _ := tLoad(t, b.String())
	if got := tAllIDs(s); !slices.Equal(got, []string{"u", "big", "after"}) {
		t.Fatalf("ids = %v, diagnostics %v", got, s.Diags)
	}
	if e := s.Entries[1]; e.Off != start || e.Len != lineLen || e.Role != "toolResult" {
		t.Errorf("big entry: off %d len %d role %q; want %d %d", e.Off, e.Len, e.Role, start, lineLen)
	}
	raw, err := s.Raw(1)
	if err != nil || len(raw) != lineLen || !json.Valid(raw) {
		t.Fatalf("Raw: %d bytes, %v", len(raw), err)
	}
	p := tCheckProject(t, s, s.Leaf())
	if len(p.Messages) != 3 || len(p.Messages[1]) < size-1024 || !json.Valid(p.Messages[1]) {
		t.Errorf("context: %d messages", len(p.Messages))
	}
}

func TestNonObjectLines(t *testing.T) {
	s := tParse(t, tLines(tHeader,
		tUser("a1", "", 1, "hi"),
		`42`, `[1]`, `"x"`, `null`, `0`, `false`, `""`, `-0`, `0.0`, `[]`, `true`, `{}`, ` 7 `,
		tAsst("a2", "a1", 2, "yo"),
	))
	kept := map[int]string{3: "42", 4: "[1]", 5: `"x"`, 12: "[]", 13: "true", 14: "{}", 15: " 7 "}
	var lines []int
	for i := range s.Entries {
		e := &s.Entries[i]
		lines = append(lines, e.Line)
		if want, ok := kept[e.Line]; ok {
			if raw, _ := s.Raw(i); string(raw) != want {
				t.Errorf("line %d: Raw = %q, want %q", e.Line, raw, want)
			}
			if e.ID != "" || !e.Flags.Has(FlagNoID) || e.Flags.Has(FlagNotObject) != (want != "{}") || s.Parent(i) != -1 {
				t.Errorf("line %d: %+v parent %d", e.Line, *e, s.Parent(i))
			}
		}
	}
	if !slices.Equal(lines, []int{2, 3, 4, 5, 12, 13, 14, 15, 16}) {
		t.Errorf("entries on lines %v", lines)
	}
	for _, l := range []int{6, 7, 8, 9, 10, 11} {
		if !tHasDiag(s, DiagNotObject, l) {
			t.Errorf("no not-object diagnostic for skipped line %d", l)
		}
	}
	if s.EntryCount() != 3 {
		t.Errorf("EntryCount = %d, want 2 ids + 1 for the id-less entries", s.EntryCount())
	}
	tCheckTree(t, s)
	// A non-object leaf has an empty path but still projects.
	s2 := tParse(t, tLines(tHeader, tUser("a1", "", 1, "hi"), "42"))
	if p := tCheckProject(t, s2, s2.Leaf()); len(p.Messages) != 0 {
		t.Errorf("context at a non-object leaf: %d messages", len(p.Messages))
	}
}

const tV1File = `{"type":"session","id":"v1s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"one","timestamp":1735689601000}}
{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"reply"}],"provider":"anthropic","model":"claude","usage":{"totalTokens":5,"cost":{"total":0.1}},"stopReason":"stop","timestamp":1735689602000}}
this line is malformed
{"type":"message","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"two","timestamp":1735689603000}}
{"type":"compaction","timestamp":"2025-01-01T00:00:04.000Z","summary":"earlier talk","firstKeptEntryIndex":3,"tokensBefore":100}

{"type":"message","id":"ignored","parentId":"nope","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"user","content":"three","timestamp":1735689605000}}
`

func TestV1File(t *testing.T) {
	dir := t.TempDir()
	p := tWrite(t, dir, "v1.jsonl", tV1File)
	a, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Header.Version != 1 || !tHasDiag(a, DiagOldVersion, 1) || !tHasDiag(a, DiagMalformed, 4) {
		t.Errorf("version %d, diagnostics %v", a.Header.Version, a.Diags)
	}
	if !slices.Equal(tAllIDs(a), tAllIDs(b)) {
		t.Fatalf("ids differ between loads: %v, %v", tAllIDs(a), tAllIDs(b))
	}
	if len(a.Entries) != 5 {
		t.Fatalf("%d entries", len(a.Entries))
	}
	seen := map[string]bool{}
	for i := range a.Entries {
		e := &a.Entries[i]
		if e.ID == "" || seen[e.ID] {
			t.Errorf("entry %d has id %q", i, e.ID)
		}
		seen[e.ID] = true
		want := -1
		if i > 0 {
			want = i - 1
		}
		if a.Parent(i) != want {
			t.Errorf("entry %d: parent %d, want %d (chained in file order)", i, a.Parent(i), want)
		}
	}
	if got := a.Entries[3].FirstKept(); got != a.Entries[2].ID {
		t.Errorf("firstKeptEntryIndex 3 resolved to %q, want the id of entry %q (the third parsed line after the header)", got, a.Entries[2].ID)
	}
	pr := tCheckProject(t, a, a.Leaf())
	if got := tRoles(t, pr); !slices.Equal(got, []string{"compactionSummary", "user", "user"}) {
		t.Errorf("context roles = %v", got)
	}
	if !strings.Contains(string(pr.Messages[1]), `"two"`) || !strings.Contains(string(pr.Messages[2]), `"three"`) {
		t.Errorf("context = %s", pr.Messages)
	}
	if string(pr.Model) != `{"provider":"anthropic","modelId":"claude"}` {
		t.Errorf("model = %s", pr.Model)
	}
	tCheckTree(t, a)
}

func TestV2HookMessage(t *testing.T) {
	hook := tEntry(TypeMessage, "h1", "a1", 2, `,"message":{"role":"hookMessage","customType":"ext","content":"from a hook","display":true,"timestamp":2}`)
	for _, c := range []struct {
		version int
		role    string
	}{{2, "custom"}, {3, "hookMessage"}} {
		h := strings.Replace(tHeader, `"version":3`, fmt.Sprintf(`"version":%d`, c.version), 1)
		s := tParse(t, tLines(h, tUser("a1", "", 1, "hi"), hook))
		if s.Entries[1].Role != c.role {
			t.Errorf("v%d: entry role %q, want %q", c.version, s.Entries[1].Role, c.role)
		}
		p := tCheckProject(t, s, s.Leaf())
		if got := tRoles(t, p); !slices.Equal(got, []string{"user", c.role}) {
			t.Errorf("v%d: context roles %v", c.version, got)
		}
		if !strings.Contains(string(p.Messages[1]), `"customType":"ext"`) {
			t.Errorf("v%d: hook message %s lost its fields", c.version, p.Messages[1])
		}
		if (c.version == 2) != tHasDiag(s, DiagOldVersion, 1) {
			t.Errorf("v%d: diagnostics %v", c.version, s.Diags)
		}
	}
}

func TestChildrenOrder(t *testing.T) {
	s, p := tLoad(t, tLines(tHeader,
		tUser("p", "", 0, "parent"),
		tAsst("c1", "p", 5, ""),
		tAsst("c2", "p", 3, ""),
		tAsst("c3", "p", 5, ""),
		tEntry(TypeMessage, "c4", "p", 0, `,"timestamp":"2026-01-01T00:00:03Z","message":{"role":"assistant","content":[]}`),
		tAsst("c5", "p", 1, ""),
	))
	// c4's timestamp is written twice; the last one wins, as in JSON.parse.
	if got := tIDs(s, s.Children(0)); !slices.Equal(got, []string{"c5", "c2", "c4", "c1", "c3"}) {
		t.Errorf("children = %v, want by time with ties in file order", got)
	}
	sessiontest.Append(t, p, tLines(tAsst("c6", "p", 3, ""), tAsst("c7", "p", 9, ""), tAsst("c8", "p", 0, "")))
	if _, err := s.Update(); err != nil {
		t.Fatal(err)
	}
	if got := tIDs(s, s.Children(0)); !slices.Equal(got, []string{"c8", "c5", "c2", "c4", "c6", "c1", "c3", "c7"}) {
		t.Errorf("children after Update = %v", got)
	}
	fresh, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	tSameIndex(t, s, fresh)
}

func TestLabelsAndName(t *testing.T) {
	s := tParse(t, tLines(tHeader,
		tUser("a1", "", 1, "hi"),
		tAsst("a2", "a1", 2, ""),
		tEntry(TypeLabel, "l1", "a2", 3, `,"targetId":"a1","label":"one"`),
		tEntry(TypeSessionInfo, "n1", "l1", 4, `,"name":"  First  "`),
		tUser("b1", "a1", 5, "other branch"),
		tEntry(TypeLabel, "l2", "b1", 6, `,"targetId":"a1","label":"two"`),
		tEntry(TypeLabel, "l3", "l2", 7, `,"targetId":"a2","label":"gone"`),
		tEntry(TypeLabel, "l4", "a2", 8, `,"targetId":"a2"`),
		tEntry(TypeLabel, "l5", "l4", 9, `,"targetId":"b1","label":"x"`),
		tEntry(TypeLabel, "l6", "l5", 10, `,"targetId":"b1","label":""`),
		tEntry(TypeLabel, "l7", "l6", 11, `,"targetId":"l1","label":42`),
		tEntry(TypeSessionInfo, "n2", "a2", 12, `,"name":"Second"`),
	))
	want := map[string]string{"a1": "two", "l1": "42"}
	got := s.Labels()
	if len(got) != len(want) || got["a1"] != "two" || got["l1"] != "42" {
		t.Errorf("Labels = %v, want %v (file order, not path order; absent or empty clears)", got, want)
	}
	if s.LabelOf(0) != "two" || s.LabelOf(1) != "" || s.LabelEntry("a1") != 5 {
		t.Errorf("LabelOf(a1) = %q, LabelOf(a2) = %q, LabelEntry(a1) = %d", s.LabelOf(0), s.LabelOf(1), s.LabelEntry("a1"))
	}
	if s.Name() != "Second" {
		t.Errorf("Name = %q", s.Name())
	}
	s2 := tParse(t, tLines(tHeader, tEntry(TypeSessionInfo, "n1", "", 1, `,"name":"  Kept \u00a0"`)))
	if s2.Name() != "Kept" {
		t.Errorf("Name = %q, want trimmed as JavaScript trims", s2.Name())
	}
	s3 := tParse(t, tLines(tHeader, tEntry(TypeSessionInfo, "n1", "", 1, `,"name":"x"`), tEntry(TypeSessionInfo, "n2", "n1", 2, `,"name":""`)))
	if s3.Name() != "" {
		t.Errorf("Name = %q, want cleared", s3.Name())
	}
}

func TestProjectCompactionAndEdits(t *testing.T) {
	s := tParse(t, tLines(tHeader,
		tEntry(TypeModelChange, "m1", "", 1, `,"provider":"openai","modelId":"gpt"`),
		tUser("u1", "m1", 2, "old"),
		tAsst("a1", "u1", 3, "old reply"),
		tEntry(TypeMessage, "sys", "a1", 4, `,"message":{"role":"system","content":"be brief"}`),
		tUser("u2", "sys", 5, "kept"),
		tAsst("a2", "u2", 6, "kept reply"),
		tEntry(TypeCompaction, "c1", "a2", 7, `,"summary":"sum","firstKeptEntryId":"a1","tokensBefore":9`),
		tEntry(TypeThinking, "t1", "c1", 8, `,"thinkingLevel":"high"`),
		tEntry(TypeContextEdit, "e1", "t1", 9, `,"targetId":"u2","replacement":{"content":"edited"}`),
		tEntry(TypeContextEdit, "e2", "e1", 10, `,"targetId":"a2","replacement":null`),
		tEntry(TypeBranchSummary, "b1", "e2", 11, `,"fromId":"zz","summary":"went elsewhere"`),
		tEntry(TypeCustomMessage, "cm", "b1", 12, `,"customType":"git","content":"dirty","display":false`),
		tUser("u3", "cm", 13, "new"),
	))
	p := tCheckProject(t, s, s.Leaf())
	if got, want := tRoles(t, p), []string{"compactionSummary", "assistant", "user", "branchSummary", "custom", "user"}; !slices.Equal(got, want) {
		t.Fatalf("roles = %v, want %v", got, want)
	}
	if !strings.Contains(string(p.Messages[2]), `"content":"edited"`) {
		t.Errorf("edited message = %s", p.Messages[2])
	}
	if string(p.Model) != `{"provider":"anthropic","modelId":"claude"}` || string(p.ThinkingLevel) != `"high"` {
		t.Errorf("model %s thinking %s", p.Model, p.ThinkingLevel)
	}
	var kept []string
	for _, pe := range p.Entries {
		if pe.Kept {
			kept = append(kept, s.Entries[pe.Pos].ID)
		}
	}
	if !slices.Equal(kept, []string{"a1", "u2", "a2"}) {
		t.Errorf("kept = %v (system messages before the compaction are dropped)", kept)
	}
	// At the first user message nothing is compacted yet.
	i, _ := s.Lookup("u1")
	if p := tCheckProject(t, s, i); !slices.Equal(tRoles(t, p), []string{"user"}) || string(p.Model) != `{"provider":"openai","modelId":"gpt"}` {
		t.Errorf("at u1: %v %s", tRoles(t, p), p.Model)
	}
	// An empty session projects to the empty context.
	if p := tCheckProject(t, s, -1); len(p.Messages) != 0 || string(p.Model) != "null" || string(p.ThinkingLevel) != `"off"` {
		t.Errorf("at -1: %+v", p.Context)
	}
}

func TestUpdateAppend(t *testing.T) {
	content := sessiontest.String(11, 400, sessiontest.Options{})
	lines := strings.SplitAfter(content, "\n")
	lines = lines[:len(lines)-1] // the empty string after the last newline
	dir := t.TempDir()
	p := tWrite(t, dir, "s.jsonl", strings.Join(lines[:50], ""))
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	for at := 50; at < len(lines); {
		k := min(len(lines), at+1+at%7)
		sessiontest.Append(t, p, strings.Join(lines[at:k], ""))
		before := len(s.Entries)
		d, err := s.Update()
		if err != nil {
			t.Fatal(err)
		}
		if d.Reloaded || len(d.New) != k-at || d.New[0] != before || d.OldLeaf != before-1 {
			t.Fatalf("Update after lines %d..%d: %+v", at, k, d)
		}
		fresh, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		tSameIndex(t, s, fresh)
		at = k
	}
	tCheckTree(t, s)
	if d, err := s.Update(); err != nil || d.Changed() {
		t.Errorf("Update with nothing new: %+v, %v", d, err)
	}

	// Appends that need a rebuild: a forward reference, a duplicate id,
	// a label, a malformed line, blank lines, an orphan and a cycle.
	leaf := s.Entries[s.Leaf()].ID
	for _, batch := range []string{
		tLines(tUser("fw1", "fw2", 1, "parent comes next"), tAsst("fw2", leaf, 2, "here")),
		tLines(tAsst(leaf, "fw1", 3, "duplicate of the old leaf")),
		tLines(tEntry(TypeLabel, "lb", "fw2", 4, `,"targetId":"fw1","label":"appended"`), "", "  ", "{broken"),
		tLines(tUser("or", "nowhere", 5, "orphan"), tUser("cy1", "cy2", 6, ""), tUser("cy2", "cy1", 7, "")),
		tLines(tUser("nowhere", "", 8, "adopts the orphan")),
	} {
		sessiontest.Append(t, p, batch)
		if _, err := s.Update(); err != nil {
			t.Fatal(err)
		}
		fresh, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		tSameIndex(t, s, fresh)
		tCheckTree(t, s)
	}
	if s.Labels()["fw1"] != "appended" {
		t.Errorf("labels = %v", s.Labels())
	}
}

func TestUpdateRewrite(t *testing.T) {
	base := tLines(tHeader, tUser("a1", "", 1, "hi"), tAsst("a2", "a1", 2, "yo"), tUser("a3", "a2", 3, "more"))
	for _, c := range []struct {
		name    string
		rewrite string
		ids     []string
	}{
		{"truncated", tLines(tHeader, tUser("a1", "", 1, "hi")), []string{"a1"}},
		{"same size, new tail", tLines(tHeader, tUser("a1", "", 1, "hi"), tAsst("a2", "a1", 2, "yo"), tUser("a3", "a2", 3, "mode")), []string{"a1", "a2", "a3"}},
		{"longer, new tail", tLines(tHeader, tUser("a1", "", 1, "hi"), tAsst("a2", "a1", 2, "yo"), tUser("a3", "a2", 3, "mode"), tUser("a4", "a3", 4, "x")), []string{"a1", "a2", "a3", "a4"}},
		{"another session", tLines(strings.Replace(tHeader, `"s1"`, `"s2"`, 1), tUser("a1", "", 1, "hi"), tAsst("a2", "a1", 2, "yo"), tUser("a3", "a2", 3, "more"), tUser("a4", "a3", 4, "x")), []string{"a1", "a2", "a3", "a4"}},
		{"same size, middle edit", tLines(tHeader, tUser("a1", "", 1, "hi"), tAsst("b2", "a1", 2, "yo"), tUser("a3", "b2", 3, "more")), []string{"a1", "b2", "a3"}},
		{"emptied", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, p := tLoad(t, base)
			// Replace the file by renaming over it, as editors and pi's migration do.
			// Update notices a rewrite by the file shrinking, by the last 64
			// indexed bytes, by the header changing, or, at the same size, by
			// the modification time moving.
			tmp := tWrite(t, filepath.Dir(p), "new.tmp", c.rewrite)
			later := s.ModTime.Add(time.Second)
			if err := os.Chtimes(tmp, later, later); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
			d, err := s.Update()
			if c.ids == nil {
				if !errors.Is(err, ErrNotSession) {
					t.Fatalf("Update of an emptied file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !d.Reloaded || d.OldLeaf != 2 {
				t.Errorf("Delta = %+v, want Reloaded", d)
			}
			if got := tAllIDs(s); !slices.Equal(got, c.ids) {
				t.Errorf("ids = %v, want %v", got, c.ids)
			}
			fresh, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			tSameIndex(t, s, fresh)
		})
	}
}

func TestUpdateUnterminated(t *testing.T) {
	base := tLines(tHeader, tUser("a1", "", 1, "hi"))
	a2 := tAsst("a2", "a1", 2, "yo")
	for _, c := range []struct {
		name        string
		first, rest string
	}{
		{"partial JSON completed", a2[:30], a2[30:] + "\n"},
		{"partial JSON completed in two steps", a2[:30], a2[30:60]},
		{"complete JSON, then newline and more", a2, "\n" + tUser("a3", "a2", 3, "more") + "\n"},
		{"complete JSON, then more of the line", `42`, "7\n"},
		{"falsy value that grows", `0`, ".5\n"},
		{"falsy value completed", `0`, "\n"},
		{"broken line completed", `{"a":`, " oops\n" + tUser("a3", "a1", 3, "") + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, p := tLoad(t, base+c.first)
			if !tHasDiag(s, DiagUnterminated, 3) {
				t.Errorf("no unterminated diagnostic: %v", s.Diags)
			}
			sessiontest.Append(t, p, c.rest)
			if _, err := s.Update(); err != nil {
				t.Fatal(err)
			}
			fresh, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			tSameIndex(t, s, fresh)
			tCheckTree(t, s)
		})
	}
}
