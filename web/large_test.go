package web

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/suite"

	"github.com/piweb/piweb/sessions"
)

// writeBigSession writes a session of n entries (about 500 bytes each): turns
// of user, assistant with a tool call, and tool result, with a side branch
// every 997 entries. It returns the session id and the leaf id.
func writeBigSession(t testing.TB, root string, n int) (string, string) {
	t.Helper()
	dir := filepath.Join(root, "--home-dev-big--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "2026-01-01T00-00-00-000Z_big.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, `{"type":"session","version":3,"id":"big","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/big"}`)
	pad := strings.Repeat("lorem ipsum ", 30)
	parent := "null"
	main := ""
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%08x", i+1)
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
		p := parent
		if i%997 == 996 && main != "" {
			p = `"` + main + `"` // a side branch off an earlier entry
		}
		var msg string
		switch i % 3 {
		case 0:
			msg = fmt.Sprintf(`{"role":"user","content":"question %d %s","timestamp":%d}`, i, pad, ts.UnixMilli())
		case 1:
			msg = fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"answer %d %s"},{"type":"toolCall","id":"c%d","name":"bash","arguments":{"command":"echo %d"}}],"provider":"p","model":"m","usage":{"totalTokens":100,"cost":{"total":0.001}},"stopReason":"toolUse","timestamp":%d}`, i, pad, i, i, ts.UnixMilli())
		default:
			msg = fmt.Sprintf(`{"role":"toolResult","toolCallId":"c%d","toolName":"bash","content":[{"type":"text","text":"%d"}],"isError":false,"timestamp":%d}`, i-1, i-1, ts.UnixMilli())
		}
		fmt.Fprintf(w, `{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":%s}`+"\n", id, p, ts.Format("2006-01-02T15:04:05.000Z"), msg)
		if i%997 != 996 {
			parent = `"` + id + `"`
		}
		if i%500 == 0 {
			main = id
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return "big", strings.Trim(parent, `"`)
}

var (
	rowPos   = regexp.MustCompile(`<div id="n(\d+)" class="row`)
	morePage = regexp.MustCompile(`hx-get="([^"]+)"`)
)

// TestLargeSession pages through a big session's whole tree and a long path: every row and entry is reachable.
func TestLargeSession(t *testing.T) {
	suite.Need(t, suite.Large)
	n := 100_000
	if testing.Short() || raceEnabled {
		n = 12_000
	}
	root := t.TempDir()
	id, _ := writeBigSession(t, root, n)
	lib := openLib(t, root)
	srv := newServer(t, lib, nil).Handler()

	start := time.Now()
	rec := get(t, srv, "/s/"+id+"?filter=all")
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	t.Logf("first page of %d entries: %v, %d bytes", n, time.Since(start), rec.Body.Len())

	// Page up to the top, then down to the end.
	seen := map[string]bool{}
	body := rec.Body.String()
	for _, m := range rowPos.FindAllStringSubmatch(body, -1) {
		seen[m[1]] = true
	}
	pages := 0
	for _, dir := range []string{"before", "after"} {
		page := rec.Body.String()
		for strings.Contains(page, `data-more="`+dir+`"`) {
			all := rowPos.FindAllStringSubmatch(page, -1)
			anchor := all[len(all)-1][1]
			if dir == "before" {
				anchor = all[0][1]
			}
			r := get(t, srv, "/s/"+id+"/rows?filter=all&"+dir+"="+anchor)
			if r.Code != 200 {
				t.Fatalf("rows %s %s: status %d", dir, anchor, r.Code)
			}
			page = r.Body.String()
			for _, m := range rowPos.FindAllStringSubmatch(page, -1) {
				if seen[m[1]] {
					t.Fatalf("row %s sent twice", m[1])
				}
				seen[m[1]] = true
			}
			pages++
		}
	}
	if len(seen) != n {
		t.Errorf("reached %d rows of %d", len(seen), n)
	}
	t.Logf("%d row pages: %v", pages, time.Since(start))

	// The conversation to the leaf, page by page back to the root (on a
	// smaller session: a page takes milliseconds, a 66k-entry path has a thousand).
	root = t.TempDir()
	id, leaf := writeBigSession(t, root, 12_000)
	lib = openLib(t, root)
	srv = newServer(t, lib, nil).Handler()
	start = time.Now()
	rec = get(t, srv, "/s/"+id+"/entry?e="+leaf)
	items := strings.Count(rec.Body.String(), `<article class="item`)
	body = rec.Body.String()
	for pages = 0; ; pages++ {
		m := morePage.FindStringSubmatch(body[strings.Index(body, `<div class="msgs"`)+1:])
		if m == nil || !strings.Contains(m[1], "before=") {
			break
		}
		r := get(t, srv, strings.ReplaceAll(m[1], "&amp;", "&"))
		if r.Code != 200 {
			t.Fatalf("%s: status %d", m[1], r.Code)
		}
		body = `<div class="msgs">` + r.Body.String()
		items += strings.Count(body, `<article class="item`)
	}
	// Every entry of the path is an item, except tool results shown inside their call.
	want := 0
	if err := lib.View(id, func(ss *sessions.Session) error {
		path := ss.Path(ss.Leaf())
		for k, i := range path {
			e := &ss.Entries[i]
			paired := e.Role == "toolResult" && k > 0 && path[k-1] == i-1 && ss.Entries[i-1].Role == "assistant"
			if !paired {
				want++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if items != want {
		t.Errorf("%d conversation items over %d pages, want %d", items, pages+1, want)
	}
	t.Logf("path: %d items in %d pages: %v", items, pages+1, time.Since(start))
}
