package web

import (
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/piweb/piweb/internal/sessiontest"
)

// longChain serves one 1,500-entry chain; it returns the handler's server and the session's key and leaf.
func longChain(t *testing.T) (*Server, string, string) {
	root := t.TempDir()
	content := sessiontest.String(5, 1500, sessiontest.Options{Chain: true, ID: "long"})
	writeSession(t, root, "--w--", "long.jsonl", content)
	lib := openLib(t, root)
	srv := newServer(t, lib, nil)
	in := inspectOf(t, lib, "long", "")
	return srv, "long", *in.LeafID
}

var dataP = regexp.MustCompile(`<article class="item[^"]*" id="[^"]*" data-p="(\d+)"`)

// TestJumpInPath: the conversation opens at a depth (the root, or any),
// with buttons for the pages above and below, and continues downwards
// without repeating what it showed.
func TestJumpInPath(t *testing.T) {
	srv, key, leaf := longChain(t)
	h := srv.Handler()
	page := get(t, h, "/s/"+key+"?target="+leaf).Body.String()
	if !strings.Contains(page, `class="jump"`) || !strings.Contains(page, `name="depth"`) {
		t.Fatal("a long path has no jump form")
	}
	first := get(t, h, "/s/"+key+"/entry?e="+leaf+"&depth=1").Body.String()
	ps := dataP.FindAllStringSubmatch(first, -1)
	if len(ps) == 0 || ps[0][1] != "0" {
		t.Fatalf("depth 1 does not start at the root: %v", ps[:min(3, len(ps))])
	}
	if strings.Contains(first, "Show earlier") || !strings.Contains(first, "Show later") {
		t.Fatalf("the root's page: earlier %v, later %v", strings.Contains(first, "Show earlier"), strings.Contains(first, "Show later"))
	}
	next := regexp.MustCompile(`hx-get="([^"]*dir=down[^"]*)"`).FindStringSubmatch(first)
	if next == nil {
		t.Fatal("no url of the page below")
	}
	more := get(t, h, strings.ReplaceAll(next[1], "&amp;", "&")).Body.String()
	ps2 := dataP.FindAllStringSubmatch(more, -1)
	if len(ps2) == 0 || atoi(ps2[0][1]) <= atoi(ps[len(ps)-1][1]) {
		t.Fatalf("the page below does not continue: %v after %v", ps2[:min(1, len(ps2))], ps[len(ps)-1])
	}
	if strings.Contains(more, "Show earlier") {
		t.Error("a continuation repeats the earlier button")
	}
	mid := get(t, h, "/s/"+key+"/entry?e="+leaf+"&depth=700").Body.String()
	if !strings.Contains(mid, "Show earlier") || !strings.Contains(mid, "Show later") {
		t.Error("a page in the middle lacks a button up or down")
	}
	for _, bad := range []string{"&depth=0", "&depth=x", "&from=3&before=4"} {
		if rec := get(t, h, "/s/"+key+"/entry?e="+leaf+bad); rec.Code != 400 {
			t.Errorf("%s: %d", bad, rec.Code)
		}
	}
}

// TestBrowserJumpAndScroll: "start" shows the root, and scrolling to the
// bottom of the conversation brings the next page without a click.
func TestBrowserJumpAndScroll(t *testing.T) {
	ctx, console := browse(t)
	srv, key, leaf := longChain(t)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	b := browserRun{t, ctx}
	b.do("open the leaf", chromedp.Navigate(ts.URL+"/s/"+key+"?target="+leaf), chromedp.WaitVisible(chromedp.CSS("#conv-inner .jump")))
	b.do("start", chromedp.Click(chromedp.CSS(`#conv-inner .jump a`)),
		b.poll("the root first", `document.querySelector('#msgs article.item')?.dataset.p === '0'`))
	n := b.eval(`String(document.querySelectorAll('#msgs article.item').length)`)
	b.do("scroll down", chromedp.Evaluate[chromedp.Void](`document.querySelector('#msgs .later').scrollIntoView()`),
		b.poll("the next page came", `document.querySelectorAll('#msgs article.item').length > `+n))
	saveShot(t, ctx, "jump-1440")
	checkConsole(t, console)
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
