package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/internal/suite"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/watcher"
)

// chromium returns the browser to test with; without one the test skips,
// unless PIWEB_REQUIRE_BROWSER=1 makes that a failure.
func chromium(t *testing.T) string {
	t.Helper()
	if os.Getenv("PIWEB_REQUIRE_BROWSER") != "1" {
		suite.Need(t, suite.Browser)
	}
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("PIWEB_REQUIRE_BROWSER") == "1" {
		t.Fatal("no chromium found and PIWEB_REQUIRE_BROWSER=1")
	}
	oracle.Announce("browser", "piweb: the browser tests were skipped: no chromium (install it: apt-get install chromium)")
	t.Skip("no chromium: install it (apt-get install chromium) to run the browser tests")
	return ""
}

// waitJS waits until js is truthy in the page, for as long as ctx lasts
// (a bound for a page that never gets there, not a pace). A page between
// two documents has no context to evaluate in: it is asked again.
func waitJS(ctx context.Context, tg *chromedp.Target, js string) (chromedp.Void, error) {
	var last error
	for {
		ok, err := chromedp.Evaluate[bool](`!!(`+js+`)`)(ctx, tg)
		if err == nil && ok {
			return chromedp.Void{}, nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last == nil {
				last = ctx.Err()
			}
			return chromedp.Void{}, last
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// browse starts a headless chromium and returns its context and the console messages seen so far.
// liveDemo serves the demo sessions, kept current by a watcher, for a
// browser; it returns the library and the server's URL.
func liveDemo(t *testing.T) (*library.Library, string) {
	t.Helper()
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	stop := startWatcher(t, lib)
	t.Cleanup(stop) // before the server closes, as the tests' own defer did
	return lib, ts.URL
}

func browse(t *testing.T) (context.Context, func() []chromedp.ConsoleMessage) {
	t.Helper()
	actx, acancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
		// A loaded machine can take long to start chromium: wait for it
		// (the default gives up after 20 s).
		chromedp.WSURLReadTimeout(guard),
	)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); acancel() })
	// Start it here, once: after a failed start, chromedp would start a
	// second browser on the next Run and panic closing a channel twice.
	if _, err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	var mu sync.Mutex
	var msgs []chromedp.ConsoleMessage
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			mu.Lock()
			msgs = append(msgs, m)
			mu.Unlock()
		}
	}()
	return ctx, func() []chromedp.ConsoleMessage {
		mu.Lock()
		defer mu.Unlock()
		return append([]chromedp.ConsoleMessage(nil), msgs...)
	}
}

