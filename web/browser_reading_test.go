package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserReading: the thinking and tool-output toggles change the
// conversation and are remembered across pages (keys t and o with the
// conversation focused, which no longer type into the tree's search); each
// message has a link to copy; an image opens larger on click.
func TestBrowserReading(t *testing.T) {
	ctx, console := browse(t)
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	b := browserRun{t, ctx}
	thinkingOpen := `Array.from(document.querySelectorAll('#conv details.thinking:not(.extra)'))`

	b.do("open", chromedp.EmulateViewport(1440, 900), chromedp.Navigate(ts.URL+"/s/"+mainID+"?target=4ee5d1f8"),
		chromedp.WaitVisible(chromedp.CSS("#conv-inner")),
		b.poll("thinking collapsed", thinkingOpen+`.length > 0 && `+thinkingOpen+`.every(d => !d.open)`),
		b.poll("label", `document.querySelector('[data-reading="thinking"]').textContent === 'thinking: collapsed'`))
	b.do("expand thinking", chromedp.Click(chromedp.CSS(`[data-reading="thinking"]`)),
		b.poll("every thinking block open", thinkingOpen+`.every(d => d.open && getComputedStyle(d).display !== 'none')`))
	b.do("hide thinking", chromedp.Click(chromedp.CSS(`[data-reading="thinking"]`)),
		b.poll("thinking hidden", thinkingOpen+`.every(d => getComputedStyle(d).display === 'none')`))
	b.do("full tool output", chromedp.Click(chromedp.CSS(`[data-reading="tools"]`)),
		b.poll("label", `document.querySelector('[data-reading="tools"]').textContent === 'tool output: full'`))

	// Another page of the session remembers both.
	b.do("reload elsewhere", chromedp.Navigate(ts.URL+"/s/"+mainID+"?target=8875a20a"),
		chromedp.WaitVisible(chromedp.CSS("#conv-inner")),
		b.poll("remembered", `document.querySelector('[data-reading="thinking"]').textContent === 'thinking: hidden' && document.querySelector('[data-reading="tools"]').textContent === 'tool output: full'`),
		b.poll("long outputs in full", `document.querySelectorAll('#conv details.expand').length > 0 && Array.from(document.querySelectorAll('#conv details.expand')).every(d => d.open)`))
	b.do("keys in the conversation", chromedp.Evaluate[chromedp.Void](`document.querySelector('.conv-pane').focus()`),
		chromedp.KeyEvent("o"), chromedp.KeyEvent("t"),
		b.poll("o and t cycled", `document.querySelector('[data-reading="tools"]').textContent === 'tool output: previews' && document.querySelector('[data-reading="thinking"]').textContent === 'thinking: collapsed'`),
		b.poll("previews again", `Array.from(document.querySelectorAll('#conv details.expand')).every(d => !d.open)`))
	if q := b.eval(`document.querySelector('#tree-q').value`); q != "" {
		t.Errorf("keys in the conversation typed %q into the tree's search", q)
	}
	if got := b.eval(`String(Array.from(document.querySelectorAll('#conv article.item:not(.i-setting)')).every(a => (a.querySelector('[data-copy-link]')?.dataset.copyLink || '').endsWith('?target=' + encodeURIComponent(a.querySelector('.jump')?.textContent))))`); got != "true" {
		t.Errorf("not every message has a copy-link to itself")
	}
	if got := b.eval(`document.querySelector('#conv [data-copy-link]')?.dataset.copyLink || ''`); !strings.HasPrefix(got, "/s/"+mainID+"?target=") {
		t.Errorf("copy-link: %q", got)
	}

	b.do("image", chromedp.Navigate(ts.URL+"/s/"+mainID+"?target=eb06327f"),
		chromedp.WaitVisible(chromedp.CSS("#conv .img img")),
		chromedp.Click(chromedp.CSS("#conv .item.target .img img")),
		b.poll("larger view", `!!document.querySelector('dialog.lightbox[open] img')`),
		chromedp.Click(chromedp.CSS("dialog.lightbox")),
		b.poll("closed", `!document.querySelector('dialog.lightbox')`))
	checkConsole(t, console)
}

