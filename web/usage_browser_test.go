package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestUsageBrowser opens /usage in chromium: it takes the browser's time
// zone, switches the cost chart to by-project, redraws itself live as pi
// appends a costly reply, and follows a top session to its page. Then it
// checks phone (360 and 390 px) and desktop widths, light and dark, for
// sideways scrolling; with PIWEB_SHOTS=DIR it saves a screenshot of each.
func TestUsageBrowser(t *testing.T) {
	ctx, console := browse(t)
	lib, base := liveDemo(t)
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
	poll := func(name, js string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := waitJS(ctx, tg, js)
			if err != nil {
				t.Errorf("waiting for %s: %s", name, js)
			}
			return chromedp.Void{}, err
		}
	}
	settled := ` && !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')`
	zone := func(name string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: name})
			return chromedp.Void{}, err
		}
	}

	// across loads: the page may be between two documents when asked
	across := func(name, js string) {
		t.Helper()
		var last error
		for deadline := time.Now().Add(guard); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			ok, err := chromedp.Run(sctx, chromedp.Evaluate[bool](js))
			cancel()
			if err == nil && ok {
				return
			}
			last = err
		}
		t.Fatalf("waiting for %s: %s (%v)", name, js, last)
	}

	// Reached from the sessions page; the page moves itself to the browser's zone.
	do("sessions page", zone("America/New_York"), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#sessions")),
		chromedp.Click(chromedp.CSS("a.usage-link")))
	across("the browser's zone", `location.pathname === '/usage' && new URLSearchParams(location.search).get('tz') === 'America/New_York' && !!document.querySelector('#usage-body .usage-top a')`)
	do("all time", chromedp.SetValue(chromedp.CSS("#usage-range"), "all"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#usage-range').dispatchEvent(new Event('change', {bubbles: true}))`),
		poll("the whole range", `location.search.includes('range=all') && document.querySelector('#usage-body .summary').textContent.includes('America/New_York')`+settled))
	if legend := eval(`document.querySelector('#cost-h').closest('section').querySelector('.usage-legend').innerText`); !strings.Contains(legend, "anthropic/claude") {
		t.Errorf("the cost chart's legend by model: %q", legend)
	}

	// By project.
	do("by project", chromedp.Click(chromedp.CSS("#by-project")),
		poll("stacked by project", `location.search.includes('by=project') && document.querySelector('#by-project').getAttribute('aria-current') === 'true'`+settled),
		poll("project legend", `document.querySelector('#cost-h').closest('section').querySelector('.usage-legend').innerText.includes('weather-api')`))

	// pi appends a costly reply: the page draws itself again, still by project.
	cost := `document.querySelector('.usage-stats dd').textContent`
	do("the page follows the sessions", poll("its stream open", `document.querySelector('#usage-main').dataset.live === 'open'`))
	before := eval(cost)
	appendLines(t, sessionFile(t, lib, darkID),
		`{"type":"message","id":"live0001","parentId":null,"timestamp":"2026-05-20T15:00:00.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-opus-4-5","usage":{"input":5,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":10,"cost":{"total":1000}},"stopReason":"stop","timestamp":1}}`)
	do("live redraw", poll("the new cost", cost+` !== `+jsString(before)+` && `+cost+`.startsWith('$1,0')`+settled),
		poll("still by project", `document.querySelector('#by-project').getAttribute('aria-current') === 'true'`))

	// Phones and desktops, light and dark: nothing runs off the side.
	shots := os.Getenv("PIWEB_SHOTS")
	for _, w := range []int64{360, 390, 1440} {
		for _, scheme := range []string{"light", "dark"} {
			name := fmt.Sprintf("usage-%d-%s", w, scheme)
			h := int64(844)
			if w > 1000 {
				h = 900
			}
			do(name, chromedp.EmulateViewport(w, h),
				func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
					_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
						Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
					return chromedp.Void{}, err
				},
				chromedp.Navigate(base+"/usage?range=all&tz=UTC&by=model"), chromedp.WaitVisible(chromedp.CSS("#usage-body .usage-top")),
				chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details.usage-table').forEach((d) => d.open = true)`))
			if over := eval(`(() => {
				const d = document.documentElement, wide = [];
				if (d.scrollWidth > d.clientWidth + 1) {
					for (const el of document.querySelectorAll('body *')) {
						const r = el.getBoundingClientRect();
						if (r.right > d.clientWidth + 1 && r.width > 0) wide.push(el.tagName + '.' + el.className.baseVal ?? el.className);
					}
				}
				return d.scrollWidth > d.clientWidth + 1 ? d.scrollWidth + 'px wide: ' + wide.slice(0, 5).join(', ') : '';
			})()`); over != "" {
				t.Errorf("%s runs off the side: %s", name, over)
			}
			if shots != "" {
				sctx, cancel := context.WithTimeout(ctx, guard)
				png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
				cancel()
				if err == nil {
					err = os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
				}
				if err != nil {
					t.Error(err)
				}
				// And screen by screen, to look at closely.
				for k := 0; k < 8; k++ {
					sctx, cancel := context.WithTimeout(ctx, guard)
					err := chromedp.Do(sctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`window.scrollTo(0, %d)`, k*int(h))))
					var png []byte
					if err == nil {
						png, err = chromedp.Run(sctx, chromedp.CaptureScreenshot())
					}
					cancel()
					if err == nil {
						err = os.WriteFile(filepath.Join(shots, fmt.Sprintf("%s-screen%d.png", name, k)), png, 0o644)
					}
					if err != nil {
						t.Error(err)
					}
				}
			}
		}
	}

	// Follow the costliest session to its page.
	do("desktop", chromedp.EmulateViewport(1440, 900), chromedp.Navigate(base+"/usage?range=all&tz=UTC"), chromedp.WaitVisible(chromedp.CSS("#usage-body .usage-top a")))
	href := eval(`document.querySelector('.usage-top a').getAttribute('href')`)
	do("follow a top session", chromedp.Click(chromedp.CSS(".usage-top a")))
	across("its page", `location.pathname === `+jsString(href)+` && !!document.querySelector('#tree .row.sel')`)
	if href != "/s/"+darkID { // the $1,000 reply made it the costliest
		t.Errorf("the top session is %s, want %s", href, darkID)
	}

	for _, m := range console() {
		if m.IsException() || m.Type == chromedp.ConsoleError {
			t.Errorf("browser console: %s (%s:%d)", m, m.URL, m.Line)
		}
	}
}

// jsString quotes s for JavaScript.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}
