package web

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/piweb/piweb/internal/sessiontest"
)

// rect is a DOMRect as the tests read it.
type rect struct{ Left, Top, Width, Height float64 }

func (r rect) right() float64  { return r.Left + r.Width }
func (r rect) bottom() float64 { return r.Top + r.Height }

// mapGeometry is where the map's view and drawing are on the screen, and
// which point of the drawing (in its own units) is in the middle of the view.
type mapGeometry struct {
	View, SVG rect
	Mid       [2]float64
	Zoom      float64
	Active    string // the focused element's id
}

const mapGeometryJS = `(() => {
	const view = document.getElementById('map-view'), svg = view.querySelector('svg');
	const r = (e) => { const b = e.getBoundingClientRect(); return {Left: b.left, Top: b.top, Width: b.width, Height: b.height}; };
	const v = r(view), s = r(svg), z = s.Width / Number(svg.getAttribute('width'));
	return JSON.stringify({View: {Left: v.Left, Top: v.Top, Width: view.clientWidth, Height: view.clientHeight}, SVG: s,
		Mid: [(v.Left + view.clientWidth / 2 - s.Left) / z, (v.Top + view.clientHeight / 2 - s.Top) / z], Zoom: Number(svg.dataset.zoom),
		Active: document.activeElement.id || document.activeElement.tagName});
})()`

func (b browserRun) mapGeometry() mapGeometry {
	b.t.Helper()
	var g mapGeometry
	if err := json.Unmarshal([]byte(b.eval(mapGeometryJS)), &g); err != nil {
		b.t.Fatal(err)
	}
	return g
}

