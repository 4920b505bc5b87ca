package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestWidths opens the pages at a phone's width (390 px) and a desktop's
// (1440 px), in light and dark, and checks nothing runs off the side (no
// horizontal scrolling) and the parts a reader needs are there. With
// PIWEB_SHOTS=DIR it also saves a screenshot of each, to look at.
func TestWidths(t *testing.T) {
	ctx, console := browse(t)
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	shots := os.Getenv("PIWEB_SHOTS")
	pages := []struct{ name, path, ready string }{
		{"list", "/", "#sessions"},
		{"session", "/s/" + mainID, "#tree .row.sel"},
		{"session-context", "/s/" + mainID + "?target=c8578d56&view=context", "#conv-inner"},
		{"session-tools", "/s/" + mainID + "?target=8640c87c", "#conv-inner"},
		{"session-files", "/s/" + mainID + "?target=b82f83d6&view=files", ".files"},
		{"compare", "/s/" + mainID + "/compare?a=b82f83d6&b=4ee5d1f8", ".cmp-strip"},
		{"families", "/?sort=families", "#sessions"},
		{"map", "/s/" + mainID + "?view=map", "#map-view svg"},
		{"compare-pick", "/s/" + mainID + "/compare", ".cmp-tips"},
		{"session-viewing", "/s/" + mainID + "?leaf=09b043aa&target=09b043aa", ".viewing-note"},
	}
	for _, w := range []int64{390, 1440} {
		for _, scheme := range []string{"light", "dark"} {
			for _, p := range pages {
				name := fmt.Sprintf("%s-%d-%s", p.name, w, scheme)
				sctx, cancel := context.WithTimeout(ctx, guard)
				err := chromedp.Do(sctx,
					chromedp.EmulateViewport(w, 900),
					func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
						_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
							Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
						return chromedp.Void{}, err
					},
					chromedp.Navigate(ts.URL+p.path),
					chromedp.WaitVisible(chromedp.CSS(p.ready)),
				)
				if err != nil {
					cancel()
					t.Fatalf("%s: %v", name, err)
				}
				over, err := chromedp.Run(sctx, chromedp.Evaluate[string](`(() => {
					const d = document.documentElement, wide = [];
					if (d.scrollWidth > d.clientWidth + 1) {
						for (const el of document.querySelectorAll('body *')) {
							const r = el.getBoundingClientRect();
							if (r.right > d.clientWidth + 1 && r.width > 0 && getComputedStyle(el).position !== 'fixed') wide.push(el.tagName + '.' + el.className);
						}
					}
					return d.scrollWidth > d.clientWidth + 1 ? d.scrollWidth + 'px wide: ' + wide.slice(0, 5).join(', ') : '';
				})()`))
				if err != nil {
					cancel()
					t.Fatal(err)
				}
				if over != "" {
					t.Errorf("%s runs off the side: %s", name, over)
				}
				if shots != "" {
					png, err := chromedp.Run(sctx, chromedp.CaptureScreenshot())
					if err == nil {
						err = os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
					}
					if err != nil {
						t.Error(err)
					}
				}
				cancel()
			}
		}
	}
	for _, m := range console() {
		if m.IsException() || m.Type == chromedp.ConsoleError {
			t.Errorf("browser console: %s", m)
		}
	}
}
