package web

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
)

// sseEvent is one server-sent event; comments have Name ":".
type sseEvent struct{ Name, Data string }

// openStream connects to an event stream and returns its events as they arrive.
func openStream(t testing.TB, ctx context.Context, url string) (<-chan sseEvent, *http.Response) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, ":"):
				select {
				case out <- sseEvent{Name: ":", Data: strings.TrimSpace(line[1:])}:
				case <-ctx.Done():
					return
				}
			case strings.HasPrefix(line, "event: "):
				ev.Name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				data = append(data, line[len("data: "):])
			case line == "":
				if ev.Name == "" && data == nil {
					continue // the end of a heartbeat comment: no event (as parseSSE)
				}
				ev.Data = strings.Join(data, "\n")
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
				ev, data = sseEvent{}, nil
			}
		}
	}()
	return out, res
}

// nextEvent returns the next event other than a heartbeat.
func nextEvent(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("stream ended")
			}
			if ev.Name != ":" {
				return ev
			}
		case <-timeout:
			t.Fatal("no event")
		}
	}
}

func sessionFile(t *testing.T, lib *library.Library, id string) string {
	t.Helper()
	f, ok := lib.File(id)
	if !ok {
		t.Fatalf("no session %s", id)
	}
	return f
}

func appendLines(t *testing.T, file string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

func sessionVersion(t *testing.T, lib *library.Library, id string) string {
	t.Helper()
	var v string
	if err := lib.View(id, func(s *sessions.Session) error { v = version(s); return nil }); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSessionEvents(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	fe := newFakeEvents()
	srv := newServer(t, lib, fe)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close) // after t.Context() is cancelled: the streams end first

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, res := openStream(t, ctx, ts.URL+"/s/"+mainID+"/events?v="+sessionVersion(t, lib, mainID))
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	ch := fe.next(t)
	if ev := nextEvent(t, events); ev.Name != "hello" {
		t.Fatalf("first event %+v, want hello", ev)
	}

	// pi appends a user turn after the leaf (the session_info entry, hidden in the default filter).
	file := sessionFile(t, lib, mainID)
	appendLines(t, file,
		`{"type":"message","id":"feed0001","parentId":"4638afcc","timestamp":"2026-05-12T09:00:00.000Z","message":{"role":"user","content":"Now <b>ship</b> it","timestamp":1778576400000}}`,
		`{"type":"message","id":"feed0002","parentId":"feed0001","timestamp":"2026-05-12T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Shipped."}],"provider":"anthropic","model":"claude-opus-4-5","usage":{"totalTokens":10,"cost":{"total":0.01}},"stopReason":"stop","timestamp":1778576402000}}`)
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
	ch <- library.Change{Key: mainID, File: file, Kind: library.KindAppend, NewIDs: []string{"feed0001", "feed0002"}, Leaf: "feed0002", OldLeaf: "4638afcc"}

	stats := nextEvent(t, events)
	if stats.Name != "stats" || !strings.Contains(stats.Data, `id="session-stats"`) || !strings.Contains(stats.Data, "45 entries") {
		t.Fatalf("stats event %+v", stats)
	}
	delta := nextEvent(t, events)
	if delta.Name != "delta" {
		t.Fatalf("event %+v, want delta", delta)
	}
	for _, want := range []string{
		`data-insert data-after="41"`,                // after the last visible row of the active branch
		`data-ref="feed0001"`, `data-ref="feed0002"`, // the new rows
		`data-old-leaf="41"`, `data-new-leaf="44"`, // the rows marked "← active"
		`id="n41"`, // the old leaf's row is redrawn: it lost "← active" and gained a child
		"Now &lt;b&gt;ship&lt;/b&gt; it",
		"<span class=\"here\"> ← active</span></div>",
	} {
		if !strings.Contains(delta.Data, want) {
			t.Errorf("delta lacks %q:\n%s", want, delta.Data)
		}
	}
	if strings.Contains(delta.Data, `data-ref="c0b94d8f"`) {
		t.Errorf("delta redraws an unchanged row:\n%s", delta.Data)
	}

	// The same label set again has a new time (shift+T): its row is redrawn.
	appendLines(t, file,
		`{"type":"label","id":"feed0003","parentId":"feed0002","timestamp":"2026-05-13T10:00:00.000Z","targetId":"09b043aa","label":"rejected idea"}`)
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
	ch <- library.Change{Key: mainID, File: file, Kind: library.KindAppend, NewIDs: []string{"feed0003"}, Leaf: "feed0003", OldLeaf: "feed0002"}
	if ev := nextEvent(t, events); ev.Name != "stats" {
		t.Fatalf("event %+v, want stats", ev)
	}
	relabel := nextEvent(t, events)
	if relabel.Name != "delta" || !strings.Contains(relabel.Data, `data-ref="09b043aa"`) || !strings.Contains(relabel.Data, `class="lt">5/13 10:00 </span>`) {
		t.Fatalf("event %+v, want a delta redrawing the relabelled row with its new time", relabel)
	}

	// A rewrite makes the page reload its rows; a removal says the session is gone.
	ch <- library.Change{Key: mainID, Kind: library.KindReload}
	if ev := nextEvent(t, events); ev.Name != "stats" {
		t.Fatalf("event %+v, want stats", ev)
	}
	if ev := nextEvent(t, events); ev.Name != "reset" {
		t.Fatalf("event %+v, want reset", ev)
	}
	ch <- library.Change{Key: darkID, Kind: library.KindAppend} // another session: nothing
	ch <- library.Change{Key: mainID, Kind: library.KindRemove}
	if ev := nextEvent(t, events); ev.Name != "gone" {
		t.Fatalf("event %+v, want gone", ev)
	}

	// The client leaves: the handler unsubscribes.
	cancel()
	select {
	case <-fe.cancels:
	case <-time.After(guard):
		t.Fatal("the stream did not end when the client left")
	}
}

func TestSessionEventsStaleVersion(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	fe := newFakeEvents()
	ts := httptest.NewServer(newServer(t, lib, fe).Handler())
	t.Cleanup(ts.Close)
	events, _ := openStream(t, t.Context(), ts.URL+"/s/"+mainID+"/events?v=1-1")
	// The page is older than the stream: fresh counts, then reload the rows.
	if ev := nextEvent(t, events); ev.Name != "stats" || !strings.Contains(ev.Data, "43 entries") {
		t.Fatalf("event %+v, want stats with 43 entries", ev)
	}
	if ev := nextEvent(t, events); ev.Name != "reset" {
		t.Fatalf("event %+v, want reset", ev)
	}
}

func TestEventsHeartbeatAndShutdown(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	fe := newFakeEvents()
	srv := newServer(t, lib, fe)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close) // after t.Context() is cancelled: the streams end first
	for _, path := range []string{"/events", "/s/" + darkID + "/events"} {
		events, _ := openStream(t, t.Context(), ts.URL+path)
		fe.next(t)
		select {
		case ev := <-events:
			for ev.Name != ":" {
				ev = <-events
			}
			if ev.Data != "ping" {
				t.Errorf("%s: comment %q", path, ev.Data)
			}
		case <-time.After(guard):
			t.Fatalf("%s: no heartbeat", path)
		}
	}
	srv.Close() // as http.Server.RegisterOnShutdown does
	for range 2 {
		select {
		case <-fe.cancels:
		case <-time.After(guard):
			t.Fatal("a stream did not end on shutdown")
		}
	}
}

