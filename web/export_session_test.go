package web

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/suite"
	"github.com/piweb/piweb/share"

	"github.com/a-h/templ"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// wholeFixtures are the odd files of sessions/testdata (fuzz seeds of
// FuzzLoad, whose single value is the file) shared whole in the golden
// test: cycles, orphans, duplicate and missing ids, lines that are not
// objects, old versions.
var wholeFixtures = []string{
	"cycle2", "cycle3", "cycle-dup", "self-parent", "orphans", "duplicate-ids", "no-ids", "non-objects",
	"v1", "v2-hook", "compaction", "edits", "labels-name", "labels-non-string", "invalid-utf8", "unterminated",
}

// wholeRoot is the demo's sessions root with sessions/testdata/branches.jsonl
// and the wholeFixtures beside them, and the keys of every session in it,
// sorted.
func wholeRoot(t testing.TB) (string, []string) {
	t.Helper()
	root := demoRoot(t)
	dir := filepath.Join(root, "--work-fixtures--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	b, err := os.ReadFile(filepath.Join("..", "sessions", "testdata", "branches.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	files["branches"] = b
	for _, name := range wholeFixtures {
		files[name] = fuzzSeed(t, filepath.Join("..", "sessions", "testdata", "fuzz", "FuzzLoad", name))
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00-000Z_"+name+".jsonl"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	for _, m := range openLib(t, root).List() {
		keys = append(keys, m.Key)
	}
	slices.Sort(keys)
	return root, keys
}

// fuzzSeed reads the []byte value of a Go fuzz corpus file.
func fuzzSeed(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if lit, ok := strings.CutPrefix(sc.Text(), "[]byte("); ok {
			s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return []byte(s)
		}
	}
	t.Fatalf("%s holds no []byte value", path)
	return nil
}

// wholeRedactions are the redactions the whole-session tests share with.
var wholeRedactions = []string{"", "secrets", "thinking,tools", "secrets,thinking,tools"}

// TestExportWholeGolden shares every demo and fixture session whole, with
// each set of redactions, and compares the pages with the ones piweb
// made when it built them in memory: the markup of the demo's main
// session in testdata/export-session.golden.html, and a SHA-256 of every
// page in testdata/export-session.sha256. Run with -update to rewrite them.
func TestExportWholeGolden(t *testing.T) {
	root, keys := wholeRoot(t)
	srv := newServer(t, openLib(t, root), nil).Handler()
	style := regexp.MustCompile(`(?s)<style>.*?</style>`)
	var sums strings.Builder
	for _, key := range keys {
		for _, red := range wholeRedactions {
			rec := get(t, srv, "/api/sessions/"+url.PathEscape(key)+"/export?format=html-session&redact="+red)
			if rec.Code != 200 {
				fmt.Fprintf(&sums, "%s %q status %d\n", key, red, rec.Code)
				continue
			}
			page := style.ReplaceAllString(rec.Body.String(), "<style>/* css/export.css */</style>")
			fmt.Fprintf(&sums, "%s %q %x\n", key, red, sha256.Sum256([]byte(page)))
			if key == mainID && red == "" {
				checkGolden(t, "export-session.golden.html", lines(page))
			}
		}
	}
	checkGolden(t, "export-session.sha256", sums.String())
}

// wholeInMemory is the whole-session page as piweb built it before it
// streamed: the redacted session held whole (share.Whole), every run's
// items built at once, so a tool call pairs with its result wherever in
// the run it is. The streamed page must not differ from it.
func wholeInMemory(t testing.TB, s *Server, key string, red share.Redact) ([]byte, error) {
	var out bytes.Buffer
	err := s.view(key, func(ss *sessions.Session, _ *sessions.Reader) error {
		b, err := share.Whole(ss, red)
		if err != nil {
			return err
		}
		bs, err := readtest.Parse(t, b.JSONL(), b.ID+".jsonl")
		if err != nil {
			return err
		}
		r, err := bs.Open()
		if err != nil {
			return err
		}
		defer r.Close()
		leaf := bs.Leaf()
		onPath := pathMarks(bs, leaf)
		bld := &builder{md: exportMarkdown(), s: bs, home: s.opt.Home}
		type run struct {
			x     views.ExportRun
			items []views.Item
		}
		var runs []run
		var cur []int
		flush := func() error {
			if len(cur) == 0 {
				return nil
			}
			items, err := bld.pathItems(r, cur)
			if err != nil {
				return err
			}
			x := views.ExportRun{From: -1, OnPath: onPath[cur[0]]}
			if p := bs.Parent(cur[0]); p >= 0 {
				x.From, x.FromRef = p, ref(bs, p)
			}
			runs = append(runs, run{x, items})
			cur = cur[:0]
			return nil
		}
		for _, i := range readingOrder(bs, onPath) {
			if len(cur) > 0 && bs.Parent(i) != cur[len(cur)-1] {
				if err := flush(); err != nil {
					return err
				}
			}
			cur = append(cur, i)
		}
		if err := flush(); err != nil {
			return err
		}
		tree, total, err := s.shareTree(bs, r, leaf, nil) // the tree is checked apart (TestShareTree)
		if err != nil {
			return err
		}
		m := bs.Meta()
		v := views.ExportView{Whole: true, Name: b.Name, SessionID: ss.Header.ID, Cwd: ss.Header.Cwd, Leaf: b.Leaf,
			Models: m.Models, Created: ss.Meta().Created, Exported: views.Now(), Entries: len(bs.Entries),
			Messages: m.Messages, Tokens: m.Tokens, Cost: m.Cost, Tree: tree, Branches: m.Leaves, LeafPos: leaf}
		if total > len(tree) {
			v.TreeCut = fmt.Sprintf("The tree shows its first %d rows of %d.", len(tree), total)
		}
		v.Title = oneLine(share.Title(ss, b, red), 120)
		v.Body = templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
			if len(runs) == 0 {
				return views.ExportEmptySession().Render(ctx, w)
			}
			for _, x := range runs {
				items := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
					for _, it := range x.items {
						it.Export = true
						if err := views.ItemView(it).Render(ctx, w); err != nil {
							return err
						}
					}
					return nil
				})
				if err := views.ExportRunView(x.x).Render(templ.WithChildren(ctx, items), w); err != nil {
					return err
				}
			}
			return nil
		})
		return renderExportTo(context.Background(), v, red, &out)
	})
	return out.Bytes(), err
}

