package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/library"
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
	group := `document.getElementById('` + domID("p", "/home/dev/weather") + `')?.querySelector('h2')`
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
func liveServer(t *testing.T, root string) (*library.Library, *Server, string) {
	t.Helper()
	lib := openLib(t, root)
	srv := newServer(t, lib, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	stop := startWatcher(t, lib)
	t.Cleanup(stop)
	return lib, srv, ts.URL
}

// waitStreams waits until the server has n live streams open.
func waitStreams(t *testing.T, srv *Server, n int32) {
	t.Helper()
	for deadline := time.Now().Add(guard); srv.streams.Load() != n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d live streams, want %d", srv.streams.Load(), n)
		}
	}
}

// TestBrowserViewPathNote: shift+V shows at once which path the page views
// and where pi resumes, naming rows the tree shows; the footer agrees with
// the "← active" and "← viewing" marks, and esc goes back.
func TestBrowserViewPathNote(t *testing.T) {
	b, url := demoPage(t)
	b.do("open", chromedp.Navigate(url+"/s/"+mainID), chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		chromedp.Click(chromedp.CSS(`#tree .row[data-ref="09b043aa"] .txt`)),
		b.poll("selected", `document.querySelector('#conv-inner')?.dataset.ref === '09b043aa' && !document.querySelector('.viewing-note')`))
	b.do("shift+V", chromedp.KeyEvent("V", chromedp.KeyModifiers(chromedp.ModifierShift)),
		b.poll("the tree reloaded", `location.search.includes("leaf=09b043aa")`),
		b.poll("the note, at once", `(() => { const n = document.querySelector('#conv .viewing-note'), text = n ? n.textContent.replace(/\s+/g, ' ') : ''; return text.includes('Viewing the path to 09b043aa.') && text.includes('pi resumes at c8578d56') && !!n.querySelector('[data-open-act=rewind]'); })()`),
		b.poll("the marks", `document.querySelector('#tree .row.leaf')?.dataset.ref === '09b043aa' && document.querySelector('#tree .row.leaf .here').textContent.includes('viewing') &&
			[...document.querySelectorAll('#tree .row .here')].filter((h) => h.textContent.includes('active')).map((h) => h.closest('.row').dataset.ref).join() === 'c8578d56'`),
		b.poll("the footer agrees", `document.querySelector('#tree-count').textContent.includes('viewing the path to 09b043aa') && !document.querySelector('#tree-count').textContent.includes('active:')`))
	saveShot(t, b.ctx, "view-path-1440")
	b.do("esc", chromedp.KeyEvent(kb.Escape),
		b.poll("back on pi's path: no note", `!document.querySelector('#conv .viewing-note') && !document.querySelector('#tree-count').textContent.includes('viewing') && !location.search.includes('leaf=')`))
	// A path whose end the filter hides: the note names the row standing for it.
	b.do("a hidden leaf", chromedp.Navigate(url+"/s/"+mainID+"?leaf=2a6138d1"), chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		b.poll("the note names the row shown", `(() => { const n = document.querySelector('#conv .viewing-note'), r = document.querySelector('#tree .row.leaf');
			return !!n && !!r && n.textContent.replace(/\s+/g, ' ').includes('Viewing the path to ' + r.dataset.ref + '.') && r.dataset.ref !== '2a6138d1'; })()`))
}

// keyAt dates a key event: the page reads its time (event.timeStamp) as
// when the key was pressed, whatever the time it arrives.
func keyAt(at time.Time) chromedp.KeyOption {
	return func(p *input.DispatchKeyEventParams) {
		p.Timestamp = input.TimeSinceEpoch(float64(at.UnixNano()) / 1e9)
	}
}

