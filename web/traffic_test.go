package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestTraffic: pages and API calls are counted while they are served,
// live streams, assets and the index's progress are not, and Yield
// returns at once when nothing is served, or as the last request ends.
func TestTraffic(t *testing.T) {
	tr := &traffic{max: time.Hour} // Yield returns by the end of a request, not by its bound
	e := echo.New()
	for _, tc := range []struct {
		path    string
		counted bool
	}{
		{"/", true}, {"/s/abc", true}, {"/api/sessions", true}, {"/api/search", true},
		{"/s/abc/events", false}, {"/events", false}, {"/static/app.css", false}, {"/api/index", false},
	} {
		var during int
		h := tr.counted(func(c echo.Context) error {
			tr.mu.Lock()
			during = tr.n
			tr.mu.Unlock()
			return nil
		})
		c := e.NewContext(httptest.NewRequest(http.MethodGet, tc.path, nil), httptest.NewRecorder())
		if err := h(c); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1, false: 0}[tc.counted]; during != want {
			t.Errorf("%s: %d requests counted while it was served, want %d", tc.path, during, want)
		}
		if tr.n != 0 {
			t.Fatalf("%s: %d requests counted after it ended", tc.path, tr.n)
		}
	}
	tr.yield(context.Background()) // nothing served: at once

	// Two requests at once: Yield returns when the second ends.
	first, second := make(chan struct{}), make(chan struct{})
	started := make(chan struct{}, 2)
	serve := func(hold chan struct{}) {
		h := tr.counted(func(echo.Context) error { started <- struct{}{}; <-hold; return nil })
		h(e.NewContext(httptest.NewRequest(http.MethodGet, "/", nil), httptest.NewRecorder()))
	}
	go serve(first)
	go serve(second)
	<-started
	<-started
	yielded := make(chan struct{})
	go func() { tr.yield(context.Background()); close(yielded) }()
	close(first)
	close(second)
	<-yielded // (a bound of an hour: only the end of both requests lets it return)
	tr.mu.Lock()
	if tr.n != 0 {
		t.Fatalf("%d requests counted after both ended", tr.n)
	}
	tr.max = time.Millisecond
	tr.mu.Unlock()

	// Under steady traffic Yield returns by its bound: the work goes on.
	hold := make(chan struct{})
	go serve(hold)
	<-started
	tr.yield(context.Background())
	close(hold)
}
