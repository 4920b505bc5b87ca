package web

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// Browser tests of what a pi user meets first (issue 28): each opens the
// demo (or a session made for it) in chromium and checks one rough edge is
// gone. With PIWEB_SHOTS=DIR they save screenshots to look at.

// demoPage serves the demo sessions for a browser test and returns a
// browserRun and the server's URL.
func demoPage(t *testing.T) (browserRun, string) {
	t.Helper()
	ctx, console := browse(t)
	t.Cleanup(func() { checkConsole(t, console) })
	_, url := liveDemo(t)
	return browserRun{t, ctx}, url
}

// servePage serves the sessions under root for a browser test.
func servePage(t *testing.T, root string) (browserRun, string) {
	t.Helper()
	ctx, console := browse(t)
	t.Cleanup(func() { checkConsole(t, console) })
	srv := newServer(t, openLib(t, root), nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	return browserRun{t, ctx}, ts.URL
}

// TestBrowserHitKeepsQuery: a search hit opens its session with the
// query's words as the tree's search, marked in the conversation.
func TestBrowserHitKeepsQuery(t *testing.T) {
	b, url := demoPage(t)
	b.do("search", chromedp.Navigate(url+"/search?q=stale+forecast"), chromedp.WaitVisible(chromedp.CSS(".hit-link")))
	href := b.eval(`document.querySelector('.hit-link').getAttribute('href')`)
	if !strings.Contains(href, "q=stale+forecast") {
		t.Errorf("the hit's link drops the query: %s", href)
	}
	b.do("open the hit", chromedp.Click(chromedp.CSS(".hit-link")), chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		b.poll("the words marked in the conversation", `document.querySelectorAll('#conv mark.q-hit').length > 0 &&
			[...document.querySelectorAll('#conv mark.q-hit')].every((m) => ['stale', 'forecast'].includes(m.textContent.toLowerCase()))`),
		b.poll("the tree searches for them", `document.querySelector('#tree-q').value === 'stale forecast'`))
	saveShot(t, b.ctx, "hit-words-1440")
}

// TestBrowserFilesTabInAddress: the Files tab is in the address, as the
// model context is, and a reload opens it again.
func TestBrowserFilesTabInAddress(t *testing.T) {
	b, url := demoPage(t)
	settled := ` && !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')`
	b.do("open", chromedp.Navigate(url+"/s/"+mainID+"?target=b82f83d6"), chromedp.WaitVisible(chromedp.CSS("#conv-inner")),
		b.poll("settled", `true`+settled))
	b.do("files tab", chromedp.Click(chromedp.CSS(`.tab[href*="view=files"]`)),
		b.poll("the files", `!!document.querySelector('#conv .files')`+settled),
		b.poll("the address says so", `new URLSearchParams(location.search).get('view') === 'files'`))
	b.do("another row keeps the tab", chromedp.Click(chromedp.CSS(`#tree .row[data-ref="09b043aa"] .txt`)),
		b.poll("its files", `document.querySelector('#conv-inner')?.dataset.ref === '09b043aa' && !!document.querySelector('#conv .files')`+settled),
		b.poll("still in the address", `new URLSearchParams(location.search).get('view') === 'files' && location.search.includes('target=09b043aa')`))
	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#conv .files")))
	b.do("conversation tab", chromedp.Click(chromedp.CSS(`.tab:not([href*="view="])`)),
		b.poll("the conversation", `!document.querySelector('#conv .files')`+settled),
		b.poll("out of the address", `!new URLSearchParams(location.search).has('view')`))
}

// TestBrowserTitleFirst: the session's title is not cut while counts and
// model chips take the room: on a phone and on a desktop with many models.
func TestBrowserTitleFirst(t *testing.T) {
	root := demoRoot(t)
	lines := []string{sessiontest.Header, sessiontest.User("u1", "", 1, "start"),
		sessiontest.Entry("session_info", "n1", "u1", 2, `,"name":"Fix stale forecast cache in the weather API client"`)}
	parent := "n1"
	for k, m := range []string{"claude-sonnet-4-5", "claude-opus-4-5", "gpt-5.1-codex-max", "gemini-3-pro-preview", "claude-haiku-4-5"} {
		id := fmt.Sprintf("a%d", k)
		lines = append(lines, strings.Replace(sessiontest.Asst(id, parent, 3+k, "ok"), `"model":"claude"`, `"model":"`+m+`"`, 1))
		parent = id
	}
	writeSession(t, root, "--home-dev-weather--", "2026-05-30T10-00-00-000Z_s1.jsonl", sessiontest.Lines(lines...))
	b, url := servePage(t, root)
	title := `(() => { const h = document.querySelector('.topbar .title'); return h.scrollWidth <= h.clientWidth + 1 && h.getBoundingClientRect().width > 0; })()`
	for _, c := range []struct {
		w    int64
		page string
	}{{1440, "/s/s1"}, {390, "/s/" + mainID}, {1440, "/s/" + mainID}} {
		b.do(fmt.Sprintf("%s at %d", c.page, c.w), chromedp.EmulateViewport(c.w, 900), chromedp.Navigate(url+c.page),
			chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")), b.poll("the whole title", title),
			b.poll("the cost still shown", `document.querySelector('#session-stats [title="cost"]').getBoundingClientRect().width > 0 && document.querySelector('#session-stats [title="cost"]').offsetTop < document.querySelector('#session-stats > summary').clientHeight`))
		saveShot(t, b.ctx, fmt.Sprintf("title-%d%s", c.w, strings.ReplaceAll(c.page, "/", "-")))
	}
	b.do("the counts open", chromedp.Click(chromedp.CSS(`#session-stats > summary`)),
		b.poll("every model in the counts", `document.querySelector('#session-stats .stats-pop').offsetHeight > 0`))
}

// TestBrowserFamiliesLongTitle: in the families sort a fork's long title
// stays on the line of its "↳", cut to its cell, clear of the ENTRIES column.
func TestBrowserFamiliesLongTitle(t *testing.T) {
	root := demoRoot(t)
	parent := filepath.Join(root, "--home-dev-weather--", "2026-05-12T08-30-01-234Z_"+mainID+".jsonl")
	writeSession(t, root, "--home-dev-weather--", "2026-05-20T10-00-00-000Z_longfork.jsonl", sessiontest.Lines(
		`{"type":"session","version":3,"id":"longfork","timestamp":"2026-05-20T10:00:00.000Z","cwd":"/home/dev/weather","parentSession":`+strconv.Quote(parent)+`}`,
		sessiontest.User("512d5d6b", "", 1, "Try again: "+strings.Repeat("make the forecast cache expire at local midnight in every city ", 4)),
	))
	b, url := servePage(t, root)
	fits := `(() => {
		const row = document.querySelector('tr[id] a.title[href="/s/longfork"]').closest('tr');
		const cell = row.querySelector('td.c-title').getBoundingClientRect();
		const title = row.querySelector('a.title').getBoundingClientRect();
		const arrow = row.querySelector('.fork-connector').getBoundingClientRect();
		const num = row.querySelector('td.c-num');
		const past = num && getComputedStyle(num).display !== 'none' && num.getBoundingClientRect().top < title.bottom ? num.getBoundingClientRect().left : Infinity;
		return title.right <= cell.right + 1 && title.right <= past + 1 && Math.abs(title.top - arrow.top) < arrow.height && title.height < 2 * arrow.height + 4;
	})()`
	for _, w := range []int64{1440, 390} {
		b.do(fmt.Sprintf("families at %d", w), chromedp.EmulateViewport(w, 900), chromedp.Navigate(url+"/?sort=families"),
			chromedp.WaitVisible(chromedp.CSS(`a.title[href="/s/longfork"]`)), b.poll("the fork's title on its line, in its cell", fits))
		saveShot(t, b.ctx, fmt.Sprintf("families-long-%d", w))
	}
}

// TestBrowserProjectTotalsLive: as pi appends to a session, its project's
// totals on the sessions page change with its row.
func TestBrowserProjectTotalsLive(t *testing.T) {
	ctx, console := browse(t)
	t.Cleanup(func() { checkConsole(t, console) })
	lib, srv, url := liveServer(t, demoRoot(t))
	b := browserRun{t, ctx}
	group := `document.getElementById('` + domID("p", "/home/dev/weather") + `-head')`
	b.do("sessions", chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.CSS("#sessions")),
		b.poll("the project's header", `!!`+group))
	waitStreams(t, srv, 1)
	leaf := ""
	_ = lib.View(darkID, func(ss *sessions.Session) error { leaf = ss.Entries[ss.Leaf()].ID; return nil })
	appendLines(t, sessionFile(t, lib, darkID),
		`{"type":"message","id":"cost0001","parentId":"`+leaf+`","timestamp":"2026-05-12T09:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"More."}],"provider":"anthropic","model":"claude-opus-4-5","usage":{"totalTokens":10,"cost":{"total":0.5}},"stopReason":"stop","timestamp":1778576400000}}`)
	waitIndexed(t, lib, darkID, "cost0001")
	var sum float64
	for _, m := range lib.List() {
		if m.Cwd == "/home/dev/weather" {
			sum += m.Cost
		}
	}
	b.do("the row and its project's totals", b.poll("the row", `document.getElementById('`+domID("s", darkID)+`').innerText.includes('$0.534')`),
		b.poll("the project's cost", group+`.innerText.includes('`+views.Cost(sum)+`')`))
	saveShot(t, ctx, "project-totals-1440")
}

// liveServer serves root, kept current by a watcher, for a browser.
func liveServer(t *testing.T, root string) (*sessions.Library, *Server, string) {
	t.Helper()
	lib := openLib(t, root)
	srv := newServer(t, lib, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	_, stop := startWatcher(t, lib)
	t.Cleanup(stop)
	return lib, srv, ts.URL
}

// waitStreams waits until the server has n live streams open.
func waitStreams(t *testing.T, srv *Server, n int32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); srv.streams.Load() != n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d live streams, want %d", srv.streams.Load(), n)
		}
	}
}
