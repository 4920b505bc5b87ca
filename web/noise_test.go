package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// noiseSession writes a session with chat entries, then a run of n
// thinking-level changes (t0000…), then a user turn and its answer (the
// leaf): the tree with the "all" filter has 1+chat+n+2 rows.
func noiseSession(t *testing.T, chat, n int) string {
	t.Helper()
	root := t.TempDir()
	lines := []string{sessiontest.Header, sessiontest.User("u1", "", 1, "start")}
	parent := "u1"
	for i := range chat {
		id := fmt.Sprintf("c%04d", i)
		if i%2 == 0 {
			lines = append(lines, sessiontest.User(id, parent, 2, fmt.Sprintf("question %d", i)))
		} else {
			lines = append(lines, sessiontest.Asst(id, parent, 2, fmt.Sprintf("answer %d", i)))
		}
		parent = id
	}
	for i := range n {
		id := fmt.Sprintf("t%04d", i)
		lines = append(lines, sessiontest.Entry("thinking_level_change", id, parent, 3, `,"thinkingLevel":"high"`))
		parent = id
	}
	lines = append(lines, sessiontest.User("u2", parent, 4, "after the noise"), sessiontest.Asst("a2", "u2", 5, "ok"))
	writeSession(t, root, "--w--", "noise.jsonl", sessiontest.Lines(lines...))
	return root
}

var (
	rowRef   = regexp.MustCompile(`role="treeitem" data-p="(\d+)" data-vp="-?\d+" data-nc="\d+" data-ref="([^"]+)"`)
	runCount = regexp.MustCompile(`× ([\d\x{202f}]+) thinking-level changes`)
)

// drawnRows lists the refs of the rows a fragment draws, and its runs' counts.
func drawnRows(html string) (refs []string, pos []int, runs []string) {
	for _, m := range rowRef.FindAllStringSubmatch(html, -1) {
		p, _ := strconv.Atoi(m[1])
		refs, pos = append(refs, m[2]), append(pos, p)
	}
	for _, m := range runCount.FindAllStringSubmatch(html, -1) {
		runs = append(runs, m[1])
	}
	return refs, pos, runs
}

// TestNoiseRunsOneRow: a run of 1,204 thinking-level changes is one row,
// "× 1,204 thinking-level changes", however the tree is paged: the first
// page, a page around any row (the minimap), and the pages before and
// after, which together draw every other row once.
func TestNoiseRunsOneRow(t *testing.T) {
	h := newServer(t, openLib(t, noiseSession(t, 300, 1204)), nil).Handler()
	const total = 1 + 300 + 1204 + 2
	checkPage := func(name, html string) ([]string, []int) {
		t.Helper()
		refs, pos, runs := drawnRows(html)
		members := 0
		for _, r := range refs {
			if strings.HasPrefix(r, "t") && r != "t0000" {
				members++
			}
		}
		if members > 0 || len(runs) > 1 || len(runs) == 1 && (runs[0] != views.Count(1204) || !slices.Contains(refs, "t0000")) {
			t.Errorf("%s: %d rows of the run drawn, runs %v", name, members, runs)
		}
		return refs, pos
	}
	page := get(t, h, "/s/s1?filter=all").Body.String()
	page = page[strings.Index(page, `id="tree"`):strings.Index(page, `id="minimap"`)] // the tree, not the conversation
	if refs, _ := checkPage("the first page", page); !slices.Contains(refs, "t0000") || !slices.Contains(refs, "a2") {
		t.Errorf("the first page (at the leaf) does not hold the run: %d rows", len(refs))
	}
	for _, k := range []int{0, 100, 356, 856, 1300, 1504, total - 1} {
		rec := get(t, h, fmt.Sprintf("/s/s1/rows?filter=all&row=%d", k))
		refs, _ := checkPage(fmt.Sprintf("row %d", k), rec.Body.String())
		sel := rec.Header().Get("X-Tree-Selected")
		if k > 301 && k < 301+1204 && !slices.Contains(refs, "t0000") {
			t.Errorf("row %d is in the run, whose row the page does not draw", k)
		}
		if sel == "" || sel == "-1" {
			t.Errorf("row %d: no row selected", k)
		}
	}
	// Page forward from the top, then back from the bottom: each row once.
	for _, dir := range []string{"after", "before"} {
		start := "/s/s1/rows?filter=all&row=0"
		if dir == "before" {
			start = fmt.Sprintf("/s/s1/rows?filter=all&row=%d", total-1)
		}
		seen := map[string]int{}
		html := get(t, h, start).Body.String()
		for n := 0; ; n++ {
			refs, pos := checkPage(fmt.Sprintf("%s page %d", dir, n), html)
			for _, r := range refs {
				seen[r]++
			}
			if n > 20 || !strings.Contains(html, `data-more="`+dir+`"`) {
				break
			}
			anchor := pos[len(pos)-1]
			if dir == "before" {
				anchor = pos[0]
			}
			html = get(t, h, fmt.Sprintf("/s/s1/rows?filter=all&%s=%d", dir, anchor)).Body.String()
		}
		if len(seen) != total-1203 {
			t.Errorf("paging %s drew %d rows, want %d", dir, len(seen), total-1203)
		}
		for r, n := range seen {
			if n > 1 {
				t.Errorf("paging %s drew %s %d times", dir, r, n)
			}
		}
	}
	// Opened, the run is drawn row by row, paged as any rows.
	open := get(t, h, "/s/s1/rows?filter=all&open=t0000&row=700").Body.String()
	if refs, _, runs := drawnRows(open); !slices.Contains(refs, "t0400") || len(runs) > 1 || !strings.Contains(open, `aria-expanded="true"`) && slices.Contains(refs, "t0000") {
		t.Errorf("the opened run: %d rows, runs %v", len(refs), runs)
	}
	// An entry inside the run, selected, opens it.
	sel := get(t, h, "/s/s1?filter=all&target=t0700").Body.String()
	if !strings.Contains(sel, `data-open="t0000"`) || !strings.Contains(sel, `data-ref="t0700"`) {
		t.Errorf("selecting t0700 does not open its run")
	}
	if rec := get(t, h, "/s/s1/rows?filter=all&target=t0700"); rec.Header().Get("X-Tree-Open") != "t0000" || !strings.Contains(rec.Body.String(), `data-ref="t0700"`) {
		t.Errorf("rows around t0700: X-Tree-Open %q", rec.Header().Get("X-Tree-Open"))
	}
}