func TestListEvents(t *testing.T) {
	root := demoRoot(t)
	lib := openLib(t, root)
	fe := newFakeEvents()
	ts := httptest.NewServer(newServer(t, lib, fe).Handler())
	t.Cleanup(ts.Close)
	events, _ := openStream(t, t.Context(), ts.URL+"/events?q=stripe")
	ch := fe.next(t)

	file := filepath.Join(root, "--home-dev-weather--", "2026-06-01T10-00-00-000Z_newsession.jsonl")
	body := `{"type":"session","version":3,"id":"newsession","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/home/dev/weather"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"user","content":"Add Stripe payments","timestamp":1780308001000}}
`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
	ch <- library.Change{Key: "newsession", File: file, Kind: library.KindNew}
	ev := nextEvent(t, events)
	if ev.Name != "row" || !strings.Contains(ev.Data, "Add Stripe payments") || !strings.Contains(ev.Data, `data-group="`+domID("p", "/home/dev/weather")+`"`) {
		t.Fatalf("event %+v", ev)
	}
	// Then its project's header, with the totals of the sessions the page lists.
	if ev := nextEvent(t, events); ev.Name != "group" || !strings.Contains(ev.Data, `id="`+domID("p", "/home/dev/weather")+`-head"`) || !strings.Contains(ev.Data, "1 session ·") {
		t.Fatalf("event %+v, want the project's header", ev)
	}
	notGroup := func() sseEvent {
		for {
			if ev := nextEvent(t, events); ev.Name != "group" {
				return ev
			}
		}
	}
	// A session that does not match the page's search is not sent as a row.
	ch <- library.Change{Key: darkID, Kind: library.KindAppend}
	if ev := notGroup(); ev.Name != "gone" || ev.Data != domID("s", darkID) {
		t.Fatalf("event %+v, want gone", ev)
	}
	ch <- library.Change{Key: "newsession", Kind: library.KindRemove}
	if ev := notGroup(); ev.Name != "gone" || ev.Data != domID("s", "newsession") {
		t.Fatalf("event %+v, want gone", ev)
	}
}