// TestBrowserEnterEnter: Enter opens "Rewind here"; a second Enter within
// 300 ms of the first does not rewind (the form says to press it again), a
// later one does, and the rewind's card offers Undo, which makes pi resume
// where it did before, and goes after 10 s.
func TestBrowserEnterEnter(t *testing.T) {
	ctx, console := browse(t)
	t.Cleanup(func() { checkConsole(t, console) })
	lib, _, url := liveServer(t, demoRoot(t))
	b := browserRun{t, ctx}
	rewindOpen := `document.querySelector('#entry-actions details[data-act="rewind"]').open && document.activeElement?.matches('#entry-actions details[data-act="rewind"] button[type="submit"]')`
	b.do("open", chromedp.Navigate(url+"/s/"+mainID+"?target=09b043aa"), chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		b.poll("panel", `document.querySelector('#entry-actions[data-ready]')?.dataset.ref === '09b043aa'`),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('tree').focus()`))
	t0 := time.Now()
	b.do("enter", chromedp.KeyEvent(kb.Enter, keyAt(t0)), b.poll("rewind open, its button focused", rewindOpen))
	b.do("enter again, 100 ms later", chromedp.KeyEvent(kb.Enter, keyAt(t0.Add(100*time.Millisecond))),
		b.poll("not taken: the form says to press it again", `(document.querySelector('#entry-actions .act-soon')?.textContent || '').includes('Press Enter again')`))
	if n := b.eval(`String(document.querySelectorAll('#act-outcomes .outcome').length)`); n != "0" {
		t.Fatalf("%s outcome cards after a double Enter", n)
	}
	if in := inspectOf(t, lib, mainID, ""); deref(in.LeafID) != "4638afcc" {
		t.Fatalf("a double Enter moved pi's leaf to %s", deref(in.LeafID))
	}
	b.do("enter, 400 ms after the first", chromedp.KeyEvent(kb.Enter, keyAt(t0.Add(400*time.Millisecond))),
		b.poll("rewound, with Undo", `(document.querySelector('#act-outcomes .outcome.ok[data-action="Rewind"] .act-msg')?.textContent || '').startsWith('Rewound') &&
			(() => { const r = document.querySelector("#act-outcomes .outcome form[data-undo] button").getBoundingClientRect(), p = document.querySelector(".conv-pane").getBoundingClientRect(); return r.width > 0 && r.top >= p.top && r.bottom <= p.bottom; })()`))
	saveShot(t, ctx, "undo-1440")
	if in := inspectOf(t, lib, mainID, ""); !slices.Contains(in.Path, "09b043aa") {
		t.Fatalf("pi resumes from %s after the rewind", deref(in.LeafID))
	}
	b.do("undo", chromedp.Click(chromedp.CSS(`#act-outcomes form[data-undo] button`)),
		b.poll("undone", `(document.querySelector('#act-outcomes .outcome.ok[data-action="Undo rewind"] .act-msg')?.textContent || '').startsWith('Undone: pi resumes from 4638afcc again')`),
		b.poll("the panel is still the selected entry's", `document.querySelector('#entry-actions[data-ready]')?.dataset.ref === '09b043aa'`))
	if in := inspectOf(t, lib, mainID, ""); !slices.Contains(in.Path, "4638afcc") || slices.Contains(in.Path, "09b043aa") {
		t.Errorf("after the undo pi resumes from %s, path %v", deref(in.LeafID), in.Path)
	}
	// Undo goes after 10 s.
	b.do("rewind again", chromedp.Evaluate[chromedp.Void](`document.getElementById('tree').focus()`),
		chromedp.KeyEvent(kb.Enter, keyAt(t0.Add(2*time.Second))), b.poll("rewind open", rewindOpen),
		chromedp.KeyEvent(kb.Enter, keyAt(t0.Add(3*time.Second))),
		b.poll("an Undo", `document.querySelectorAll('#act-outcomes form[data-undo]').length === 1`))
	began := time.Now()
	if _, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		return waitJS(ctx, tg, `document.querySelectorAll('#act-outcomes form[data-undo]').length === 0`)
	}); err != nil {
		t.Fatalf("the Undo stays: %v", err)
	}
	if d := time.Since(began); d < 9*time.Second {
		t.Errorf("the Undo went after %v, want 10 s", d)
	}
}

// TestBrowserDepthBox: the depth box shows the selected entry's depth;
// typing 10 and go selects the entry at depth 10, the tree following, and
// the conversation reads on from there along the path it was on.
func TestBrowserDepthBox(t *testing.T) {
	root := demoRoot(t)
	bigID, _ := writeBigSession(t, root, 3000)
	b, url := servePage(t, root)
	lib := openLib(t, root)
	in := inspectOf(t, lib, bigID, "")
	depth := len(in.Path)
	b.do("open at the leaf", chromedp.Navigate(url+"/s/"+bigID), chromedp.WaitVisible(chromedp.CSS("#conv .jump input")),
		b.poll("the leaf's depth", fmt.Sprintf(`document.querySelector('#conv .jump input').value === '%d' && document.querySelector('#conv .jump').innerText.includes('of %s')`, depth, views.Count(depth))))
	b.do("depth 10", chromedp.SetValue(chromedp.CSS("#conv .jump input"), "10"), chromedp.Click(chromedp.CSS("#conv .jump button")),
		b.poll("the entry at depth 10 is selected", fmt.Sprintf(`document.querySelector('#conv-inner')?.dataset.ref === '%s' && document.querySelector('#tree .row.sel')?.dataset.ref === '%s'`, in.Path[9], in.Path[9])),
		b.poll("the box says so", fmt.Sprintf(`document.querySelector('#conv .jump input').value === '10' && document.querySelector('#conv .jump').innerText.includes('of %s')`, views.Count(depth))),
		b.poll("the conversation is there, and reads on", `(() => {
			const it = document.querySelector('#msgs .item.target'), pane = document.querySelector('.conv-pane').getBoundingClientRect();
			if (!it || !document.querySelector('#msgs .more-msgs.later')) return false;
			const r = it.getBoundingClientRect();
			return r.top < pane.bottom && r.bottom > pane.top;
		})()`),
		b.poll("the address selects it", `location.search.includes('target=`+in.Path[9]+`')`))
	saveShot(t, b.ctx, "depth-1440")
	b.do("read on", chromedp.Click(chromedp.CSS("#msgs .more-msgs.later")),
		b.poll("later entries", `document.querySelectorAll('#msgs .item').length > 60`))
	b.do("depth 2000 from there", chromedp.SetValue(chromedp.CSS("#conv .jump input"), "2000"), chromedp.Click(chromedp.CSS("#conv .jump button")),
		b.poll("the entry at depth 2000", fmt.Sprintf(`document.querySelector('#conv-inner')?.dataset.ref === '%s' && document.querySelector('#tree .row.sel')?.dataset.ref === '%s'`, in.Path[1999], in.Path[1999])))
	b.do("start", chromedp.Click(chromedp.CSS("#conv .jump a")),
		b.poll("the root", fmt.Sprintf(`document.querySelector('#conv-inner')?.dataset.ref === '%s' && document.querySelector('#tree .row.sel')?.dataset.ref === '%s' && document.querySelector('#conv .jump input').value === '1'`, in.Path[0], in.Path[0])))
}
