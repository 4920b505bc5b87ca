package pitree

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/suite"
	"github.com/piweb/piweb/library"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// srchEdge is a session with every entry type, labels of every kind,
// unicode case and texts too long to cache or cut by pi.
var srchEdge = strings.Join([]string{
	`{"type":"session","version":3,"id":"srch","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`,
	`{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"Hello ÉCOLE İstanbul Straße","timestamp":1}}`,
	`{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ΟΔΥΣΣΕΥΣ and the KELVIN sign \u212a"}],"stopReason":"stop","timestamp":2}}`,
	`{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":3}}`,
	`{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"bashExecution","command":"GREP -R Foo","output":"nothing here","exitCode":1,"timestamp":4}}`,
	`{"type":"custom_message","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:05.000Z","customType":"Note","content":"` + strings.Repeat("long text ", 150) + `NEEDLE","display":true}`,
	`{"type":"branch_summary","id":"e6","parentId":"e5","timestamp":"2026-01-01T00:00:06.000Z","fromId":"e1","summary":"Tried the CACHE"}`,
	`{"type":"compaction","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:07.000Z","summary":"s","firstKeptEntryId":"e6","tokensBefore":1000}`,
	`{"type":"model_change","id":"e8","parentId":"e7","timestamp":"2026-01-01T00:00:08.000Z","provider":"p","modelId":"Claude-X"}`,
	`{"type":"thinking_level_change","id":"e9","parentId":"e8","timestamp":"2026-01-01T00:00:09.000Z","thinkingLevel":"HIGH"}`,
	`{"type":"custom","id":"e10","parentId":"e9","timestamp":"2026-01-01T00:00:10.000Z","customType":"Todo-State","data":{}}`,
	`{"type":"context_edit","id":"e11","parentId":"e10","timestamp":"2026-01-01T00:00:11.000Z","targetId":"e1","replacement":null}`,
	`{"type":"session_info","id":"e12","parentId":"e11","timestamp":"2026-01-01T00:00:12.000Z","name":"My sessions.Session"}`,
	`{"type":"label","id":"e13","parentId":"e12","timestamp":"2026-01-01T00:00:13.000Z","targetId":"e1","label":"Ça MARCHE"}`,
	`{"type":"label","id":"e14","parentId":"e13","timestamp":"2026-01-01T00:00:14.000Z","targetId":"e2","label":42}`,
	`{"type":"label","id":"e15","parentId":"e14","timestamp":"2026-01-01T00:00:15.000Z","targetId":"e3","label":{"A":1}}`,
	`{"type":"weird_type","id":"e16","parentId":"e15","timestamp":"2026-01-01T00:00:16.000Z"}`,
	`{"type":"message","id":"e17","parentId":"e16","timestamp":"2026-01-01T00:00:17.000Z","message":{"role":"user","content":"tail","timestamp":17}}`,
	`{"type":"message","id":"e18","parentId":"e17","timestamp":"2026-01-01T00:00:18.000Z","message":{"role":7,"content":"odd Role"}}`,
	`{"type":"usage","id":"e19","parentId":"e18","timestamp":"2026-01-01T00:00:19.000Z","kind":"title"}`,
	`{"type":"message","id":"e20","parentId":"e19","timestamp":"2026-01-01T00:00:20.000Z","message":{"role":"user","content":"` + strings.Repeat("x", 250) + ` BEYOND","timestamp":20}}`,
}, "\n") + "\n"

