package web

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserViewingAndRewind: viewing another path is not where pi
// resumes, and the page says so in words and in the tree's markers; Enter
// (pi's /tree key) opens "Rewind here" for the highlighted entry with its
// button focused, and a second Enter makes pi resume there.
func TestBrowserViewingAndRewind(t *testing.T) {
	ctx, console := browse(t)
	lib, url := liveDemo(t)
	b := browserRun{t, ctx}
	panelRef := `document.querySelector('#entry-actions[data-ready]')?.dataset.ref`

	b.do("open a path pi does not resume from", chromedp.Navigate(url+"/s/"+mainID+"?leaf=09b043aa"),
		chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		b.poll("the note names the viewed path and where pi resumes", `(() => {
			const n = document.querySelector('.viewing-note');
			return !!n && n.textContent.includes('Viewing the path to 09b043aa') && n.textContent.includes('pi resumes at c8578d56'); // the row the tree shows for pi's leaf (a hidden session_info entry)
		})()`),
		b.poll("the viewed leaf is marked as viewed, pi's leaf as active", `(() => {
			const v = document.querySelector('#tree .row[data-ref="09b043aa"] .here'), a = Array.from(document.querySelectorAll('#tree .here')).filter(h => h.textContent.includes('← active'));
			return v && v.textContent === ' ← viewing' && v.classList.contains('viewing') && a.length === 1 && a[0].closest('.row').dataset.ref === 'c8578d56';
		})()`),
		b.poll("panel", panelRef+` === '09b043aa'`))

	t0 := time.Now() // the keys are dated: a second Enter within 300 ms of the first is not a yes
	b.do("enter opens rewind, focused", chromedp.Evaluate[chromedp.Void](`document.getElementById('tree').focus()`),
		chromedp.KeyEvent(kb.Enter, keyAt(t0)),
		b.poll("rewind form open with its button focused", `document.querySelector('#entry-actions details[data-act="rewind"]').open && document.activeElement?.matches('#entry-actions details[data-act="rewind"] button[type="submit"]')`))
	b.do("second enter rewinds", chromedp.KeyEvent(kb.Enter, keyAt(t0.Add(time.Second))),
		b.poll("rewound", `(document.querySelector('#act-outcomes .outcome.ok[data-action="Rewind"] .act-msg')?.textContent || '').startsWith('Rewound')`))
	in := inspectOf(t, lib, mainID, "")
	if !slices.Contains(in.Path, "09b043aa") {
		t.Errorf("pi would resume from %s, whose path %v does not hold 09b043aa", deref(in.LeafID), in.Path)
	}

	// Back on pi's own path (esc): no note, one marker.
	b.do("esc", chromedp.Evaluate[chromedp.Void](`document.getElementById('tree').focus()`), chromedp.KeyEvent(kb.Escape),
		b.poll("no viewed path", `!document.querySelector('#tree .here.viewing') && document.querySelectorAll('#tree .row.leaf').length === 1`))
	checkConsole(t, console)
}

// checkConsole fails the test on script errors and CSP reports in the browser's console.
func checkConsole(t *testing.T, console func() []chromedp.ConsoleMessage) {
	t.Helper()
	for _, m := range console() {
		if m.IsException() || m.Type == chromedp.ConsoleError || strings.Contains(m.Text, "Content Security Policy") {
			t.Errorf("browser console: %s (%s:%d)", m, m.URL, m.Line)
		}
	}
}
