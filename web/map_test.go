package web

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/piweb/piweb/internal/sessiontest"
)

// TestMapRoute: the map is SVG with the path, the selected entry and the
// marks, and the session page opens on it with ?view=map.
func TestMapRoute(t *testing.T) {
	h := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	rec := get(t, h, "/s/"+mainID+"/map?select=b82f83d6")
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "image/svg+xml") {
		t.Fatalf("content type %q", ct)
	}
	svg := rec.Body.String()
	for _, want := range []string{"<svg", `class="seg path`, `class="seg off`, `class="mk fork"`, `class="mk summary"`, `class="mk leaf"`, "bug report", `class="mk sel"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the map lacks %s", want)
		}
	}
	if rec := get(t, h, "/s/"+mainID+"/map?select=nope"); rec.Code != 404 {
		t.Errorf("unknown selection: %d", rec.Code)
	}
	page := get(t, h, "/s/"+mainID+"?view=map").Body.String()
	if !strings.Contains(page, `id="map-pane"`) || strings.Contains(page, `id="map-pane" class="map-pane" data-map-src="/s/`+mainID+`/map" tabindex="0" aria-label="Map of the session tree" hidden`) {
		t.Error("?view=map does not open the map")
	}
}

// TestBrowserMap: the map shows, a click on a segment opens its entry in
// the conversation, and a live append reaches the map.
func TestBrowserMap(t *testing.T) {
	ctx, console := browse(t)
	lib, url := liveDemo(t)
	b := browserRun{t, ctx}
	b.do("open the map", chromedp.EmulateViewport(1440, 900), chromedp.Navigate(url+"/s/"+mainID+"?view=map"),
		chromedp.WaitVisible(chromedp.CSS(`#map-view svg .seg`)))
	saveShot(t, ctx, "map-1440")
	b.do("click the abandoned branch", chromedp.Click(chromedp.CSS(`#map-view .seg.off .mk`)),
		// The run ends with a label entry, which the default filter hides: the
		// page shows its nearest visible ancestor, the branch's answer.
		b.poll("its entry in the conversation", `document.querySelector('#conv-inner')?.dataset.ref === '4ee5d1f8'`))
	n := b.eval(`String(document.querySelectorAll('#map-view .seg').length)`)
	file := sessionFile(t, lib, mainID)
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","id":"feed0042","parentId":"9a374789","timestamp":"2026-05-12T09:00:00.000Z","message":{"role":"user","content":"a third way","timestamp":1778576400000}}` + "\n")
	f.Close()
	b.do("a live append", b.poll("the map gains the new branch", `document.querySelectorAll('#map-view .seg').length > `+n+` && !!document.querySelector('#map-view .seg[data-entry="feed0042"]')`))
	b.do("pinch to zoom", chromedp.Evaluate[chromedp.Void](`(() => {
		const v = document.getElementById('map-view');
		window.mapWidth = parseFloat(document.querySelector('#map-view svg').style.width);
		const ev = (type, id, x) => v.dispatchEvent(new PointerEvent(type, {pointerId: id, pointerType: 'touch', isPrimary: id === 1, button: type === 'pointermove' ? -1 : 0, clientX: x, clientY: 300, bubbles: true}));
		ev('pointerdown', 1, 100); ev('pointerdown', 2, 140);
		ev('pointermove', 2, 180); ev('pointermove', 1, 60);
		ev('pointerup', 1, 60); ev('pointerup', 2, 180);
	})()`), b.poll("the map is larger", `parseFloat(document.querySelector('#map-view svg').style.width) > window.mapWidth * 2`))
	b.do("search the tree", chromedp.SendKeys("#tree-q", "cache"),
		b.poll("the map marks the hits", `document.querySelectorAll('#map-view .mark .mk.hit').length > 0`))
	saveShot(t, ctx, "map-hits-1440")
	b.do("shift+click a segment",
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#map-view .seg[data-entry="feed0042"] .ln').dispatchEvent(new MouseEvent('click', {bubbles: true, shiftKey: true}))`))
	b.do("the comparison", chromedp.WaitVisible(chromedp.CSS(".cmp-strip")))
	if got := b.eval(`location.pathname + location.search`); got != "/s/"+mainID+"/compare?a=4ee5d1f8&b=feed0042" {
		t.Errorf("shift+click opened %s", got)
	}
	b.do("phone", chromedp.EmulateViewport(390, 800), chromedp.Navigate(url+"/s/"+mainID+"?view=map"),
		chromedp.WaitVisible(chromedp.CSS(`#map-view svg .seg`)))
	saveShot(t, ctx, "map-390")
	checkConsole(t, console)
}

// TestMinimap: the strip marks the kinds of rows in columns, stays small
// however long the tree, and /rows?row=K answers the page around row K.
func TestMinimap(t *testing.T) {
	h := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	svg := get(t, h, "/s/"+mainID+"/minimap?filter=all").Body.String()
	for _, want := range []string{`class="mm-fork"`, `class="mm-label"`, `class="mm-summary"`, `class="mm-leaf"`, `data-rows="`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the minimap lacks %s", want)
		}
	}
	srv, key, _ := longChain(t)
	lh := srv.Handler()
	big := get(t, lh, "/s/"+key+"/minimap?filter=all").Body.String()
	if len(big) > 20<<10 {
		t.Errorf("the minimap of 1,500 rows is %d bytes", len(big))
	}
	rec := get(t, lh, "/s/"+key+"/rows?filter=all&row=1200")
	first, _ := strconv.Atoi(rec.Header().Get("X-Tree-First"))
	if rec.Code != 200 || first > 1200 || first+500 < 1200 || !strings.Contains(rec.Body.String(), `data-more="before"`) {
		t.Errorf("rows around 1200: %d, first %d", rec.Code, first)
	}
	if rec := get(t, lh, "/s/"+key+"/rows?row=-3"); rec.Code != 400 {
		t.Errorf("a bad row: %d", rec.Code)
	}
}

