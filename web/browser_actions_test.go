package web

import (
	"context"
	"net/http/httptest"
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
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	began := time.Now()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", name, err)
	}
	b.t.Logf("%s: %v", name, time.Since(began).Round(time.Millisecond))
}

func (b browserRun) eval(js string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return s
}

func (b browserRun) poll(name, js string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(10*time.Second))(ctx, tg)
		if err != nil {
			b.t.Errorf("waiting for %s: %s", name, js)
		}
		return chromedp.Void{}, err
	}
}

// TestBrowserActions drives the actions panel in headless chromium: label
// an entry with pi's shift+L and see the label in the tree, rewind to an
// earlier entry and see the leaf marker move, fork and save a share.
func TestBrowserActions(t *testing.T) {
	ctx, console := browse(t)
	lib := openLib(t, demoRoot(t))
	_, stop := startWatcher(t, lib)
	defer stop()
	srv := newServer(t, lib, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	b := browserRun{t, ctx}
	panelRef := `document.querySelector('#entry-actions[data-ready]')?.dataset.ref` // once htmx has processed it
	rowLabel := func(ref string) string {
		return `document.querySelector('#tree .row[data-ref="` + ref + `"] .lbl')?.textContent`
	}

	b.do("open session", chromedp.Navigate(ts.URL+"/s/"+mainID),
		chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		b.poll("panel of the leaf", panelRef+` === '4638afcc'`))

	// shift+L on the leaf's row labels that row's entry, not the hidden session_info leaf the page opened at.
	b.do("shift+L on the leaf row", chromedp.KeyEvent("L", chromedp.KeyModifiers(chromedp.ModifierShift)),
		b.poll("label field of the row", panelRef+` === 'c8578d56' && document.activeElement?.name === 'label'`),
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
		b.poll("saved", `document.querySelector('#entry-actions[data-ready] .act-msg.ok')?.textContent === 'Label saved.'`),
		b.poll("label in the tree", rowLabel("09b043aa")+` === '[retry later] '`),
		b.poll("label in the header", `document.querySelector('#conv-label').textContent.trim() === '[retry later]'`))
	if got := labelOf(inspect(t, lib, mainID, ""), "09b043aa"); got != "retry later" {
		t.Errorf("the file says the label is %q", got)
	}

	// Rewind to an earlier entry: the leaf marker moves there.
	b.do("select earlier", chromedp.Click(chromedp.CSS(`#n4 .txt`)), b.poll("panel follows", panelRef+` === 'a9522c9f'`))
	b.do("rewind", chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="rewind"] > summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#entry-actions details[data-act="rewind"] textarea`)),
		chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="rewind"] button[type="submit"]`)),
		b.poll("rewound", `(document.querySelector('#entry-actions[data-ready] .act-msg.ok')?.textContent || '').startsWith('Rewound')`),
		b.poll("leaf marker moved", `document.querySelectorAll('#tree .row.leaf').length === 1 && document.querySelector('#tree .row.leaf').dataset.ref === 'a9522c9f'`))
	in := inspect(t, lib, mainID, "")
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
		b.poll("refused inline", `(document.querySelector('#entry-actions[data-ready] .act-msg.err')?.textContent || '').includes('changed since this page showed it')`))

	// Fork: the new file and the command that resumes it.
	b.do("fork", chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="fork"] > summary`)),
		chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="fork"] button[type="submit"]`)),
		b.poll("fork command", `(document.querySelector('#entry-actions[data-ready] .copy-line input')?.value || '').startsWith("pi --session '/")`))

	// Share: saving uses the form's choices.
	b.do("share", chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="share"] > summary`)),
		chromedp.Click(chromedp.CSS(`#entry-actions input[name="format"][value="html"]`)),
		chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="share"] button[data-save]`)),
		b.poll("saved", `(document.querySelector('#entry-actions[data-ready] .act-result code')?.textContent || '').endsWith('-23a64162-redacted.html')`))
	saved := b.eval(`document.querySelector('#entry-actions .act-result code').textContent`)
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

	for _, m := range console() {
		if m.IsException() || m.Type == chromedp.ConsoleError || strings.Contains(m.Text, "Content Security Policy") {
			t.Errorf("browser console: %s (%s:%d)", m, m.URL, m.Line)
		}
	}
}
