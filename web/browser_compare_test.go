package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserCompare picks two entries three ways ("compare with…" then a
// click, shift+click, shift+C then Enter) and lands on their comparison;
// the session header's statistics open and the files tab lists the change.
func TestBrowserCompare(t *testing.T) {
	ctx, console := browse(t)
	srv := newServer(t, openLib(t, demoRoot(t)), nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	b := browserRun{t, ctx}
	onCompare := func(a, bb string) string {
		return `location.pathname.endsWith('/compare') && location.search === '?a=` + a + `&b=` + bb + `' && !!document.querySelector('.cmp-strip')`
	}

	b.do("open the fixed entry", chromedp.Navigate(ts.URL+"/s/"+mainID+"?target=b82f83d6"),
		chromedp.WaitVisible(chromedp.CSS("#conv-inner[data-ref='b82f83d6']")))
	b.do("compare with…", chromedp.Click(chromedp.CSS(`#conv-inner [data-compare-pick]`)),
		b.poll("pick mode says what to do", `document.body.dataset.comparePick === 'b82f83d6' && document.getElementById('tree-note').textContent.includes('Compare b82f83d6 with')`))
	b.do("click the other branch", chromedp.Click(chromedp.CSS(`#tree .row[data-ref="4ee5d1f8"] .txt`)))
	b.do("the comparison", chromedp.WaitVisible(chromedp.CSS(".cmp-strip")), b.poll("the comparison", onCompare("b82f83d6", "4ee5d1f8")),
		b.poll("both sides' turns", `document.querySelectorAll('.cmp-turn .side-a .item').length > 0 && document.querySelectorAll('.cmp-turn .side-b .item').length > 0`))

	b.do("back", chromedp.Navigate(ts.URL+"/s/"+mainID+"?target=b82f83d6"),
		chromedp.WaitVisible(chromedp.CSS("#conv-inner[data-ref='b82f83d6']")),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#tree .row[data-ref="09b043aa"] .txt').dispatchEvent(new MouseEvent('click', {bubbles: true, shiftKey: true}))`))
	b.do("shift+click compares at once", chromedp.WaitVisible(chromedp.CSS(".cmp-strip")), b.poll("on compare", onCompare("b82f83d6", "09b043aa")))

	b.do("keys", chromedp.Navigate(ts.URL+"/s/"+mainID+"?target=b82f83d6"),
		chromedp.WaitVisible(chromedp.CSS("#tree .row.sel[data-ref='b82f83d6']")),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('tree').focus()`),
		chromedp.KeyEvent("C", chromedp.KeyModifiers(chromedp.ModifierShift)),
		b.poll("pick mode", `document.body.dataset.comparePick === 'b82f83d6'`),
		chromedp.KeyEvent(kb.ArrowUp),
		b.poll("moved", `document.querySelector('#tree .row.sel')?.dataset.ref === '593f9271'`),
		chromedp.KeyEvent(kb.Enter))
	b.do("enter compares with the selected row", chromedp.WaitVisible(chromedp.CSS(".cmp-strip")), b.poll("on compare", onCompare("b82f83d6", "593f9271")))

	b.do("escape leaves pick mode", chromedp.Navigate(ts.URL+"/s/"+mainID+"?target=b82f83d6"),
		chromedp.WaitVisible(chromedp.CSS("#tree .row.sel[data-ref='b82f83d6']")),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('tree').focus()`),
		chromedp.KeyEvent("C", chromedp.KeyModifiers(chromedp.ModifierShift)),
		b.poll("pick mode", `document.body.dataset.comparePick === 'b82f83d6'`),
		chromedp.KeyEvent(kb.Escape),
		b.poll("no pick mode", `!document.body.dataset.comparePick && location.pathname.endsWith('`+mainID+`')`))

	b.do("header statistics", chromedp.Click(chromedp.CSS(`#session-stats > summary`)),
		b.poll("pi's counts", `(() => { const p = document.querySelector('#session-stats[open] .stats-pop'); return !!p && p.offsetHeight > 0 && p.textContent.includes('Cache read') && p.textContent.includes('claude-opus-4-5'); })()`))
	for _, w := range []int64{390, 1440} {
		b.do("stats at a width", chromedp.EmulateViewport(w, 900), chromedp.Navigate(ts.URL+"/s/"+mainID),
			chromedp.WaitVisible(chromedp.CSS("#session-stats > summary")),
			chromedp.Click(chromedp.CSS(`#session-stats > summary`)),
			b.poll("open, inside the window", `(() => { const r = document.querySelector('#session-stats .stats-pop').getBoundingClientRect(); return r.height > 0 && r.left >= 0 && r.right <= innerWidth; })()`))
		saveShot(t, ctx, fmt.Sprintf("stats-%d", w))
	}
	b.do("files tab", chromedp.Navigate(ts.URL+"/s/"+mainID+"?target=b82f83d6&view=files"),
		chromedp.WaitVisible(chromedp.CSS(".files .file-list")),
		chromedp.Click(chromedp.CSS(`.file-list summary`)),
		b.poll("the change shows as a diff", `!!document.querySelector('.file-list details[open] pre.diff .add')`))
	checkConsole(t, console)
}

// saveShot saves a screenshot of the page as name.png in $PIWEB_SHOTS, when set.
func saveShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("PIWEB_SHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	}
	if err != nil {
		t.Error(err)
	}
}