// srchWrite writes a session file and loads it.
func srchWrite(t testing.TB, dir, name, content string) (*sessions.Session, string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sessions.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// srchOpen opens a Reader over s; reads through it are counted in *reads
// and fail for the entries in bad.
func srchOpen(t testing.TB, s *sessions.Session, reads *atomic.Int64, bad ...int) *sessions.Reader {
	t.Helper()
	file, err := os.Open(s.File)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	f := &srchAt{r: file, reads: reads}
	for _, i := range bad {
		f.bad = append(f.bad, [2]int64{s.Entries[i].Off, s.Entries[i].Off + int64(s.Entries[i].Len)})
	}
	return sessions.NewReader(s, f)
}

var errSrchIO = errors.New("test: input/output error")

// srchAt counts reads, and fails those that touch a bad byte range (as a
// disk error fails every read of its sector).
type srchAt struct {
	r     io.ReaderAt
	reads *atomic.Int64
	bad   [][2]int64
}

func (a *srchAt) ReadAt(p []byte, off int64) (int, error) {
	if a.reads != nil {
		a.reads.Add(1)
	}
	for _, b := range a.bad {
		if off < b[1] && b[0] < off+int64(len(p)) {
			return 0, errSrchIO
		}
	}
	return a.r.ReadAt(p, off)
}

// srchCompare checks that matching q through x gives, for every entry,
// exactly what reading the entries gives, and so does a layout of all entries.
func srchCompare(t *testing.T, what string, s *sessions.Session, r *sessions.Reader, x *SearchIndex, q string) {
	t.Helper()
	tokens := searchTokens(q)
	if len(tokens) == 0 {
		return
	}
	plain := &searcher{r: r, tokens: tokens}
	cached := &searcher{r: r, tokens: tokens, ix: x.catchUp(s, r)}
	for i := range s.Entries {
		want, werr := plain.match(i)
		got, gerr := cached.match(i)
		if want != got || !errors.Is(gerr, werr) || (werr == nil) != (gerr == nil) {
			t.Fatalf("%s: query %q, entry %d (%s %q, label %q): cached %v, %v; read %v, %v",
				what, q, i, s.Entries[i].Type, s.Entries[i].ID, s.LabelOf(i), got, gerr, want, werr)
		}
	}
	opt := Options{Leaf: s.Leaf(), Filter: FilterAll, Search: q}
	lw, werr := New(s, r, opt)
	opt.Index = x
	lg, gerr := New(s, r, opt)
	if !errors.Is(gerr, werr) || (werr == nil) != (gerr == nil) {
		t.Fatalf("%s: query %q: layout error %v with the index, %v without", what, q, gerr, werr)
	}
	if werr == nil && !slices.Equal(layPositions(lw), layPositions(lg)) {
		t.Fatalf("%s: query %q: rows %v with the index, %v without", what, q, layPositions(lg), layPositions(lw))
	}
}

func layPositions(l *Layout) []int {
	out := make([]int, l.Len())
	for k, row := range l.Rows(0, l.Len()) {
		out[k] = row.Pos
	}
	return out
}

// srchQueries makes n queries of one to three tokens: pieces of the
// entries' searchable texts in mixed case, and words that stress case folding.
func srchQueries(rng *rand.Rand, s *sessions.Session, r *sessions.Reader, n int) []string {
	var texts []string
	for i := range s.Entries {
		if t, err := searchText(r, i); err == nil && t != "" {
			texts = append(texts, t)
		}
	}
	odd := []string{"İ", "i̇", "ı", "I", "ß", "SS", "Σ", "ς", "σ", "ǅ", "ǆ", "\u212a", "k", "Ω", "\u2126", "ﬁ", "\uFFFD",
		"[", "]", "label", "compaction", "branch", "summary", "user", "TOOLRESULT", "assistant", "title", "custom", "model",
		"thinking", "edit", "omit", "replace", ":", "zzz", "ça", "✓", "42", "object"}
	out := make([]string, 0, n)
	for range n {
		var toks []string
		for range 1 + rng.IntN(3) {
			if len(texts) == 0 || rng.IntN(4) == 0 {
				toks = append(toks, odd[rng.IntN(len(odd))])
				continue
			}
			rs := []rune(texts[rng.IntN(len(texts))])
			a := rng.IntN(len(rs))
			b := min(len(rs), a+1+rng.IntN(12))
			tok := string(rs[a:b])
			switch rng.IntN(3) {
			case 0:
				tok = strings.ToUpper(tok)
			case 1:
				tok = strings.ToTitle(tok)
			}
			toks = append(toks, tok)
		}
		out = append(out, strings.Join(toks, " "))
	}
	return out
}

// TestSearchIndexTable checks chosen queries on srchEdge, cached and not.
func TestSearchIndexTable(t *testing.T) {
	s, _ := srchWrite(t, t.TempDir(), "edge.jsonl", srchEdge)
	var reads atomic.Int64
	r := srchOpen(t, s, &reads)
	x := &SearchIndex{}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"école", []string{"e1"}},
		{"İSTANBUL", []string{"e1"}},
		{"straße", []string{"e1"}},
		{"STRASSE", nil},             // lower-casing does not fold ß
		{"οδυσσευς", []string{"e2"}}, // JavaScript lowercases a word's last Σ to ς
		{"οδυσσευσ", nil},
		{"ΟΔΥΣΣΕΥΣ kelvin \u212a", []string{"e2"}},
		{"ça marche", []string{"e1", "e13"}},
		{"ça école", []string{"e1"}},       // one token in the label, one in the text
		{"marche hello", []string{"e1"}},   // across the space pi joins them with
		{"he hello", []string{"e1"}},       // both in the text
		{"42", []string{"e2", "e14"}},      // a number label, as pi shows it
		{"[object", []string{"e3", "e15"}}, // an object label: String() of it
		{"needle", []string{"e5"}},         // past maxSearchText: read on each search
		{"beyond", nil},                    // past pi's 200 characters of content
		{"compaction", []string{"e7"}},     // no line read
		{"branch summary cache", []string{"e6"}},
		{"context edit omit e1", []string{"e11"}},
		{"title my session", []string{"e12"}},
		{"bashexecution grep -r foo", []string{"e4"}},
		{"high thinking", []string{"e9"}},
		{"todo-state custom", []string{"e10"}},
		{"claude-x model", []string{"e8"}},
		{"ok toolresult", []string{"e3"}},
		{"odd role", []string{"e18"}},
		{"7 odd", []string{"e18"}}, // a role that is not a string: js.Join(7)
		{"user", []string{"e1", "e17", "e20"}},
		{"zzz", nil},
	} {
		tokens := searchTokens(c.q)
		sr := &searcher{r: r, tokens: tokens, ix: x.catchUp(s, r)}
		var got []string
		for i := range s.Entries {
			ok, err := sr.match(i)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				got = append(got, s.Entries[i].ID)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: matched %v, want %v", c.q, got, c.want)
		}
		srchCompare(t, "edge", s, r, x, c.q)
	}
	// Once indexed, a search reads only the entry too long to keep.
	reads.Store(0)
	l, err := New(s, r, Options{Leaf: s.Leaf(), Filter: FilterAll, Search: "e", Index: x})
	if err != nil {
		t.Fatal(err)
	}
	if n := reads.Load(); n != 1 || l.Len() == 0 {
		t.Errorf("a search through the index read %d lines (want 1: e5) and showed %d rows", n, l.Len())
	}
}