// TestBrowserMapFitsAndKeys: a small session's map opens fitted to its
// pane both ways and centred, with the keys: + zooms about the middle, 0
// fits again (also once a tool button has the focus), l brings the leaf
// into view, and the arrow keys select the run above, below and beside;
// the map is one tab stop.
func TestBrowserMapFitsAndKeys(t *testing.T) {
	ctx, console := browse(t)
	_, url := liveDemo(t)
	b := browserRun{t, ctx}
	b.do("open the map", chromedp.EmulateViewport(1440, 900), chromedp.Navigate(url+"/s/"+mainID+"?view=map"),
		b.poll("drawn", `document.getElementById('map-pane').dataset.ready === '1'`))
	g := b.mapGeometry()
	if g.Active != "map-pane" {
		t.Errorf("the focus is on %s, not the map", g.Active)
	}
	fits := func(g mapGeometry, what string) {
		t.Helper()
		v, s := g.View, g.SVG
		if s.Left < v.Left-1 || s.Top < v.Top-1 || s.right() > v.Left+v.Width+1 || s.bottom() > v.Top+v.Height+1 {
			t.Errorf("%s: the drawing %+v does not fit the view %+v", what, s, v)
		}
		if s.Width < v.Width*0.9 && s.Height < v.Height*0.9 {
			t.Errorf("%s: the drawing %+v fills neither way of the view %+v", what, s, v)
		}
		if l, r := s.Left-v.Left, v.Left+v.Width-s.right(); math.Abs(l-r) > 2 {
			t.Errorf("%s: not centred: %.0f px left, %.0f px right", what, l, r)
		}
	}
	fits(g, "opened")
	saveShot(t, ctx, "map-fit-1440")

	b.do("zoom in", chromedp.KeyEvent("+"), b.poll("larger", fmt.Sprintf(`Number(document.querySelector('#map-view svg').dataset.zoom) > %f`, g.Zoom*1.2)))
	in := b.mapGeometry()
	if math.Abs(in.Mid[0]-g.Mid[0]) > 1.5 || math.Abs(in.Mid[1]-g.Mid[1]) > 1.5 {
		t.Errorf("zooming in moved the middle of the view from %v to %v", g.Mid, in.Mid)
	}
	b.do("fit again", chromedp.KeyEvent("0"), b.poll("fitted", fmt.Sprintf(`Math.abs(Number(document.querySelector('#map-view svg').dataset.zoom) - %f) < 0.001`, g.Zoom)))
	fits(b.mapGeometry(), "after 0")
	b.do("zoom with the button", chromedp.Click(chromedp.CSS(`[data-map-zoom="in"]`)), chromedp.Click(chromedp.CSS(`[data-map-zoom="in"]`)),
		b.poll("larger", fmt.Sprintf(`Number(document.querySelector('#map-view svg').dataset.zoom) > %f`, g.Zoom*1.5)))
	b.do("0 with the button focused", chromedp.KeyEvent("0"), b.poll("fitted", fmt.Sprintf(`Math.abs(Number(document.querySelector('#map-view svg').dataset.zoom) - %f) < 0.001`, g.Zoom)))
	b.do("zoom out, then the leaf", chromedp.KeyEvent("+"), chromedp.KeyEvent("+"), chromedp.KeyEvent("+"), chromedp.KeyEvent("-"), chromedp.KeyEvent("l"),
		b.poll("the leaf in view", `(() => { const v = document.getElementById('map-view').getBoundingClientRect(), l = document.querySelector('#map-view .mk.leaf').getBoundingClientRect();
			return l.top >= v.top && l.bottom <= v.bottom && l.left >= v.left && l.right <= v.right; })()`))
	if got := b.eval(`document.getElementById('tree-q').value`); got != "" {
		t.Errorf("the map's keys reached the tree's search: %q", got)
	}

	// One tab stop: the pane; the runs are reached with the arrow keys.
	if n := b.eval(`String(document.querySelectorAll('#map-view [tabindex]').length)`); n != "0" {
		t.Errorf("%s tab stops inside the drawing", n)
	}
	selRun := `document.querySelector('#map-view .seg.sel')?.dataset.entry`
	b.do("focus the map", chromedp.Focus("#map-pane"), b.poll("a run selected", `!!`+selRun))
	for _, k := range []struct{ name, key string }{{"ArrowUp", kb.ArrowUp}, {"ArrowDown", kb.ArrowDown}, {"ArrowLeft", kb.ArrowLeft}, {"ArrowRight", kb.ArrowRight}} {
		key := k.key
		want := b.eval(`(() => {
			const runs = [...document.querySelectorAll('#map-view g.seg')], cur = document.querySelector('#map-view g.seg.sel');
			const sibs = runs.filter((g) => g.dataset.up === cur.dataset.up), kids = runs.filter((g) => g.dataset.up === cur.dataset.entry);
			const next = {ArrowUp: runs.find((g) => g.dataset.entry === cur.dataset.up), ArrowDown: kids.find((g) => g.classList.contains('path')) || kids[0],
				ArrowLeft: sibs[sibs.indexOf(cur) - 1], ArrowRight: sibs[sibs.indexOf(cur) + 1]}['` + k.name + `'];
			return next ? next.dataset.entry : cur.dataset.entry;
		})()`)
		before := b.eval(selRun)
		if want == before {
			t.Fatalf("%s from %s goes nowhere: the demo's runs changed", k.name, before)
		}
		b.do(k.name, chromedp.KeyEvent(key),
			b.poll("the run selected", selRun+` === '`+want+`'`),
			b.poll("the drawing caught up", `document.querySelector('#map-view svg .seg.sel rect.mk.sel') && `+selRun+` === '`+want+`'`),
			b.poll("the run named below the map", `document.getElementById('map-status').textContent.includes('`+want+`')`))
		if a := b.eval(`document.activeElement.id`); a != "map-pane" {
			t.Fatalf("after %s the focus is on %q", k.name, a)
		}
	}
	saveShot(t, ctx, "map-keys-1440")
	b.do("phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(url+"/s/"+mainID+"?view=map"),
		b.poll("drawn", `document.getElementById('map-pane').dataset.ready === '1'`))
	fits(b.mapGeometry(), "phone")
	saveShot(t, ctx, "map-fit-390")
	checkConsole(t, console)
}