// TestBrowserMinimap: a long tree gets the strip; a click a tenth of the
// way down brings the rows there (the page opened at the leaf, 1,500 rows on).
func TestBrowserMinimap(t *testing.T) {
	ctx, console := browse(t)
	srv, key, _ := longChain(t)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	b := browserRun{t, ctx}
	b.do("open", chromedp.EmulateViewport(1440, 900), chromedp.Navigate(ts.URL+"/s/"+key+"?filter=all"),
		chromedp.WaitVisible(chromedp.CSS(`#minimap .mm-view svg`)))
	b.do("click a tenth down", chromedp.Evaluate[chromedp.Void](`(() => {
		const r = document.getElementById('minimap').getBoundingClientRect();
		document.getElementById('minimap').dispatchEvent(new MouseEvent('click', {bubbles: true, clientX: r.left + 8, clientY: r.top + r.height * 0.1}));
	})()`), b.poll("rows near a tenth down", `(() => { const s = document.querySelector('#tree .row.sel'); const k = Number(document.getElementById('tree').dataset.first) + Array.from(document.querySelectorAll('#tree .row')).indexOf(s); return !!s && k > 50 && k < 300; })()`))
	saveShot(t, ctx, "minimap-1440")
	checkConsole(t, console)
}

// TestFamilySVG: the lineage graph of the demo's family: the session, its
// fork under it with the entry it left from; a fork whose parent file is
// gone is shown as such.
func TestFamilySVG(t *testing.T) {
	root := demoRoot(t)
	h := newServer(t, openLib(t, root), nil).Handler()
	for _, key := range []string{mainID, forkID} {
		svg := get(t, h, "/s/"+key+"/family.svg").Body.String()
		if strings.Count(svg, "<circle") != 2 || !strings.Contains(svg, `href="/s/`+forkID+`"`) || !strings.Contains(svg, "from ") || !strings.Contains(svg, `/s/`+mainID+`?target=`) {
			t.Errorf("%s: the family graph lacks a member or the fork point:\n%s", key, svg)
		}
	}
	if !strings.Contains(get(t, h, "/s/"+forkID).Body.String(), `/family.svg"`) {
		t.Error("the fork's page has no link to its lineage")
	}
	// The parent file goes: the fork's family starts with a note saying so.
	file := sessionFile(t, openLib(t, root), mainID)
	os.Remove(file)
	h2 := newServer(t, openLib(t, root), nil).Handler()
	if svg := get(t, h2, "/s/"+forkID+"/family.svg").Body.String(); !strings.Contains(svg, "gone or outside the root") {
		t.Errorf("a fork of a gone file:\n%s", svg)
	}
}