// pairingSession is one run of tool calls whose results are far from them,
// early, twice over or missing, so that pages of one or a few entries cut
// between every call and its result.
func pairingSession() string {
	lines := []string{`{"type":"session","version":3,"id":"pairs","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`}
	parent := "null"
	add := func(id, msg string) {
		lines = append(lines, fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":%s}`, id, parent, msg))
		parent = strconv.Quote(id)
	}
	call := func(ids ...string) string {
		var blocks []string
		for _, id := range ids {
			blocks = append(blocks, fmt.Sprintf(`{"type":"toolCall","id":%q,"name":"bash","arguments":{"command":"echo %s"}}`, id, id))
		}
		return `{"role":"assistant","content":[` + strings.Join(blocks, ",") + `],"provider":"p","model":"m","stopReason":"toolUse","timestamp":1}`
	}
	result := func(id, text string) string {
		return fmt.Sprintf(`{"role":"toolResult","toolCallId":%q,"toolName":"bash","content":[{"type":"text","text":%q}],"isError":false,"timestamp":1}`, id, text)
	}
	user := func(text string) string { return fmt.Sprintf(`{"role":"user","content":%q,"timestamp":1}`, text) }
	add("u0", user("start"))
	add("r9", result("c9", "a result before its call"))
	add("a1", call("c1", "c2", "c9", ""))
	add("u1", user("in between"))
	add("r2", result("c2", "far result of c2"))
	add("u2", user("more"))
	add("r1", result("c1", "far result of c1"))
	add("a2", call("c1", "c3"))
	add("r1b", result("c1", "second result with id c1"))
	add("r3", result("c3", "result of c3"))
	add("r4", result("c4", "a result without a call"))
	add("re", result("", "a result without an id"))
	add("a3", call("c5"))
	add("u3", user("c5 never answered"))
	add("a4", call("c6"))
	add("r6", result("c6", "result of c6"))
	add("r6b", result("c6", "second result of c6"))
	return strings.Join(lines, "\n") + "\n"
}

// TestExportWholeStreamed: the streamed whole-session page, drawn one,
// two, three, seven or 200 entries at a time, is the page built in memory,
// byte for byte, for every demo and fixture session, generated sessions
// with branches and tool calls, and a session of odd pairings; with each
// set of redactions.
func TestExportWholeStreamed(t *testing.T) {
	suite.Need(t, suite.Large)
	// Generated sessions hold long tool outputs: chroma stops a regular
	// expression after 250 ms, so on a loaded machine a long text could come
	// out plain on one side only. Texts this short match in microseconds.
	defer func(n int) { maxHighlight = n }(maxHighlight)
	maxHighlight = 8 << 10
	root, _ := wholeRoot(t)
	dir := filepath.Join(root, "--work-generated--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"pairs": pairingSession()}
	gens, pages := 3, []int{1, 2, 3, 7, 200}
	if raceEnabled { // ten times slower: fewer of each
		gens, pages = 1, []int{1, 3, 200}
	}
	for seed := range int64(gens) {
		files[fmt.Sprint("gen", seed)] = sessiontest.String(seed+1, 300, sessiontest.Options{})
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00-000Z_"+name+".jsonl"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib := openLib(t, root)
	s := newServer(t, lib, nil)
	ctx := context.Background()
	for _, m := range lib.List() {
		for _, red := range wholeRedactions {
			q, err := exportQuery("", "html-session", []string{red})
			if err != nil {
				t.Fatal(err)
			}
			want, err := wholeInMemory(t, s, m.Key, q.red)
			if err != nil {
				t.Fatalf("%s %q in memory: %v", m.Key, red, err)
			}
			for _, page := range pages {
				q.page = page
				streamed := func() []byte {
					f, err := s.exported(ctx, m.Key, q)
					if err != nil {
						t.Fatalf("%s %q: %v", m.Key, red, err)
					}
					defer f.done()
					got, err := f.bytes(ctx)
					if err != nil {
						t.Fatalf("%s %q, pages of %d: %v", m.Key, red, page, err)
					}
					return got
				}
				if got := streamed(); !bytes.Equal(got, want) {
					t.Errorf("%s %q, pages of %d: the streamed page differs from the one built in memory\n%s", m.Key, red, page, firstDiff(string(got), string(want)))
				}
			}
		}
	}
}

// cancelAfter passes writes to w until it has seen marker, then cancels.
type cancelAfter struct {
	w      bytes.Buffer
	marker string
	cancel context.CancelFunc
	at     int // bytes written when it cancelled; -1 before
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.w.Write(p)
	if c.at < 0 && strings.Contains(c.w.String(), c.marker) {
		c.at = c.w.Len()
		c.cancel()
	}
	return len(p), nil
}

// TestExportWholeCancelled: a whole-session share stops when its request
// is cancelled, while the session is spilled or while the page is drawn,
// and leaves no temporary file behind, as it leaves none when it is
// written, or dropped unwritten.
func TestExportWholeCancelled(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the spills go
	noSpills := func(when string) {
		t.Helper()
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("%s: temporary files left: %v", when, left)
		}
	}
	lib := openLib(t, demoRoot(t))
	s := newServer(t, lib, nil)
	q, err := exportQuery("", "html-session", nil)
	if err != nil {
		t.Fatal(err)
	}
	q.page = 1

	// Cancelled before the spill: nothing is written.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.exported(ctx, mainID, q); !errors.Is(err, context.Canceled) {
		t.Errorf("exported with a cancelled request: %v, want context.Canceled", err)
	}
	noSpills("cancelled before the spill")
	rec := get(t, s.Handler(), "/api/sessions/"+mainID+"/export?format=html-session") // the slot is free again
	full := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(full, "</html>") {
		t.Fatalf("export after a cancelled one: status %d", rec.Code)
	}
	noSpills("written")

	// Cancelled while the page is drawn: it stops within a page.
	f, err := s.exported(context.Background(), mainID, q)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	w := &cancelAfter{marker: `<section class="run`, cancel: cancel, at: -1}
	err = f.write(ctx, w)
	f.done()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("drawing with the request cancelled: %v, want context.Canceled", err)
	}
	page := w.w.String()
	after := strings.Count(page[w.at:], ` id="m`)
	if w.at < 0 || strings.Contains(page, "</html>") || after > 1 || strings.Count(full, ` id="m`) < 20 {
		t.Errorf("drawing went on after the request was cancelled: %d entries after it, %d bytes of %d", after, len(page), len(full))
	}
	noSpills("cancelled while drawing")

	// Made but never written.
	f, err = s.exported(context.Background(), mainID, q)
	if err != nil || f.spill == "" {
		t.Fatalf("exported: %v, spilled to %q", err, f.spill)
	}
	f.done()
	noSpills("dropped unwritten")

	// Through the handler, with the request cancelled.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodGet, "/api/sessions/"+mainID+"/export?format=html-session", nil).WithContext(ctx)
	rec = httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if strings.Contains(rec.Body.String(), "</html>") {
		t.Error("a cancelled request got the whole page")
	}
	noSpills("a cancelled request")
}

// TestExportWholeSaved: the whole-session page saved beside the session is
// the page downloaded, written into the file as it is drawn.
func TestExportWholeSaved(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()
	api := "/api/sessions/" + mainID + "/export"
	download := get(t, srv, api+"?format=html-session&redact=secrets").Body.String()
	rec := postJSON(t, srv, api, `{"format":"html-session","redact":["secrets"]}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("status %d\n%s", rec.Code, rec.Body)
	}
	var r struct{ File string }
	decode(t, rec, &r)
	if filepath.Base(r.File) != "fix-stale-forecast-cache-session-redacted.html" {
		t.Errorf("saved as %s", r.File)
	}
	if b, err := os.ReadFile(r.File); err != nil || string(b) != download {
		t.Errorf("the saved page differs from the download (%v)", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(r.File), ".piweb-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// bytes returns the whole export.
func (f *exportFile) bytes(ctx context.Context) ([]byte, error) {
	if f.write == nil {
		return f.data, nil
	}
	var b bytes.Buffer
	err := f.write(ctx, &b)
	return b.Bytes(), err
}