// TestBrowserMapLabels: in chromium's own text measure, the labels shown
// overlap neither one another nor a tag, fitted or zoomed out; zoomed far
// out, every label shown is still at least 10 px high on screen.
func TestBrowserMapLabels(t *testing.T) {
	root := t.TempDir()
	writeSession(t, root, "--w--", "crowded.jsonl", sessiontest.Crowded(30, "x2", "y2", "z2", "x3", "y3", "x4", "z4", "y12", "x12", "z13"))
	srv := newServer(t, openLib(t, root), nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	ctx, console := browse(t)
	b := browserRun{t, ctx}
	b.do("open the map", chromedp.EmulateViewport(1440, 900), chromedp.Navigate(ts.URL+"/s/s1?view=map"),
		b.poll("drawn", `document.getElementById('map-pane').dataset.ready === '1'`))
	check := func(what string) {
		t.Helper()
		var got struct {
			Shown, Overlaps int
			Smallest        float64
		}
		js := `(() => {
			const svg = document.querySelector('#map-view svg'), z = Number(svg.dataset.zoom);
			const shown = [...svg.querySelectorAll('text.label')].filter((t) => getComputedStyle(t).visibility !== 'hidden');
			const boxes = shown.map((t) => t.getBoundingClientRect()), tags = [...svg.querySelectorAll('.mk.tag')].map((t) => t.getBoundingClientRect());
			const meet = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
			let overlaps = 0;
			boxes.forEach((a, i) => { boxes.forEach((b, j) => { if (i < j && meet(a, b)) overlaps++; }); tags.forEach((g) => { if (meet(a, g)) overlaps++; }); });
			const smallest = Math.min(...shown.map((t) => parseFloat(getComputedStyle(t).fontSize) * z));
			return JSON.stringify({Shown: shown.length, Overlaps: overlaps, Smallest: smallest});
		})()`
		if err := json.Unmarshal([]byte(b.eval(js)), &got); err != nil {
			t.Fatal(err)
		}
		if got.Overlaps > 0 || got.Shown == 0 || got.Smallest < 9.9 {
			t.Errorf("%s: %d labels shown, %d overlaps, the smallest %.1f px high on screen", what, got.Shown, got.Overlaps, got.Smallest)
		}
	}
	check("fitted")
	saveShot(t, ctx, "map-labels-1440")
	b.do("zoom in", chromedp.Click(chromedp.CSS(`[data-map-zoom="in"]`)), b.poll("zoomed", `Number(document.querySelector('#map-view svg').dataset.zoom) > 1`))
	check("zoomed in")
	b.do("zoom far out", chromedp.Focus("#map-pane"), chromedp.KeyEvent("-"), chromedp.KeyEvent("-"), chromedp.KeyEvent("-"), chromedp.KeyEvent("-"), chromedp.KeyEvent("-"), chromedp.KeyEvent("-"),
		b.poll("zoomed out", `Number(document.querySelector('#map-view svg').dataset.zoom) < 0.5`))
	check("zoomed out")
	saveShot(t, ctx, "map-labels-out-1440")
	checkConsole(t, console)
}

// TestMapHoverPlain: what hovering a run shows is plain words, whatever
// the run begins with: a model change, a thinking level, a tool call.
func TestMapHoverPlain(t *testing.T) {
	root := t.TempDir()
	writeSession(t, root, "--w--", "settings.jsonl", sessiontest.Lines(sessiontest.Header,
		sessiontest.User("u1", "", 1, "start"),
		sessiontest.Asst("a1", "u1", 2, "ok"),
		sessiontest.Entry("model_change", "m1", "a1", 3, `,"provider":"anthropic","modelId":"claude-opus-4-5"`),
		sessiontest.Asst("a2", "m1", 4, "on opus"),
		sessiontest.Entry("thinking_level_change", "t1", "a1", 5, `,"thinkingLevel":"high"`),
		sessiontest.Asst("a3", "t1", 6, "thinking hard"),
		`{"type":"message","id":"a4","parentId":"a1","timestamp":"2026-01-01T00:00:07.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":7}}`,
	))
	svg := get(t, newServer(t, openLib(t, root), nil).Handler(), "/s/s1/map").Body.String()
	titles := regexp.MustCompile(`<g class="seg[^"]*"[^>]*><title>([^<]*)</title>`).FindAllStringSubmatch(svg, -1)
	all := ""
	for _, m := range titles {
		all += m[1] + "\n"
		if strings.Contains(m[1], "{") || strings.Contains(m[1], "&#34;type") {
			t.Errorf("a run's hover text holds JSON: %q", m[1])
		}
	}
	for _, want := range []string{"model changed to anthropic/claude-opus-4-5", "thinking level set to high", "assistant ran bash", "user: start"} {
		if !strings.Contains(all, want) {
			t.Errorf("no run says %q:\n%s", want, all)
		}
	}
}

// TestMapLegend: every mark and line a map draws is named in the legend
// below it.
func TestMapLegend(t *testing.T) {
	h := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	svg := get(t, h, "/s/"+mainID+"/map?select=b82f83d6&q=cache").Body.String()
	page := get(t, h, "/s/"+mainID+"?view=map").Body.String()
	legend := page[strings.Index(page, `class="map-legend"`):]
	legend = legend[:strings.Index(legend, "</ul>")]
	marks := regexp.MustCompile(`class="mk ([a-z]+)`).FindAllStringSubmatch(svg, -1)
	seen := map[string]bool{}
	for _, m := range marks {
		seen[m[1]] = true
	}
	delete(seen, "run") // the end of a run: part of its line
	delete(seen, "dot") // the leaf's dot, with its ring
	for _, kind := range []string{"path", "off"} {
		if strings.Contains(svg, `class="seg `+kind) {
			seen[kind] = true
		}
	}
	if len(seen) < 9 {
		t.Fatalf("the demo's map draws only %v: the test checks too little", seen)
	}
	for m := range seen {
		if !strings.Contains(legend, `data-mark="`+m+`"`) {
			t.Errorf("the legend does not name the mark %q", m)
		}
	}
}
