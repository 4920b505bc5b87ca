package web

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// shotsDir holds the README's screenshots and the record of what each
// was taken of.
const shotsDir = "../docs/img"

// readmeShots are the README's screenshots: a page of the demo sessions at
// a fixed size, and what must be on it before it is taken.
var readmeShots = []struct {
	name, path string
	w, h       int64
	ready      string // a script that is true once the page is drawn
	before     string // a script run first (a tap), or ""
}{
	{"tree", "/s/" + mainID + "?target=09b043aa", 1280, 800, `!!document.querySelector('#tree .row.sel') && document.querySelector('#conv-inner')?.dataset.ref === '09b043aa'`, ""},
	{"map", "/s/" + mainID + "?view=map&target=4ee5d1f8", 1280, 800, `document.getElementById('map-pane').dataset.ready === '1' && !!document.querySelector('#map-view .seg.sel')`, ""},
	{"compare", "/s/" + mainID + "/compare?a=b82f83d6&b=4ee5d1f8", 1280, 800, `!!document.querySelector('.cmp-strip')`, ""},
	{"phone", "/s/" + mainID + "?target=eb06327f", 390, 844, `document.querySelector('#conv-inner')?.dataset.ref === 'eb06327f' && document.getElementById('split').dataset.pane === 'conv'`, ""},
}

// shotRecord reads docs/img/screenshots.txt: each screenshot's name and
// the hash of the page it was taken of.
func shotRecord(t *testing.T) map[string]string {
	t.Helper()
	rec := map[string]string{}
	f, err := os.Open(filepath.Join(shotsDir, "screenshots.txt"))
	if err != nil {
		return rec
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			if name, sum, ok := strings.Cut(line, " "); ok {
				rec[name] = sum
			}
		}
	}
	return rec
}

var (
	timeText = regexp.MustCompile(`(<time[^>]*>)[^<]*(</time>)`)
	labelAt  = regexp.MustCompile(`(<span class="lt">)[^<]*(</span>)`)
	measured = regexp.MustCompile(` (style|data-zoom|data-version)="[^"]*"`)
)

// pageSum is the hash of a page's DOM as a screenshot shows it, leaving
// out what differs between machines or runs but not between looks: local
// times (the time zone), sizes the page's scripts measured (fonts), the
// library's version counter, the temporary folder of the sessions and the
// server's address.
func pageSum(dom, root, server string) string {
	dom = strings.ReplaceAll(strings.ReplaceAll(dom, root, "ROOT"), server, "SERVER")
	dom = timeText.ReplaceAllString(dom, "$1$2")
	dom = labelAt.ReplaceAllString(dom, "$1$2")
	dom = measured.ReplaceAllString(dom, "")
	sum := sha256.Sum256([]byte(dom))
	return hex.EncodeToString(sum[:])
}

// TestReadmeShots takes the README's screenshots of the demo sessions in
// chromium (fixed sizes, light, no motion) and checks that the committed
// ones are current: each was taken of the page as it is drawn now (a hash
// of its DOM, recorded beside the images). With -update it takes them
// again, into docs/img.
func TestReadmeShots(t *testing.T) {
	ctx, console := browse(t)
	root := demoRoot(t)
	srv := newServer(t, openLib(t, root), nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	b := browserRun{t, ctx}
	rec := shotRecord(t)
	var out strings.Builder
	out.WriteString("# The README's screenshots (docs/img/NAME.png) and a hash of the page each was taken of.\n")
	out.WriteString("# go test ./web -run TestReadmeShots -update takes them again; the test fails when one is stale.\n")
	settled := ` && !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added') && document.fonts.status === 'loaded'`
	for _, s := range readmeShots {
		b.do(s.name, chromedp.EmulateViewport(s.w, s.h),
			func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
				_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}, {Name: "prefers-reduced-motion", Value: "reduce"}}})
				return chromedp.Void{}, err
			},
			chromedp.Navigate(ts.URL+s.path), b.poll(s.name+" drawn", `(`+s.ready+`)`+settled))
		// Once drawn, the page must hold still: the same DOM twice.
		var sum string
		for deadline := time.Now().Add(guard); ; {
			sum = pageSum(b.eval(`document.documentElement.outerHTML`), root, ts.URL)
			again := pageSum(b.eval(`document.documentElement.outerHTML`), root, ts.URL)
			if sum == again {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the page keeps changing", s.name)
			}
		}
		file := filepath.Join(shotsDir, s.name+".png")
		fmt.Fprintf(&out, "%s %s\n", s.name, sum)
		if *update {
			shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err == nil {
				err = os.WriteFile(file, shot, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		if rec[s.name] != sum {
			t.Errorf("%s is stale: the page it shows has changed since it was taken; take it again with go test ./web -run TestReadmeShots -update", file)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%v (go test ./web -run TestReadmeShots -update takes it)", err)
			continue
		}
		if cfg, err := png.DecodeConfig(bytes.NewReader(data)); err != nil || int64(cfg.Width) != s.w || int64(cfg.Height) != s.h {
			t.Errorf("%s is not a %dx%d PNG: %+v %v", file, s.w, s.h, cfg, err)
		}
	}
	if *update {
		if err := os.WriteFile(filepath.Join(shotsDir, "screenshots.txt"), []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkConsole(t, console)
}