// srchFixtures returns the test fixtures and generated sessions the
// randomized tests run on, by name.
func srchFixtures(t *testing.T) map[string]string {
	t.Helper()
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, g := range []string{"../sessions/testdata/*.jsonl", "../internal/sessiontest/testdata/write/*.jsonl", "../static/demo/*/*.jsonl"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d fixture files", len(files))
	}
	out := map[string]string{"edge": srchEdge}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	for seed := range int64(6) {
		out[fmt.Sprintf("gen-%d", seed)] = sessiontest.String(seed, 300, sessiontest.Options{Scale: 0.3})
		out[fmt.Sprintf("gen-chain-%d", seed)] = sessiontest.String(100+seed, 250, sessiontest.Options{Chain: true, Scale: sessiontest.ChainScale})
	}
	return out
}

// TestSearchIndexMatchesReading compares cached and uncached search on
// every fixture and generated session, for random queries, with labels set
// and cleared after the index was built and with unreadable lines.
func TestSearchIndexMatchesReading(t *testing.T) {
	suite.Need(t, suite.Large)
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	names := make([]string, 0)
	fixtures := srchFixtures(t)
	for name := range fixtures {
		names = append(names, name)
	}
	slices.Sort(names)
	for k, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			s, p := srchWrite(t, dir, fmt.Sprintf("f%d.jsonl", k), fixtures[name])
			r := srchOpen(t, s, nil)
			x := &SearchIndex{}
			for _, q := range srchQueries(rng, s, r, 30) {
				srchCompare(t, "fresh", s, r, x, q)
			}

			// Labels set, changed and cleared after the index was built,
			// on random entries, in mixed case and unicode.
			if s.Header.Version < 3 || len(s.Entries) == 0 || s.Entries[s.Leaf()].ID == "" {
				return // piweb appends to v3 files whose leaf has an id only
			}
			var lines strings.Builder
			parent := s.Entries[s.Leaf()].ID
			labels := []string{`"Ça MARCHE ✓"`, `"İYİ"`, `"NEW label"`, `42`, `{"x":1}`, `""`, `"ΣΟΦΙΑ"`}
			for n := range 8 {
				target := s.Entries[rng.IntN(len(s.Entries))].ID
				if target == "" {
					continue
				}
				id := fmt.Sprintf("lbl%d", n)
				lb := `,"label":` + labels[rng.IntN(len(labels))]
				if rng.IntN(5) == 0 {
					lb = "" // cleared
				}
				fmt.Fprintf(&lines, `{"type":"label","id":%q,"parentId":%q,"timestamp":"2026-06-01T00:00:00.000Z","targetId":%q%s}`+"\n",
					id, parent, target, lb)
				parent = id
			}
			before := len(s.Entries)
			sessiontest.Append(t, p, lines.String())
			n, d, err := s.Next()
			s = n
			if err != nil {
				t.Fatal(err)
			}
			var reads atomic.Int64
			r = srchOpen(t, s, &reads)
			x.catchUp(s, r)
			// A reload (the unterminated fixture's last line) reads everything again.
			if n := reads.Load(); !d.Reloaded && n != int64(len(s.Entries)-before) {
				t.Errorf("extending the index over %d appended labels read %d lines", len(s.Entries)-before, n)
			}
			for _, q := range append(srchQueries(rng, s, r, 20), "ça", "marche ✓", "i̇yi", "new", "42", "object", "σοφια") {
				srchCompare(t, "labels appended", s, r, x, q)
			}

			// Lines that cannot be read when the index is built are read
			// again on each search: the same error, or the same match.
			bad := []int{rng.IntN(len(s.Entries)), rng.IntN(len(s.Entries))}
			failing := srchOpen(t, s, nil, bad...)
			fresh := &SearchIndex{}
			for _, q := range srchQueries(rng, s, r, 10) {
				srchCompare(t, "unreadable", s, failing, fresh, q)
				srchCompare(t, "readable again", s, r, fresh, q)
			}
		})
	}
}

