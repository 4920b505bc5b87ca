package web

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// browserRun drives one headless chromium tab, failing the test on errors.
type browserRun struct {
	t   *testing.T
	ctx context.Context
}

func (b browserRun) do(name string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, guard)
	defer cancel()
	began := time.Now()
	if err := chromedp.Do(ctx, steps...); err != nil {
		var dom string
		dctx, dcancel := context.WithTimeout(b.ctx, 5*time.Second)
		dom, _ = chromedp.Run(dctx, chromedp.Evaluate[string](`(document.querySelector('#act-outcomes')?.outerHTML || '') + ' | ' + document.querySelectorAll('#act-outcomes .outcome').length + ' cards; ' + Array.from(document.querySelectorAll('#entry-actions details')).map(d => d.dataset.act + ':' + d.open).join(',') + ' ready=' + document.querySelector('#entry-actions').hasAttribute('data-ready') + ' conv=' + document.querySelector('#conv-inner')?.dataset.ref`))
		dcancel()
		b.t.Fatalf("%s: %v\npage: %s", name, err, dom)
	}
	b.t.Logf("%s: %v", name, time.Since(began).Round(time.Millisecond))
}

func (b browserRun) eval(js string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, guard)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return s
}

func (b browserRun) poll(name, js string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := waitJS(ctx, tg, js)
		if err != nil {
			b.t.Errorf("waiting for %s: %s", name, js)
		}
		return chromedp.Void{}, err
	}
}

