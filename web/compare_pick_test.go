package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestComparePicker: /s/KEY/compare without a and b helps pick them: the
// branch tips with their branch's first message, cost and length, in a
// form that asks the comparison; with a alone, a is picked as A.
func TestComparePicker(t *testing.T) {
	h := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	rec := get(t, h, "/s/"+mainID+"/compare")
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("status %d:\n%s", rec.Code, body)
	}
	for _, want := range []string{
		`<form class="cmp-pick" method="get" action="/s/` + mainID + `/compare"`,
		`name="a" value="c8578d56" checked`,                     // where pi resumes is A
		`name="b" value="`,                                      // a tip to pick as B
		"Alternatively, could we just drop the cache entirely?", // the rejected branch's first message
		"Do both: key by city and date",                         // the resumed branch's
		"pi resumes here",
		"$0.727",                    // the resumed path's cost
		`<td class="c-num">38</td>`, // its length
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the picker lacks %q", want)
		}
	}
	if strings.Contains(body, "Bad request") {
		t.Error("the picker says Bad request")
	}
	picked := get(t, h, "/s/"+mainID+"/compare?a=09b043aa").Body.String()
	if !strings.Contains(picked, `name="a" value="09b043aa" checked`) || !strings.Contains(picked, `name="b" value="c8578d56" checked`) {
		t.Errorf("with a=09b043aa, A is not that entry or B is not the other tip")
	}
	// The JSON API still wants both.
	if rec := get(t, h, "/api/sessions/"+mainID+"/compare?a=09b043aa"); rec.Code != 400 {
		t.Errorf("the API without b: status %d", rec.Code)
	}
}

// TestBrowserComparePickHint: after "compare with…" the tree says, under
// the selected row, what to click next; a click on another row compares.
func TestBrowserComparePickHint(t *testing.T) {
	b, url := demoPage(t)
	b.do("open", chromedp.Navigate(url+"/s/"+mainID+"?target=09b043aa"), chromedp.WaitVisible(chromedp.CSS("#tree .row.sel")),
		b.poll("conversation", `document.querySelector('#conv-inner')?.dataset.ref === '09b043aa'`))
	b.do("shift+C", chromedp.KeyEvent("C", chromedp.KeyModifiers(chromedp.ModifierShift)),
		b.poll("a hint right under the selected row", `(() => {
			const h = document.querySelector('#tree .pick-hint'), r = document.querySelector('#tree .row.sel');
			return !!h && h.previousElementSibling === r && h.innerText.includes('click the entry to compare') && h.getBoundingClientRect().height > 0;
		})()`))
	saveShot(t, b.ctx, "compare-hint-1440")
	b.do("pick B", chromedp.Click(chromedp.CSS(`#tree .row[data-ref="c8578d56"] .txt`)))
	b.do("compared", chromedp.WaitVisible(chromedp.CSS(".cmp-strip")), b.poll("the comparison", `location.pathname.endsWith('/compare') && location.search.includes('a=09b043aa') && location.search.includes('b=c8578d56') && !!document.querySelector('.cmp-strip')`))
	b.do("the picker", chromedp.Navigate(url+"/s/"+mainID+"/compare"), chromedp.WaitVisible(chromedp.CSS(".cmp-tips")))
	saveShot(t, b.ctx, "compare-pick-1440")
	b.do("compare two tips", chromedp.Click(chromedp.CSS(`.cmp-pick button[type=submit]`)))
	b.do("compared", chromedp.WaitVisible(chromedp.CSS(".cmp-strip")), b.poll("the comparison", `!!document.querySelector('.cmp-strip') && location.search.includes('a=c8578d56')`))
	b.do("the picker on a phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(url+"/s/"+mainID+"/compare"), chromedp.WaitVisible(chromedp.CSS(".cmp-tips")),
		b.poll("nothing runs off the side", `document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1`))
	saveShot(t, b.ctx, "compare-pick-390")
}
