package web

import (
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/static"
	"github.com/piweb/piweb/views"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The demo sessions (static/demo).
const (
	mainID = "019e1b4e-a740-7224-8242-6ab857604e56" // "Fix stale forecast cache": branches, labels, compaction, tools, image
	darkID = "019e1b4e-a740-7224-8242-6aba056a33aa" // "Add a dark mode…": linear
	forkID = "019e20c7-6900-7224-8242-6abc521bb2ed" // forked from mainID, in another project
)

func TestMain(m *testing.M) {
	// Pages show times relative to now, in local time: fix both.
	time.Local = time.UTC
	views.Now = func() time.Time { return time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC) }
	os.Exit(m.Run())
}

// demoRoot copies the demo sessions into a temporary sessions root.
func demoRoot(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	if err := static.WriteDemo(root); err != nil {
		t.Fatal(err)
	}
	return root
}

// openLib indexes root.
func openLib(t testing.TB, root string) *library.Library {
	t.Helper()
	lib, err := library.OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// newServer builds a Server over lib whose logs go to the test log; with
// ev, its live streams follow the changes the test sends there instead of
// the library's own.
func newServer(t testing.TB, lib Library, ev *fakeEvents) *Server {
	t.Helper()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if ev != nil {
		lib = fakeFeed{lib, ev}
	}
	s := New(lib, Options{Addr: "127.0.0.1:8377", Root: "/sessions", Logger: log, Home: "/home/dev",
		Heartbeat: 50 * time.Millisecond})
	t.Cleanup(s.Close)
	return s
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// do sends a request to h addressed to localhost; hdr holds header name/value pairs.
func do(t testing.TB, h http.Handler, method, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Host = "localhost:8377"
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func get(t testing.TB, h http.Handler, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, h, http.MethodGet, target, hdr...)
}

// fakeFeed is a Library whose changes come from a fakeEvents.
type fakeFeed struct {
	Library
	ev *fakeEvents
}

func (f fakeFeed) Subscribe() (<-chan library.Change, func()) { return f.ev.Subscribe() }

// fakeEvents is a feed of changes the test sends.
type fakeEvents struct {
	subs    chan chan library.Change
	cancels chan struct{}
}

func newFakeEvents() *fakeEvents {
	return &fakeEvents{subs: make(chan chan library.Change, 16), cancels: make(chan struct{}, 16)}
}

func (f *fakeEvents) Subscribe() (<-chan library.Change, func()) {
	ch := make(chan library.Change, 16)
	f.subs <- ch
	return ch, func() { f.cancels <- struct{}{} }
}

// next waits for the next subscription.
func (f *fakeEvents) next(t testing.TB) chan library.Change {
	t.Helper()
	select {
	case ch := <-f.subs:
		return ch
	case <-time.After(guard):
		t.Fatal("no subscription")
		return nil
	}
}

// doReq serves req through h and returns the recorded response.
func doReq(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