// TestBrowserActions drives the actions panel in headless chromium: the
// session opens at a leaf the default filter hides (a session_info entry),
// and the panel acts on the row the page highlights, naming it; label an
// entry with pi's shift+L and see the label in the tree, the header and the
// card; rewind to an earlier entry and see the leaf marker move; fork and
// save a share; every outcome stays on the page until dismissed.
func TestBrowserActions(t *testing.T) {
	ctx, console := browse(t)
	lib, url := liveDemo(t)
	b := browserRun{t, ctx}
	panelRef := `document.querySelector('#entry-actions[data-ready]')?.dataset.ref` // once htmx has processed it
	rowLabel := func(ref string) string {
		return `document.querySelector('#tree .row[data-ref="` + ref + `"] .lbl')?.textContent`
	}

	b.do("open session", chromedp.Navigate(url+"/s/"+mainID),
		chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		b.poll("panel of the highlighted row, not the hidden leaf", panelRef+` === 'c8578d56' && document.querySelector('#tree .row.sel').dataset.ref === 'c8578d56'`),
		b.poll("the panel names its entry", `document.querySelector('#entry-actions .act-target code').textContent === 'c8578d56' && document.querySelector('#entry-actions .act-target .act-preview').textContent.startsWith('Both callers')`))

	// Label the highlighted row through the panel: it lands on that row's entry, not on the hidden session_info leaf.
	b.do("label the leaf row", chromedp.KeyEvent("L", chromedp.KeyModifiers(chromedp.ModifierShift)),
		b.poll("label field of the row", panelRef+` === 'c8578d56' && document.activeElement?.name === 'label'`),
		chromedp.KeyEvent("shipped"), chromedp.KeyEvent(kb.Enter),
		b.poll("label card", `(document.querySelector('#act-outcomes .outcome.ok[data-action="Label"] code')?.textContent) === 'c8578d56'`),
		b.poll("label in the tree", rowLabel("c8578d56")+` === '[shipped] '`),
		b.poll("label on the message card", `document.querySelector('#lm'+document.querySelector('#tree .row[data-ref="c8578d56"]').dataset.p)?.textContent.trim() === '[shipped]'`))
	if got := labelOf(inspectOf(t, lib, mainID, ""), "c8578d56"); got != "shipped" {
		t.Errorf("the file says the highlighted entry's label is %q", got)
	}
	if got := labelOf(inspectOf(t, lib, mainID, ""), "4638afcc"); got != "" {
		t.Errorf("the hidden leaf got the label %q", got)
	}
	// Clicked from script: a mouse click lands by coordinates, and the cards move as the page settles.
	b.do("dismiss", chromedp.Evaluate[chromedp.Void](`document.querySelector('#act-outcomes .outcome [data-dismiss]').click()`),
		b.poll("card gone", `!document.querySelector('#act-outcomes .outcome')`))
	// shift+L then Esc: the field closes and the keys go back to the tree.
	b.do("shift+L and esc", chromedp.KeyEvent("L", chromedp.KeyModifiers(chromedp.ModifierShift)),
		b.poll("field open", `document.activeElement?.name === 'label'`),
		chromedp.KeyEvent(kb.Escape),
		b.poll("closed, keys back to the tree", `!document.querySelector('#entry-actions details[open]') && document.activeElement?.id === 'tree'`))

	// Select an entry, press shift+L: the label field opens filled with its label; a new one shows in the tree.
	b.do("select", chromedp.Click(chromedp.CSS(`#n10 .txt`)), b.poll("panel follows", panelRef+` === '09b043aa'`))
	b.do("shift+L", chromedp.KeyEvent("L", chromedp.KeyModifiers(chromedp.ModifierShift)),
		b.poll("label field open", `!!document.querySelector('#entry-actions details[open]')`),
		b.poll("label field focused", `document.activeElement?.name === 'label'`),
		b.poll("label field filled", `document.activeElement.value === 'rejected idea'`))
	if q := b.eval(`document.querySelector('#tree-q').value`); q != "" {
		t.Errorf("shift+L typed %q into the tree search", q)
	}
	b.do("type label", chromedp.KeyEvent("retry later"), chromedp.KeyEvent(kb.Enter),
		b.poll("saved", `document.querySelector('#act-outcomes .outcome.ok .act-msg')?.textContent === 'Label saved.'`),
		b.poll("label in the tree", rowLabel("09b043aa")+` === '[retry later] '`),
		b.poll("label in the header", `document.querySelector('#conv-label').textContent.trim() === '[retry later]'`))
	if got := labelOf(inspectOf(t, lib, mainID, ""), "09b043aa"); got != "retry later" {
		t.Errorf("the file says the label is %q", got)
	}

	// Rewind to an earlier entry: the leaf marker moves there.
	b.do("select earlier", chromedp.Click(chromedp.CSS(`#n4 .txt`)), b.poll("panel follows", panelRef+` === 'a9522c9f'`))
	b.do("rewind", chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="rewind"] > summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#entry-actions details[data-act="rewind"] textarea`)),
		chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="rewind"] button[type="submit"]`)),
		b.poll("rewound", `(document.querySelector('#act-outcomes .outcome.ok[data-action="Rewind"] .act-msg')?.textContent || '').startsWith('Rewound')`),
		b.poll("leaf marker moved", `document.querySelectorAll('#tree .row.leaf').length === 1 && document.querySelector('#tree .row.leaf').dataset.ref === 'a9522c9f'`))
	in := inspectOf(t, lib, mainID, "")
	if len(in.Path) < 2 || in.Path[len(in.Path)-2] != "a9522c9f" {
		t.Errorf("pi would resume from %s, not under a9522c9f", deref(in.LeafID))
	}

	// A stale page: the panel still holds the old leaf when pi moves on; the refusal shows inline.
	b.do("select another", chromedp.Click(chromedp.CSS(`#n3 .txt`)), b.poll("panel follows", panelRef+` === '23a64162'`),
		chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="rewind"] > summary`)))
	file := sessionFile(t, lib, mainID)
	appendLines(t, file, `{"type":"message","id":"feed0001","parentId":"`+deref(in.LeafID)+`","timestamp":"2026-05-12T09:00:00.000Z","message":{"role":"user","content":"Carry on","timestamp":1778576400000}}`)
	b.do("live append", b.poll("new row", `!!document.querySelector('#tree .row[data-ref="feed0001"]')`))
	b.do("stale rewind", chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="rewind"] button[type="submit"]`)),
		b.poll("refusal shown", `(document.querySelector('#act-outcomes .outcome.err[data-action="Rewind"] .act-msg')?.textContent || '').includes('changed since this page showed it')`),
		b.poll("the refused form stays open", `!!document.querySelector('#entry-actions[data-ready] details[data-act="rewind"][open]')`))

	// Fork: the new file and the command that resumes it.
	b.do("fork", chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="fork"] > summary`)),
		b.poll("only the fork form open", `document.querySelectorAll('#entry-actions details[open]').length === 1 && !!document.querySelector('#entry-actions details[data-act="fork"][open]')`),
		chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="fork"] button[type="submit"]`)),
		b.poll("fork command", `(document.querySelector('#act-outcomes .outcome[data-action="Fork"] .copy-line input')?.value || '').startsWith("pi --session '/")`))
	// The fork's outcome stays while the user moves on to another entry.
	b.do("select after fork", chromedp.Click(chromedp.CSS(`#n10 .txt`)), b.poll("panel follows", panelRef+` === '09b043aa'`),
		b.poll("fork card still there", `!!document.querySelector('#act-outcomes .outcome[data-action="Fork"] .copy-line input')`))
	b.do("select back", chromedp.Click(chromedp.CSS(`#n3 .txt`)), b.poll("panel follows back", panelRef+` === '23a64162'`))

	// Share: saving uses the form's choices.
	b.do("share", chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="share"] > summary`)),
		chromedp.Click(chromedp.CSS(`#entry-actions input[name="format"][value="html"]`)),
		chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="share"] button[data-save]`)),
		b.poll("saved", `(document.querySelector('#act-outcomes .outcome[data-action="Save"] .copy-line input')?.value || '').endsWith('-23a64162-redacted.html')`))
	saved := b.eval(`document.querySelector('#act-outcomes .outcome[data-action="Save"] .copy-line input').value`)
	if page, err := os.ReadFile(saved); err != nil || !strings.Contains(string(page), "Redacted before export: secrets.") {
		t.Errorf("saved export %s: %v", saved, err)
	}
	var forks []string
	for _, m := range lib.List() {
		if m.ParentSession == file {
			forks = append(forks, m.File)
		}
	}
	if len(forks) != 2 { // the demo's own fork, and ours
		t.Errorf("forks of the session in the library: %v, want two", forks)
	}

	checkConsole(t, console)
}