// TestMapFocus: a map over its budget draws a focused entry's subtree on request.
func TestMapFocus(t *testing.T) {
	root := t.TempDir()
	lines := []string{sessiontest.Header, sessiontest.User("r", "", 1, "root")}
	for i := range 1200 {
		id := fmt.Sprintf("b%04d", i)
		lines = append(lines, sessiontest.User(id, "r", 2, "branch"), sessiontest.Asst(id+"a", id, 3, "answer"))
	}
	writeSession(t, root, "--w--", "wide.jsonl", sessiontest.Lines(lines...))
	h := newServer(t, openLib(t, root), nil).Handler()
	svg := get(t, h, "/s/s1/map").Body.String()
	if !strings.Contains(svg, `data-focus="`) || strings.Count(svg, `class="seg `) > 1000 {
		t.Fatalf("an overfull map draws %d segments, no detail link", strings.Count(svg, `class="seg `))
	}
	if strings.Contains(svg, `data-first="b1100"`) {
		t.Fatal("b1100 is drawn without focus: the test checks nothing")
	}
	focused := get(t, h, "/s/s1/map?focus=b1100").Body.String()
	if !strings.Contains(focused, `data-first="b1100"`) {
		t.Error("the focused entry's segment is not drawn")
	}
	if rec := get(t, h, "/s/s1/map?focus=nope"); rec.Code != 404 {
		t.Errorf("unknown focus: %d", rec.Code)
	}
}

// TestMapEscapesAndHits: session text reaches the map's SVG escaped (a
// label holding markup), and ?q= marks the entries the tree's search finds.
func TestMapEscapesAndHits(t *testing.T) {
	root := t.TempDir()
	writeSession(t, root, "--w--", "marks.jsonl", sessiontest.Lines(sessiontest.Header,
		sessiontest.User("u1", "", 1, "find the needle"),
		sessiontest.Asst("a1", "u1", 2, "looking"),
		sessiontest.User("u2", "a1", 3, "try A"),
		sessiontest.User("u3", "a1", 4, "another needle"),
		sessiontest.Entry("label", "l1", "u3", 5, `,"targetId":"u2","label":"<script>alert(1)</script>"`),
	))
	h := newServer(t, openLib(t, root), nil).Handler()
	rec := get(t, h, "/s/s1/map")
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "image/svg+xml") {
		t.Fatalf("content type %q", ct)
	}
	svg := rec.Body.String()
	if strings.Contains(svg, "<script") || !strings.Contains(svg, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the label is not escaped:\n%s", svg)
	}
	for _, want := range []string{`class="mk root"`, `class="mk fork"`, `class="mk leaf"`, `class="mk tag"`, `data-entry="u2"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the map lacks %s", want)
		}
	}
	if strings.Contains(svg, `class="mk hit"`) {
		t.Error("hits without a search")
	}
	hits := get(t, h, "/s/s1/map?q=needle").Body.String()
	if n := strings.Count(hits, `class="mk hit"`); n != 2 {
		t.Errorf("%d hits marked for 'needle', want 2 (u1, u3)", n)
	}
	if rec := get(t, h, "/s/s1/map?q=needle&filter=nope"); rec.Code != 400 {
		t.Errorf("a bad filter: %d", rec.Code)
	}
}
