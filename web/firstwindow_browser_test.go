package web

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserFirstWindow opens a long session at its leaf on a phone and
// a desktop: the first window of the tree shows the selected row in view
// with a screen's worth of rows above it, and holds far fewer rows than
// the session (the first paint draws what is seen); the rows above come as
// the tree scrolls up, before the scroll reaches them (the button that
// asks for them lies further above the view than the page looks ahead, so
// nothing is asked for before the user scrolls). With PIWEB_SHOTS=DIR it
// saves screenshots at 390x844 and 1440x900.
func TestBrowserFirstWindow(t *testing.T) {
	ctx, console := browse(t)
	root := demoRoot(t)
	bigKey, _ := writeBigSession(t, root, 3000)
	lib := openLib(t, root)
	srv := newServer(t, lib, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() }) // the live streams first: the browser holds one
	b := browserRun{t, ctx}
	for _, vp := range []struct{ w, h int64 }{{390, 844}, {1440, 900}} {
		b.do(fmt.Sprintf("open at %dx%d", vp.w, vp.h), chromedp.EmulateViewport(vp.w, vp.h),
			chromedp.Navigate(ts.URL+"/s/"+bigKey), chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")))
		rows, _ := strconv.Atoi(b.eval(`String(document.querySelectorAll('#tree .row').length)`))
		if rows > firstRows || rows <= rowsBefore {
			t.Errorf("%dpx: %d rows in the first window, want %d to %d", vp.w, rows, rowsBefore+1, firstRows)
		}
		// The selected row is in view; the rows above it fill the pane.
		inView := b.eval(`(() => { const t = document.querySelector('#tree'), r = t.querySelector('.row.sel').getBoundingClientRect(), p = t.getBoundingClientRect();
			return String(r.top >= p.top && r.bottom <= p.bottom && t.scrollTop > 0) })()`)
		if inView != "true" {
			t.Errorf("%dpx: the selected row is not in view below rows above it", vp.w)
		}
		// The button for earlier rows is further above the view than the
		// page's look-ahead (600px): the first paint asks for nothing more.
		ahead, _ := strconv.Atoi(b.eval(`(() => { const t = document.querySelector('#tree'), m = t.querySelector('.more[data-more="before"]');
			return String(Math.round(t.getBoundingClientRect().top - m.getBoundingClientRect().bottom)) })()`))
		if ahead <= 600 {
			t.Errorf("%dpx: the earlier rows' button is %dpx above the view, within the 600px the page looks ahead", vp.w, ahead)
		}
		b.do("the minimap drawn", b.poll("minimap", `!!document.querySelector('#minimap .mm-view svg')`))
		saveShot(t, ctx, fmt.Sprintf("firstwindow-%d", vp.w))
		// The minimap marks the selection where it is in the whole tree:
		// near the end (the window's first row is known from the page).
		const selRow = `(() => { const t = document.querySelector('#tree'), all = Array.from(t.querySelectorAll('.row'));
			return String(Number(t.dataset.first) + all.indexOf(t.querySelector('.row.sel'))) })()`
		at := b.eval(selRow)
		if k, _ := strconv.Atoi(at); k < 2900 {
			t.Errorf("%dpx: the selection is row %s of the tree, want one of its last rows", vp.w, at)
		}
		f, _ := strconv.ParseFloat(b.eval(`String(parseFloat(document.querySelector('#minimap .mm-here').style.top) / document.querySelector('#tree').clientHeight)`), 64)
		if f < 0.9 {
			t.Errorf("%dpx: the minimap marks the selection %.2f of the way down, want near the end", vp.w, f)
		}
		b.do("scroll up the tree", chromedp.Evaluate[chromedp.Void](`document.querySelector('#tree').scrollTop = 0`),
			b.poll("earlier rows", `document.querySelectorAll('#tree .row').length > `+strconv.Itoa(rows)))
		if got := b.eval(selRow); got != at {
			t.Errorf("%dpx: with earlier rows loaded the selection is row %s, was %s", vp.w, got, at)
		}
	}
	checkConsole(t, console)
}