// TestNoiseRunsInConversation: along a path, the run is one line of the
// conversation that opens on its first entries, whatever the tree's filter.
func TestNoiseRunsInConversation(t *testing.T) {
	h := newServer(t, openLib(t, noiseSession(t, 6, 1204)), nil).Handler()
	for _, filter := range []string{"", "&filter=all", "&filter=no-tools", "&filter=user-only"} {
		body := get(t, h, "/s/s1/entry?e=a2"+filter).Body.String()
		if n := strings.Count(body, `class="noise-run"`); n != 1 || !strings.Contains(body, "× "+views.Count(1204)+" thinking-level changes") {
			t.Errorf("filter %q: %d runs in the conversation", filter, n)
		}
		if n := strings.Count(body, `class="item i-setting`); n > runShown {
			t.Errorf("filter %q: %d setting items in the conversation", filter, n)
		}
		if !strings.Contains(body, "after the noise") || !strings.Contains(body, "question 0") {
			t.Errorf("filter %q: the entries around the run are not on the page", filter)
		}
	}
	// The session page opens on the same conversation.
	if page := get(t, h, "/s/s1?filter=all").Body.String(); strings.Count(page, `class="noise-run"`) != 1 {
		t.Error("the session page's conversation does not fold the run")
	}
	// Selected, an entry of the run is itself: the run before it folds.
	body := get(t, h, "/s/s1/entry?e=t0600").Body.String()
	if !strings.Contains(body, "× 600 thinking-level changes") || !strings.Contains(body, `class="item i-setting target"`) {
		t.Errorf("the conversation of t0600 does not fold the 600 before it")
	}
}