// TestSearchIndexReload checks that the index starts over when its session
// is re-read (a rewrite of the same size, a replaced file, through
// Session.Update and Library.Refresh) or when it is given another session.
func TestSearchIndexReload(t *testing.T) {
	dir := t.TempDir()
	content := sessiontest.String(7, 300, sessiontest.Options{Chain: true, Scale: sessiontest.ChainScale})
	s, p := srchWrite(t, dir, "s.jsonl", content)
	r := srchOpen(t, s, nil)
	x := &SearchIndex{}
	srchCompare(t, "first", s, r, x, "the")

	// Rewrite one word in place: same size, same offsets and ids.
	i := slices.IndexFunc(s.Entries, func(e sessions.Entry) bool { return e.Type == sessions.TypeMessage && e.Role == "user" })
	line, err := r.Raw(i)
	if err != nil {
		t.Fatal(err)
	}
	k := strings.Index(string(line), `"content":`)
	var word string
	for _, w := range strings.Fields(string(line[k+len(`"content":`):])) {
		if len(w) >= 4 && strings.IndexFunc(w, func(c rune) bool { return c < 'a' || c > 'z' }) < 0 {
			word = w
			break
		}
	}
	if k < 0 || word == "" {
		t.Fatalf("no plain word in %s", line)
	}
	edited := string(line[:k]) + strings.Replace(string(line[k:]), word, strings.Repeat("q", len(word)), 1)
	b := []byte(content)
	copy(b[s.Entries[i].Off:], edited)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	later := s.ModTime.Add(2 * time.Second)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	n, d, err := s.Next()
	s = n
	if err != nil || !d.Reloaded {
		t.Fatalf("Update after an in-place edit: %+v, %v; want a reload", d, err)
	}
	r = srchOpen(t, s, nil)
	q := strings.Repeat("q", len(word))
	srchCompare(t, "edited in place", s, r, x, q)
	if l, err := New(s, r, Options{Leaf: s.Leaf(), Filter: FilterAll, Search: q, Index: x}); err != nil || l.RowOf(i) < 0 {
		t.Errorf("after the reload, %q does not find the edited entry (%v)", q, err)
	}

	// Replace the file with another session under the same header.
	other := sessiontest.String(8, 200, sessiontest.Options{Chain: true, Scale: sessiontest.ChainScale})
	hdr := content[:strings.IndexByte(content, '\n')+1]
	other = hdr + other[strings.IndexByte(other, '\n')+1:]
	if err := os.WriteFile(p+".new", []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	n, d, err = s.Next()
	s = n
	if err != nil || !d.Reloaded {
		t.Fatalf("Update after a replacement: %+v, %v; want a reload", d, err)
	}
	r = srchOpen(t, s, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, q := range srchQueries(rng, s, r, 40) {
		srchCompare(t, "replaced", s, r, x, q)
	}

	// Another session given to the same index.
	s2, _ := srchWrite(t, dir, "other.jsonl", sessiontest.String(9, 250, sessiontest.Options{}))
	r2 := srchOpen(t, s2, nil)
	for _, q := range srchQueries(rng, s2, r2, 40) {
		srchCompare(t, "another session", s2, r2, x, q)
	}

	// Library.Refresh re-reads a rewritten file outside its lock and swaps it in.
	lib, err := library.OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	view := func(what string, qs []string) {
		t.Helper()
		err := lib.View(s2.Header.ID, func(s *sessions.Session) error {
			r := srchOpen(t, s, nil)
			for _, q := range qs {
				srchCompare(t, what, s, r, x, q)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	qs := srchQueries(rng, s2, r2, 40)
	view("library", qs)
	third := sessiontest.String(10, 250, sessiontest.Options{})
	nl := strings.IndexByte(third, '\n') + 1
	first, _ := os.ReadFile(filepath.Join(dir, "other.jsonl"))
	if err := os.WriteFile(filepath.Join(dir, "other.jsonl"), append(first[:strings.IndexByte(string(first), '\n')+1], third[nl:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := lib.Refresh(filepath.Join(dir, "other.jsonl")); err != nil || c.Kind != library.KindReload {
		t.Fatalf("Refresh: %+v, %v; want a reload", c, err)
	}
	view("library after refresh", append(qs, srchQueries(rng, s2, r2, 10)...))
}

// TestSearchIndexConcurrent searches one session from several goroutines
// through one index, as the web server's readers do (run with -race).
func TestSearchIndexConcurrent(t *testing.T) {
	s, _ := srchWrite(t, t.TempDir(), "s.jsonl", sessiontest.String(11, 400, sessiontest.Options{}))
	r := srchOpen(t, s, nil)
	qs := srchQueries(rand.New(rand.NewPCG(5, 6)), s, r, 64)
	want := make([][]int, len(qs))
	for k, q := range qs {
		l, err := New(s, r, Options{Leaf: s.Leaf(), Search: q})
		if err != nil {
			t.Fatal(err)
		}
		want[k] = layPositions(l)
	}
	x := &SearchIndex{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r, err := s.Open()
			if err != nil {
				t.Error(err)
				return
			}
			defer r.Close()
			for k := g; k < len(qs); k += 3 {
				l, err := New(s, r, Options{Leaf: s.Leaf(), Search: qs[k], Index: x})
				if err != nil {
					t.Error(err)
					return
				}
				if got := layPositions(l); !slices.Equal(got, want[k]) {
					t.Errorf("query %q: rows %v, want %v", qs[k], got, want[k])
				}
			}
		})
	}
	wg.Wait()
	if x.Bytes() == 0 {
		t.Error("the index holds nothing after searches")
	}
}

// Bytes returns the memory the index holds, in bytes.
func (x *SearchIndex) Bytes() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return cap(x.text) + 4*cap(x.end) + 4*cap(x.read)
}
