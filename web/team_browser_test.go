package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/piweb/piweb/auth"
	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/internal/storetest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/push"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/team"
	"github.com/piweb/piweb/usage"
)

// TestTeamBrowser drives a team server in chromium: two machines push the
// demo sessions (the main one and its fork from "laptop", the dark-mode
// one from "desk") to PostgreSQL; the server mirrors them behind a login.
// Log in, see both machines, open a search hit from desk's session, and
// try to label it: the page says where to do that instead.
// PIWEB_SHOTS=DIR keeps screenshots at a phone's and a desktop's width.
func TestTeamBrowser(t *testing.T) {
	chromium(t)
	dsn, ok := storetest.Postgres(t)
	if !ok {
		t.Skip("no PostgreSQL")
	}
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := store.Open(ctx, dsn, store.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	// Two machines' roots, pushed.
	demo := demoRoot(t)
	roots := map[string]string{"laptop": t.TempDir(), "desk": t.TempDir()}
	files, _ := library.SessionFiles(demo)
	for _, f := range files {
		m := "laptop"
		if filepath.Base(f) == "2026-05-09T14-05-01-234Z_"+darkID+".jsonl" {
			m = "desk"
		}
		rel, _ := filepath.Rel(demo, f)
		to := filepath.Join(roots[m], rel)
		os.MkdirAll(filepath.Dir(to), 0o755)
		data, _ := os.ReadFile(f)
		os.WriteFile(to, data, 0o644)
	}
	for m, root := range roots {
		p, err := push.New(push.Table{DB: st}, push.Options{Root: root, Machine: m, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		if s, err := p.Push(ctx); err != nil || len(s.Failed) > 0 || s.Changed == 0 {
			t.Fatalf("push %s: %+v %v", m, s, err)
		}
	}
	tok, err := auth.NewToken(ctx, auth.Table{DB: st}, "ann")
	if err != nil {
		t.Fatal(err)
	}

	// The team server, as piweb serve --from puts it together.
	dir := t.TempDir()
	mr, err := team.Open(push.Table{DB: st}, dir, team.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := mr.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	lib := library.NewLibrary(dir)
	lib.SetReadOnly(mr.Machine)
	cat := catalog.New(lib, catalog.Options{Store: team.Index{DB: st, Machine: "team:" + dir}, Logger: quiet})
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	go cat.Run(cctx)
	if err := cat.Wait(cctx); err != nil {
		t.Fatal(err)
	}
	srv := New(lib, Options{Addr: "127.0.0.1:0", Root: dir, Logger: quiet, Catalog: cat, Machine: mr.Machine,
		Usage: team.Usage{Files: usage.NewFiles(lib, ""), Lib: lib, Machine: mr.Machine}, Login: auth.NewGuard(auth.Table{DB: st}, auth.Options{})})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })

	bctx, _ := browse(t)
	b := browserRun{t, bctx}
	shots := os.Getenv("PIWEB_SHOTS")
	shoot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		for _, size := range [][2]int64{{390, 844}, {1440, 900}} {
			sctx, cancel := context.WithTimeout(bctx, guard)
			err := chromedp.Do(sctx, chromedp.EmulateViewport(size[0], size[1]),
				func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
					_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
						Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}})
					return chromedp.Void{}, err
				})
			if err == nil {
				var png []byte
				if png, err = chromedp.Run(sctx, chromedp.CaptureScreenshot()); err == nil {
					err = os.WriteFile(filepath.Join(shots, fmt.Sprintf("team-%s-%d.png", name, size[0])), png, 0o644)
				}
			}
			cancel()
			if err != nil {
				t.Error(err)
			}
			if b.eval(`document.documentElement.scrollWidth > document.documentElement.clientWidth + 1 ? 'wide' : ''`) != "" {
				t.Errorf("%s at %d px runs off the side", name, size[0])
			}
		}
		b.do("back to desktop", chromedp.EmulateViewport(1400, 900))
	}

	// Not logged in: the login page, which comes back to the page asked for.
	b.do("a session, not logged in", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`form.login input[name="token"]`)))
	if u := b.eval(`location.pathname + location.search`); u != "/login?next=%2F" {
		t.Errorf("sent to %q", u)
	}
	shoot("login")
	b.do("a wrong token", chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), "piweb_wrong"), chromedp.Submit(chromedp.CSS("form.login")),
		chromedp.WaitVisible(chromedp.CSS(".login-msg")))
	if msg := b.eval(`document.querySelector('.login-msg').textContent`); !strings.Contains(msg, "log in") {
		t.Errorf("a wrong token: %q", msg)
	}
	b.do("log in", chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), tok), chromedp.Submit(chromedp.CSS("form.login")),
		chromedp.WaitVisible(chromedp.CSS("#sessions")))

	// Both machines, each a group of its projects, and a filter by machine.
	machines := `[...document.querySelectorAll('#sessions .project h2 .machine')].map(e => e.textContent).sort().join(' ')`
	if got := b.eval(machines); got != "desk laptop laptop" {
		t.Errorf("groups of machines %q, want desk and laptop's two", got)
	}
	shoot("list")
	b.do("only desk", chromedp.SetValue(chromedp.CSS("#machine"), "desk"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#machine').dispatchEvent(new Event('change', {bubbles: true}))`),
		b.poll("desk's sessions alone", machines+` === 'desk' && new URL(location.href).searchParams.get('machine') === 'desk'`))

	// A search hit in desk's session opens it, at the entry.
	b.do("search", chromedp.Navigate(ts.URL+"/search?q=dark+mode+to+the+settings"),
		b.poll("a hit", `!!document.querySelector('a[href*="/s/`+darkID+`"]')`))
	b.do("open the hit", chromedp.Click(chromedp.CSS(`.hits a.hit-link[href*="/s/`+darkID+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tree .row.sel`)),
		b.poll("the session at the entry", `location.pathname === '/s/`+darkID+`' && document.querySelector('#tree .row.sel')?.dataset.ref === '2cfe36dd'`),
		b.poll("its actions", `document.querySelector('#entry-actions[data-ready]')?.dataset.ref === '2cfe36dd'`))
	if got := b.eval(`document.querySelector('#entry-actions summary').textContent`); got != "Label… on desk" {
		t.Errorf("the label button says %q", got)
	}
	// Labelling it (shift+L, as in pi) says where to do that instead.
	b.do("label it", chromedp.KeyEvent("L", chromedp.KeyModifiers(chromedp.ModifierShift)),
		b.poll("refused, naming the machine", `(() => { const d = document.querySelector('#entry-actions details[data-act="label"]');
			return d.open && d.innerText.includes('This session lives on desk') && d.innerText.includes('Label, rewind or fork it on desk') })()`))
	b.do("rewind it", chromedp.Click(chromedp.CSS(`#entry-actions details[data-act="rewind"] summary`)),
		b.poll("refused too", `document.querySelector('#entry-actions details[data-act="rewind"]').open`))
	shoot("refused")
	// The page's own forms are refused by the server too (a page drawn
	// before the session became a copy would post them).
	b.do("a write posted anyway", chromedp.Evaluate[chromedp.Void](`htmx.ajax('POST', '/s/`+darkID+`/actions/label', {target: '#entry-actions', swap: 'outerHTML', values: {entry: '2cfe36dd', label: 'x'}})`),
		b.poll("the refusal's card", `[...document.querySelectorAll('#act-outcomes .outcome.err')].some(o => o.innerText.includes('This session lives on desk'))`))
}