// TestNoiseRunsLive: pi appending to a run grows its row's count; the
// entry that was the leaf joins the run, and the new leaf is drawn.
func TestNoiseRunsLive(t *testing.T) {
	root := noiseSession(t, 2, 0)
	lib := openLib(t, root)
	file := sessionFile(t, lib, "s1")
	var lines []string
	parent := "a2"
	for i := range 10 {
		id := fmt.Sprintf("x%04d", i)
		lines = append(lines, sessiontest.Entry("thinking_level_change", id, parent, 6, `,"thinkingLevel":"low"`))
		parent = id
	}
	appendLines(t, file, lines...)
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
	fe := newFakeEvents()
	srv := newServer(t, lib, fe)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	h := srv.Handler()
	if page := get(t, h, "/s/s1?filter=all").Body.String(); !strings.Contains(page, "× 9 thinking-level changes") {
		t.Fatal("no run of 9 before the leaf")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, _ := openStream(t, ctx, ts.URL+"/s/s1/events?filter=all&v="+sessionVersion(t, lib, "s1"))
	ch := fe.next(t)
	if ev := nextEvent(t, events); ev.Name != "hello" {
		t.Fatalf("first event %+v", ev)
	}
	appendLines(t, file, sessiontest.Entry("thinking_level_change", "x0010", "x0009", 7, `,"thinkingLevel":"off"`))
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
	ch <- library.Change{Key: "s1", File: file, Kind: library.KindAppend, NewIDs: []string{"x0010"}, Leaf: "x0010", OldLeaf: "x0009"}
	if ev := nextEvent(t, events); ev.Name != "stats" {
		t.Fatalf("event %+v, want stats", ev)
	}
	delta := nextEvent(t, events)
	if delta.Name != "delta" {
		t.Fatalf("event %+v, want delta", delta)
	}
	x9 := posOf(t, lib, "s1", "x0009")
	for _, want := range []string{
		"× 10 thinking-level changes",                                     // the run's row, redrawn
		`data-remove="` + strconv.Itoa(x9) + `"`,                          // the old leaf joined the run
		`data-after="` + strconv.Itoa(posOf(t, lib, "s1", "x0000")) + `"`, // the new leaf comes after the run's row
		`data-ref="x0010"`,
	} {
		if !strings.Contains(delta.Data, want) {
			t.Errorf("the delta lacks %q:\n%s", want, delta.Data)
		}
	}
}

// posOf is the position of entry id in session key.
func posOf(t *testing.T, lib *library.Library, key, id string) int {
	t.Helper()
	pos := -1
	_ = lib.View(key, func(ss *sessions.Session) error { pos, _ = ss.Lookup(id); return nil })
	if pos < 0 {
		t.Fatalf("no entry %s", id)
	}
	return pos
}

// TestBrowserNoiseRuns: in the browser the run is one row that opens and
// closes on a click, stays one row as the tree loads earlier pages, and is
// one line of the conversation.
func TestBrowserNoiseRuns(t *testing.T) {
	b, url := servePage(t, noiseSession(t, 300, 1204))
	folds := `document.querySelectorAll('#tree .noise-fold').length`
	once := `(() => { const p = [...document.querySelectorAll('#tree .row')].map((r) => r.dataset.p); return new Set(p).size === p.length; })()`
	b.do("open", chromedp.Navigate(url+"/s/s1?filter=all"), chromedp.WaitVisible(chromedp.CSS(`#tree .noise-fold`)),
		b.poll("one row for the run", folds+` === 1 && document.querySelector('#tree .noise-fold').textContent === '× `+views.Count(1204)+` thinking-level changes' && !document.querySelector('#tree .row[data-ref="t0001"]')`),
		b.poll("one line in the conversation", `document.querySelectorAll('#conv .noise-run').length === 1 && document.querySelector('#conv .noise-run summary').innerText.includes('× `+views.Count(1204)+` thinking-level changes')`))
	saveShot(t, b.ctx, "noise-1440")
	b.do("load every earlier page", chromedp.Evaluate[chromedp.Void](`document.querySelector('#tree').scrollTop = 0`),
		b.poll("the first row", `!!document.querySelector('#tree .row[data-ref="u1"]') || (document.querySelector('#tree').scrollTop = 0, false)`),
		b.poll("still one row for the run, each row once", folds+` === 1 && `+once))
	b.do("open the run", chromedp.Click(chromedp.CSS(`#tree .noise-fold`)),
		b.poll("its rows", `!!document.querySelector('#tree .row[data-ref="t0001"]') && document.querySelector('#tree .noise-fold').getAttribute('aria-expanded') === 'true' && location.search.includes('open=t0000')`))
	b.do("close it", chromedp.Click(chromedp.CSS(`#tree .noise-fold`)),
		b.poll("one row again", `!document.querySelector('#tree .row[data-ref="t0001"]') && `+folds+` === 1 && !location.search.includes('open=')`))
	b.do("the conversation's line opens", chromedp.Click(chromedp.CSS(`#conv .noise-run summary`)),
		b.poll("its first entries", `document.querySelector('#conv .noise-run').open && document.querySelectorAll('#conv .noise-run .item').length === `+strconv.Itoa(runShown)))
	for _, w := range []int64{390, 1440} {
		b.do(fmt.Sprintf("the tree at %d", w), chromedp.EmulateViewport(w, 844), chromedp.Navigate(url+"/s/s1?filter=all"), chromedp.WaitVisible(chromedp.CSS(`#tree .noise-fold`)))
		saveShot(t, b.ctx, fmt.Sprintf("noise-tree-%d", w))
		b.do(fmt.Sprintf("the conversation at %d", w), chromedp.Navigate(url+"/s/s1?filter=all&target=u2"), chromedp.WaitVisible(chromedp.CSS(`#conv .noise-run summary`)))
		saveShot(t, b.ctx, fmt.Sprintf("noise-conv-%d", w))
	}
}
