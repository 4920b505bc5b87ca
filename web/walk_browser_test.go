package web

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
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