// TestBrowser drives the demo in headless chromium: open a session, click a
// node, navigate with pi's keys, filter, search, and see a live append.
func TestBrowser(t *testing.T) {
	ctx, console := browse(t)
	root := demoRoot(t)
	bigID, _ := writeBigSession(t, root, 3000)
	lib := openLib(t, root)
	quiet := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := watcher.New(lib, watcher.Options{Debounce: 20 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(context.Background())
	defer stop()
	go w.Run(wctx)
	srv := New(lib, Options{Logger: quiet, Home: "/home/dev"})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })

	do := func(name string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, guard)
		defer cancel()
		began := time.Now()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %v", name, time.Since(began).Round(time.Millisecond))
	}
	eval := func(js string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, guard)
		defer cancel()
		s, err := chromedp.Run(sctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return s
	}
	poll := func(name, js string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := waitJS(ctx, tg, js)
			if err != nil {
				t.Errorf("waiting for %s: %s", name, js)
			}
			return chromedp.Void{}, err
		}
	}
	selected := `document.querySelector('#tree .row.sel')?.dataset.ref`
	convRef := `document.querySelector('#conv-inner')?.dataset.ref`

	// The sessions page lists the demo.
	do("sessions page", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#sessions")))
	if list := eval(`document.querySelector('#sessions').innerText`); !strings.Contains(list, "Fix stale forecast cache") || !strings.Contains(list, "forked from") {
		t.Fatalf("sessions page:\n%s", list)
	}

	// A session pi starts appears live.
	newFile := filepath.Join(root, "--home-dev-weather--", "2026-06-01T10-00-00-000Z_newsession.jsonl")
	if err := os.WriteFile(newFile, []byte(`{"type":"session","version":3,"id":"newsession","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/home/dev/weather"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"user","content":"Add Stripe payments","timestamp":1780308001000}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	do("new session row", poll("new session row", `document.querySelector('#sessions').innerText.includes('Add Stripe payments')`))

	// A hidden sessions page lets go of its stream and refetches its rows when shown.
	waitStreams := func(n int32) {
		t.Helper()
		for deadline := time.Now().Add(guard); srv.streams.Load() != n; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d live streams, want %d", srv.streams.Load(), n)
			}
		}
	}
	hide := func(hidden bool) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`Object.defineProperty(document, 'hidden', {value: %v, configurable: true});
			document.dispatchEvent(new Event('visibilitychange'))`, hidden))
	}
	waitStreams(1)
	do("hide the sessions page", hide(true))
	waitStreams(0)
	hiddenFile := filepath.Join(root, "--home-dev-weather--", "2026-06-01T11-00-00-000Z_hiddensession.jsonl")
	if err := os.WriteFile(hiddenFile, []byte(`{"type":"session","version":3,"id":"hiddensession","timestamp":"2026-06-01T11:00:00.000Z","cwd":"/home/dev/weather"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-01T11:00:01.000Z","message":{"role":"user","content":"Started while the tab was hidden","timestamp":1780311601000}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	do("show the sessions page", hide(false),
		poll("row caught up", `document.querySelector('#sessions').innerText.includes('Started while the tab was hidden')`))
	waitStreams(1)

	// Open a session: the tree selects the leaf's row, the conversation shows its path.
	do("open session", chromedp.Click(chromedp.CSS(`a.title[href="/s/`+mainID+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		poll("conversation of the highlighted row (the leaf, a session_info entry, is hidden)", convRef+` === 'c8578d56'`))

	// Click a node on the other branch: its path is highlighted, the conversation follows.
	do("click node", chromedp.Click(chromedp.CSS(`#n10 .txt`)),
		poll("conversation of the clicked node", convRef+` === '09b043aa'`))
	if path := eval(`[...document.querySelectorAll('#tree .row.onpath')].map(r => r.dataset.ref).join(' ')`); path != "512d5d6b 23a64162 a9522c9f 24c5b5e5 8875a20a 9a374789 09b043aa" {
		t.Errorf("highlighted path = %q", path)
	}
	if conv := eval(`document.querySelector('#conv').innerText`); !strings.Contains(conv, "Alternatively, could we just drop the cache entirely?") ||
		strings.Contains(conv, "Do both: key by city") {
		t.Errorf("conversation does not show the clicked node's path:\n%s", conv)
	}
	if u := eval(`location.search`); !strings.Contains(u, "target=09b043aa") {
		t.Errorf("URL %q does not deep-link the selection", u)
	}

	// pi's ctrl+x copies the selected entry's text to the clipboard.
	if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "clipboard-read"}, Setting: browser.PermissionSettingGranted, Origin: ts.URL}); err != nil {
		t.Fatal(err)
	}
	do("copy", chromedp.KeyEvent("x", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		poll("copied note", `document.querySelector('#tree-note').textContent === 'Copied to the clipboard'`),
		poll("clipboard", `navigator.clipboard.readText().then((t) => t === 'Alternatively, could we just drop the cache entirely?')`))

	// pi's shift+T shows when each label was set.
	ltShown := `[...document.querySelectorAll('#tree .row .lt')].filter((e) => e.offsetParent !== null && e.textContent.trim() !== '').length`
	if n := eval(`String(` + ltShown + `)`); n != "0" {
		t.Errorf("%s label times shown before shift+T", n)
	}
	do("label times", chromedp.KeyEvent("T", chromedp.KeyModifiers(chromedp.ModifierShift)),
		poll("label times shown", ltShown+` === 3 && document.querySelector('#tree-count').textContent.includes('[+label time]')`))
	do("label times off", chromedp.KeyEvent("T", chromedp.KeyModifiers(chromedp.ModifierShift)),
		poll("label times hidden", ltShown+` === 0 && !document.querySelector('#tree-count').textContent.includes('[+label time]')`))

	// The model context tab. The tabs come with the swapped conversation:
	// click them once htmx has settled the swap and taken them over, as a
	// person would (a click before that follows the link, a full page load).
	settled := ` && !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')`
	do("context tab", poll("conversation settled", `true`+settled), chromedp.Click(chromedp.CSS(`.tab[href*="view=context"]`)),
		poll("model context", `document.querySelector('#conv').innerText.includes('What the model sees')`+settled),
		poll("the address says so", `location.search.includes('view=context')`))
	do("conversation tab", chromedp.Click(chromedp.CSS(`.tab:not([href*="view=context"])`)),
		poll("conversation", `!document.querySelector('#conv').innerText.includes('What the model sees')`+settled),
		poll("the address says so", `!location.search.includes('view=context')`))

	// pi's keys: down, up, fold (ctrl+left), unfold (ctrl+right), filters, typing to search.
	do("down", chromedp.KeyEvent(kb.ArrowDown), poll("selection moved down", selected+` === '4ee5d1f8'`),
		poll("conversation followed", convRef+` === '4ee5d1f8'`))
	do("up", chromedp.KeyEvent(kb.ArrowUp), poll("selection moved up", selected+` === '09b043aa'`))
	do("fold", chromedp.KeyEvent(kb.ArrowLeft, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		poll("folded", `!document.getElementById('n11') && document.getElementById('n10').hasAttribute('data-folded')`))
	do("unfold", chromedp.KeyEvent(kb.ArrowRight, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		poll("unfolded", `!!document.getElementById('n11') && !document.getElementById('n10').hasAttribute('data-folded')`))
	do("user-only filter", chromedp.KeyEvent("u", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		poll("user-only rows", `document.querySelector('.filter.on').dataset.filter === 'user-only' && [...document.querySelectorAll('#tree .row')].every(r => r.classList.contains('k-user'))`))
	do("default filter", chromedp.KeyEvent("d", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		poll("default rows", `document.querySelector('.filter.on').dataset.filter === 'default' && !!document.querySelector('#tree .row.k-tool')`))
	do("search", chromedp.KeyEvent("widget"),
		poll("search results", `document.querySelector('#tree-q').value === 'widget' && document.querySelectorAll('#tree .row').length < 6 && document.querySelector('#tree').innerText.includes('Here is the widget now')`))
	do("clear search", chromedp.KeyEvent(kb.Escape),
		poll("all rows back", `document.querySelector('#tree-q').value === '' && document.querySelectorAll('#tree .row').length > 20`))

	// Select the leaf again, then pi appends a turn: it shows up live, the leaf marker moves, the selection follows.
	do("select leaf row", chromedp.Click(chromedp.CSS(`#tree .row.leaf .txt`)), poll("leaf row selected", selected+` === 'c8578d56'`))
	file := sessionFile(t, lib, mainID)
	appendLines(t, file,
		`{"type":"message","id":"feed0001","parentId":"4638afcc","timestamp":"2026-05-12T09:00:00.000Z","message":{"role":"user","content":"Now ship it","timestamp":1778576400000}}`,
		`{"type":"message","id":"feed0002","parentId":"feed0001","timestamp":"2026-05-12T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Shipped."}],"provider":"anthropic","model":"claude-opus-4-5","usage":{"totalTokens":10,"cost":{"total":0.01}},"stopReason":"stop","timestamp":1778576402000}}`)
	do("live append",
		poll("new rows", `!!document.querySelector('#tree .row[data-ref="feed0001"]') && document.querySelector('#tree .row.leaf')?.dataset.ref === 'feed0002'`),
		poll("one leaf marker", `document.querySelectorAll('#tree .row.leaf').length === 1`),
		poll("stats", `document.querySelector('#session-stats').innerText.includes('45 entries')`),
		poll("selection follows the leaf", selected+` === 'feed0002' && `+convRef+` === 'feed0002'`))

	// Text with CR in it (a message pasted from Windows, a name made to look
	// like an event field) travels the stream whole: later rows and the leaf
	// marker still arrive.
	appendLines(t, file,
		`{"type":"message","id":"crlf0001","parentId":"feed0002","timestamp":"2026-05-12T09:00:10.000Z","message":{"role":"user","content":"line one\r\nline two\revent: gone\r\ndata: x","timestamp":1778576410000}}`,
		`{"type":"session_info","id":"crlf0002","parentId":"crlf0001","timestamp":"2026-05-12T09:00:11.000Z","name":"A\revent: gone"}`,
		`{"type":"message","id":"crlf0003","parentId":"crlf0002","timestamp":"2026-05-12T09:00:12.000Z","message":{"role":"assistant","content":[{"type":"text","text":"After the CR."}],"provider":"anthropic","model":"claude-opus-4-5","stopReason":"stop","timestamp":1778576412000}}`)
	do("text with CR, live",
		poll("rows after the CR", `!!document.querySelector('#tree .row[data-ref="crlf0001"]') && !!document.querySelector('#tree .row[data-ref="crlf0003"]')`),
		poll("leaf marker after the CR", `document.querySelector('#tree .row.leaf')?.dataset.ref === 'crlf0003' && document.querySelectorAll('#tree .row.leaf').length === 1`),
		poll("the CR message's row", `document.querySelector('#tree .row[data-ref="crlf0001"]').innerText.includes('line two')`),
		poll("the page is still live", `document.querySelector('#tree-count').innerText.indexOf('no longer on disk') < 0`))

	// A hidden tab lets go of its stream (six connections per host): pi
	// appends meanwhile; shown again, the page catches up with rows and counts.
	waitStreams(1)
	do("hide the page", hide(true))
	waitStreams(0)
	appendLines(t, file,
		`{"type":"message","id":"feed0003","parentId":"crlf0003","timestamp":"2026-05-12T09:01:00.000Z","message":{"role":"user","content":"Appended while hidden","timestamp":1778576460000}}`)
	waitIndexed(t, lib, mainID, "feed0003") // the library has it while the page has no stream
	do("show the page", hide(false),
		poll("rows caught up", `!!document.querySelector('#tree .row[data-ref="feed0003"]') && document.querySelector('#tree .row.leaf')?.dataset.ref === 'feed0003'`),
		poll("stats caught up", `document.querySelector('#session-stats').innerText.includes('49 entries')`))
	waitStreams(1)

	// A long session: the tree loads more rows as it scrolls, the conversation loads earlier pages on demand.
	do("big session", chromedp.Navigate(ts.URL+"/s/"+bigID), chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")))
	before := eval(`String(document.querySelectorAll('#tree .row').length)`)
	do("scroll up the tree", chromedp.Evaluate[chromedp.Void](`document.querySelector('#tree').scrollTop = 0`),
		poll("earlier rows", `document.querySelectorAll('#tree .row').length > `+before))
	items := eval(`String(document.querySelectorAll('#conv .item').length)`)
	do("earlier messages", chromedp.Click(chromedp.CSS(`#conv .more-msgs`)),
		poll("earlier items", `document.querySelectorAll('#conv .item').length > `+items))

	for _, m := range console() {
		if m.IsException() || m.Type == chromedp.ConsoleError || strings.Contains(m.Text, "Content Security Policy") {
			t.Errorf("browser console: %s (%s:%d)", m, m.URL, m.Line)
		}
	}
}

// waitIndexed waits until the library holds entry id of session key.
func waitIndexed(t *testing.T, lib *library.Library, key, id string) {
	t.Helper()
	ch, cancel := lib.Subscribe()
	defer cancel()
	has := func() bool {
		found := false
		_ = lib.View(key, func(s *sessions.Session) error { _, found = s.Lookup(id); return nil })
		return found
	}
	timeout := time.After(guard)
	for !has() {
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("the library never indexed %s", id)
		}
	}
}