// TestBrowserPhonePanes: at a phone's width the session page shows one pane
// at a time, opening on the tree (or on the conversation when the address
// names an entry) at the top of the page; a tap on a row reads it.
func TestBrowserPhonePanes(t *testing.T) {
	ctx, console := browse(t)
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	b := browserRun{t, ctx}
	visible := func(sel string) string {
		return `getComputedStyle(document.querySelector('` + sel + `')).display !== 'none'`
	}
	atTop := `window.scrollY === 0 && document.documentElement.scrollWidth <= document.documentElement.clientWidth`

	b.do("open on a phone", chromedp.EmulateViewport(390, 800), chromedp.Navigate(ts.URL+"/s/"+mainID),
		chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		b.poll("tree shown, conversation not", visible(".tree-pane")+` && !(`+visible(".conv-pane")+`)`),
		b.poll("page at its top, nothing off the side", atTop),
		b.poll("the selected row in view", `(() => { const r = document.querySelector('#tree .row.sel').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`))
	b.do("tap a row", chromedp.Click(chromedp.CSS(`#n10 .txt`)),
		b.poll("conversation shown", visible(".conv-pane")+` && !(`+visible(".tree-pane")+`)`),
		b.poll("of that row", `document.querySelector('#conv-inner')?.dataset.ref === '09b043aa'`),
		b.poll("page at its top", atTop))
	b.do("back to the tree", chromedp.Click(chromedp.CSS(`.pane-switch [data-pane="tree"]`)),
		b.poll("tree shown", visible(".tree-pane")+` && document.querySelector('.pane-switch [data-pane="tree"]').getAttribute('aria-pressed') === 'true'`))

	b.do("a link to an entry opens on it", chromedp.Navigate(ts.URL+"/s/"+mainID+"?target=8640c87c"),
		chromedp.WaitVisible(chromedp.CSS("#conv-inner")),
		b.poll("conversation shown", visible(".conv-pane")),
		b.poll("page at its top", atTop))
	sctx, cancel := context.WithTimeout(ctx, guard)
	defer cancel()
	if _, err := chromedp.Run(sctx, chromedp.EmulateViewport(1440, 900)); err != nil {
		t.Fatal(err)
	}
	if got := b.eval(`String(` + visible(".tree-pane") + ` && ` + visible(".conv-pane") + ` && !` + visible(".pane-switch") + `)`); got != "true" {
		t.Errorf("at 1440 px both panes show and the switch hides: %s", got)
	}
	checkConsole(t, console)
}

// TestBrowserActionButtonsStay: opening any of the actions' forms leaves
// every action button where it was, at a desktop's width and a phone's.
func TestBrowserActionButtonsStay(t *testing.T) {
	ctx, console := browse(t)
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	b := browserRun{t, ctx}
	where := `JSON.stringify(Array.from(document.querySelectorAll('#entry-actions .act > summary')).map(s => { const r = s.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.top - document.querySelector('#entry-actions').getBoundingClientRect().top)]; }))`
	for _, w := range []int64{1440, 390} {
		b.do("open", chromedp.EmulateViewport(w, 900), chromedp.Navigate(ts.URL+"/s/"+mainID+"?target=09b043aa"),
			chromedp.WaitVisible(chromedp.CSS("#entry-actions[data-ready] .act > summary")))
		before := b.eval(where)
		for _, act := range []string{"label", "rewind", "fork", "share"} {
			b.do("open "+act, chromedp.Evaluate[chromedp.Void](`document.querySelector('#entry-actions details[data-act="`+act+`"] > summary').click()`),
				b.poll(act+" open", `document.querySelector('#entry-actions details[data-act="`+act+`"]').open && getComputedStyle(document.querySelector('#entry-actions details[data-act="`+act+`"] .act-form')).display !== 'none'`))
			if after := b.eval(where); after != before {
				t.Errorf("%d px: opening %s moved the buttons: %s, then %s", w, act, before, after)
			}
			if dir := os.Getenv("PIWEB_SHOTS"); dir != "" {
				png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err == nil {
					err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("actions-%s-%d.png", act, w)), png, 0o644)
				}
				if err != nil {
					t.Error(err)
				}
			}
		}
	}
	checkConsole(t, console)
}