func TestEventsUnknownSession(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	if rec := get(t, srv, "/s/nope/events", "Accept", "text/event-stream"); rec.Code != http.StatusNotFound || rec.Body.Len() != 0 {
		t.Errorf("unknown session: status %d, body %q", rec.Code, rec.Body)
	}
}

// TestSessionEventsShared: pages that show the same state get the same
// answer to a change, computed once; a page with another filter gets its own.
func TestSessionEventsShared(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	fe := newFakeEvents()
	srv := newServer(t, lib, fe)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ver := sessionVersion(t, lib, mainID)
	var streams []<-chan sseEvent
	var chans []chan library.Change
	for _, q := range []string{"", "", "&filter=all"} {
		ev, _ := openStream(t, ctx, ts.URL+"/s/"+mainID+"/events?v="+ver+q)
		chans = append(chans, fe.next(t))
		if e := nextEvent(t, ev); e.Name != "hello" {
			t.Fatalf("first event %+v", e)
		}
		streams = append(streams, ev)
	}
	file := sessionFile(t, lib, mainID)
	appendLines(t, file, `{"type":"message","id":"feed0001","parentId":"4638afcc","timestamp":"2026-05-12T09:00:00.000Z","message":{"role":"user","content":"again","timestamp":1778576400000}}`)
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
	for _, ch := range chans {
		ch <- library.Change{Key: mainID, File: file, Kind: library.KindAppend, NewIDs: []string{"feed0001"}, Leaf: "feed0001", OldLeaf: "4638afcc"}
	}
	var deltas []string
	for _, ev := range streams {
		if e := nextEvent(t, ev); e.Name != "stats" {
			t.Fatalf("event %+v, want stats", e)
		}
		d := nextEvent(t, ev)
		if d.Name != "delta" || !strings.Contains(d.Data, `data-ref="feed0001"`) {
			t.Fatalf("event %+v, want a delta with the new row", d)
		}
		deltas = append(deltas, d.Data)
	}
	if deltas[0] != deltas[1] {
		t.Errorf("two pages with one state got different deltas")
	}
	if deltas[0] == deltas[2] {
		t.Errorf("the page with filter=all got the default filter's delta")
	}
	srv.steps.mu.Lock()
	n := len(srv.steps.m)
	srv.steps.mu.Unlock()
	if n != 2 {
		t.Errorf("%d answers computed for two states, want 2", n)
	}
}
