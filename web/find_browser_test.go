package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/store"
)

// TestBrowserFind drives search in chromium: the sessions page half
// indexed (progress bar, the rows indexed so far, then all of them), the
// search page, the command palette, and a hit deep in a long path opening
// with its entry selected and in view. With PIWEB_SHOTS=DIR it saves
// screenshots at 390 and 1440 px, light and dark.
func TestBrowserFind(t *testing.T) {
	ctx, console := browse(t)
	root := demoRoot(t)
	bigKey, _ := writeBigSession(t, root, 6000)
	lib := library.NewLibrary(root)
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "index.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// The fill stops after two files until the test lets it go on.
	var once sync.Once
	gate, held := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	n := 0
	cat := catalog.New(lib, catalog.Options{Store: st, Logger: newServer(t, lib, nil).log, OnFile: func(string) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k > 2 {
			once.Do(func() { close(held) })
			<-gate
		}
	}})
	cctx, stop := context.WithCancel(context.Background())
	defer stop()
	go cat.Run(cctx)
	srv := New(lib, Options{Logger: newServer(t, lib, nil).log, Home: "/home/dev", Catalog: cat})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	shots := os.Getenv("PIWEB_SHOTS")

	do := func(name string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, guard)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
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
	poll := func(js string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := waitJS(ctx, tg, js)
			if err != nil {
				err = fmt.Errorf("waiting for %s: %w", js, err)
			}
			return chromedp.Void{}, err
		}
	}
	shoot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		for _, w := range []int64{390, 1440} {
			for _, scheme := range []string{"light", "dark"} {
				sctx, cancel := context.WithTimeout(ctx, guard)
				err := chromedp.Do(sctx, chromedp.EmulateViewport(w, 900),
					func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
						_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
							Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
						return chromedp.Void{}, err
					})
				if err == nil {
					var png []byte
					if png, err = chromedp.Run(sctx, chromedp.CaptureScreenshot()); err == nil {
						err = os.WriteFile(filepath.Join(shots, fmt.Sprintf("find-%s-%d-%s.png", name, w, scheme)), png, 0o644)
					}
				}
				over := eval(`document.documentElement.scrollWidth > document.documentElement.clientWidth + 1 ? 'wide' : ''`)
				if over != "" {
					t.Errorf("%s at %d px runs off the side", name, w)
				}
				cancel()
				if err != nil {
					t.Error(err)
				}
			}
		}
		do("back to desktop", chromedp.EmulateViewport(1400, 900))
	}

	// Half indexed: the progress bar and the two sessions read so far.
	<-held
	for deadline := time.Now().Add(guard); cat.Progress().FilesDone != 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the fill did not reach two files")
		}
	}
	do("sessions page, half indexed", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#index-progress progress")))
	if rows := eval(`String(document.querySelectorAll('#sessions tbody tr').length)`); rows != "2" {
		t.Errorf("%s rows while half indexed, want 2", rows)
	}
	if bar := eval(`document.querySelector('#index-progress').innerText`); !strings.Contains(bar, "2 of 4 files") {
		t.Errorf("progress bar: %q", bar)
	}
	shoot("half-indexed")
	close(gate)
	do("indexing done: every row, no bar", poll(`document.querySelectorAll('#sessions tbody tr').length === 4 && !document.querySelector('#index-progress progress')`))
	<-cat.SearchReady()

	// The search page: grouped hits with marks; a click opens the entry.
	do("search page", chromedp.Navigate(ts.URL+"/search?q=cache"), chromedp.WaitVisible(chromedp.CSS(".hit mark")))
	shoot("search")
	href := eval(`document.querySelector('.hit-link').getAttribute('href')`)
	target := href[strings.Index(href, "target=")+len("target="):]
	do("open a hit", chromedp.Click(chromedp.CSS(".hit-link")), chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		poll(`!!document.querySelector('#conv .target, #conv [data-ref="`+target+`"]')`))

	// The palette, from any page: ctrl+k, type, enter.
	do("palette", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#sessions")),
		chromedp.KeyEvent("k", chromedp.KeyModifiers(kb.ModifierCtrl)),
		poll(`document.getElementById('palette').open`),
		chromedp.SendKeys(chromedp.CSS("#palette-q"), "rejected"),
		poll(`document.querySelectorAll('#palette-results .palette-item').length > 1`))
	shoot("palette")
	first := eval(`document.querySelector('#palette-results .palette-item[aria-selected=true]').getAttribute('href')`)
	do("palette opens the first", chromedp.KeyEvent(kb.Enter))
	// The page navigates under the key event: ask until the new one answers.
	loc := ""
	for deadline := time.Now().Add(guard); time.Now().Before(deadline); {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		loc, err = chromedp.Run(sctx, chromedp.Evaluate[string](`document.querySelector('#tree .row.sel') ? location.pathname + location.search : ''`))
		cancel()
		if err == nil && loc != "" {
			break
		}
	}
	if loc != first {
		t.Errorf("enter in the palette opened %q, want %q", loc, first)
	}

	// A hit deep in a long path (its first entries, 6,000 entries up):
	// the entry is selected and in view.
	do("deep hit", chromedp.Navigate(ts.URL+"/search?q="+"%22question+3+lorem%22"), chromedp.WaitVisible(chromedp.CSS(".hit-link")))
	deep := eval(`[...document.querySelectorAll('.hit-link')].map(a => a.getAttribute('href')).find(h => h.startsWith('/s/` + bigKey + `?')) || ''`)
	if deep == "" {
		t.Fatal("no hit in the long session")
	}
	do("open the deep hit", chromedp.Navigate(ts.URL+deep), chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		poll(`(() => { const el = document.querySelector('#conv .item.target'); if (!el) return false;
			const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; })()`))
	if sel := eval(`document.querySelector('#tree .row.sel')?.dataset.ref || ''`); !strings.Contains(deep, "target="+sel) {
		t.Errorf("selected row %q, the hit is %s", sel, deep)
	}
	shoot("deep-hit")
	for _, m := range console() {
		if m.IsException() || m.Type == chromedp.ConsoleError {
			t.Errorf("browser console: %s", m)
		}
	}
}
