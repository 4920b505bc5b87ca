package web

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestListDrawnOncePerState: the sessions page is drawn once for a state
// of the library and a query, served again (plain or compressed) without
// drawing, and drawn again at once after a session changes or a file
// turns out unreadable.
func TestListDrawnOncePerState(t *testing.T) {
	root := demoRoot(t)
	lib := openLib(t, root)
	srv := newServer(t, lib, nil)
	h := srv.Handler()
	draws := func() int64 { return srv.lists.draws.Load() }

	first := get(t, h, "/").Body.String()
	get(t, h, "/")
	if z := get(t, h, "/", "Accept-Encoding", "gzip"); z.Header().Get("Content-Encoding") != "gzip" {
		t.Error("the list was not sent compressed to a client that takes gzip")
	}
	if n := draws(); n != 1 {
		t.Fatalf("three requests for one list drew it %d times, want 1", n)
	}
	get(t, h, "/?sort=name")
	get(t, h, "/?sort=name")
	get(t, h, "/", "HX-Request", "true")
	if n := draws(); n != 3 {
		t.Fatalf("%d draws, want 3: one more for another sort, one for the list alone (htmx)", n)
	}

	file := sessionFile(t, lib, mainID)
	appendLines(t, file, `{"type":"session_info","id":"feed0010","parentId":"4638afcc","timestamp":"2026-05-12T09:00:00.000Z","name":"Renamed under the cache"}`)
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
	page := get(t, h, "/").Body.String()
	if n := draws(); n != 4 || page == first || !strings.Contains(page, "Renamed under the cache") {
		t.Fatalf("after a change: %d draws (want 4), new name shown: %v", n, strings.Contains(page, "Renamed under the cache"))
	}
	get(t, h, "/")
	if n := draws(); n != 4 {
		t.Fatalf("the changed list was drawn %d times in all, want 4", n)
	}

	bad := filepath.Join(root, "--home-dev-weather--", "2026-05-14T00-00-00-000Z_broken.jsonl")
	if err := os.WriteFile(bad, []byte("not <json>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lib.Refresh(bad) // an error: the file is not a session
	if page := get(t, h, "/").Body.String(); !strings.Contains(page, `1 unreadable file`) || draws() != 5 {
		t.Errorf("a new unreadable file: %d draws (want 5), listed: %v", draws(), strings.Contains(page, `1 unreadable file`))
	}
}

// TestListDrawnOnceConcurrently: requests for the same list while it is
// being drawn wait for that drawing instead of drawing it each.
func TestListDrawnOnceConcurrently(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil)
	h := srv.Handler()
	const clients = 8
	// Each request either draws (held until all have come) or joins.
	came, release := make(chan struct{}, clients), make(chan struct{})
	srv.lists.drawing = func(listKey) {
		came <- struct{}{}
		<-release
	}
	srv.lists.joined = func(listKey) { came <- struct{}{} }
	bodies := make([]string, clients)
	codes := make([]int, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			rec := get(t, h, "/")
			bodies[i], codes[i] = rec.Body.String(), rec.Code
		})
	}
	for range clients {
		select {
		case <-came:
		case <-time.After(guard): // a bound on a hang, not a measure
			close(release)
			t.Fatal("the requests neither drew nor waited")
		}
	}
	close(release)
	wg.Wait()
	if n := srv.lists.draws.Load(); n != 1 {
		t.Errorf("%d requests at once drew the list %d times, want 1", clients, n)
	}
	for i := range clients {
		if codes[i] != 200 || bodies[i] != bodies[0] || !strings.Contains(bodies[i], "/s/"+mainID) {
			t.Errorf("request %d: %d, %d bytes, same as the first: %v", i, codes[i], len(bodies[i]), bodies[i] == bodies[0])
		}
	}
	if len(srv.lists.pending) != 0 {
		t.Errorf("%d drawings left pending", len(srv.lists.pending))
	}
}
