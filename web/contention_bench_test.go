package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
)

// BenchmarkContention: 100 requests for small session pages, and a live
// append to the large session reaching the library, first on an idle
// server, then while the page of a 100k-entry session renders in a loop on
// another client. Readers take no lock of the library (a session is an
// immutable snapshot): busy/idle-p95 is what the render's CPU costs the
// small pages, on this machine's cores.
func BenchmarkContention(b *testing.B) {
	root := demoRoot(b)
	bigKey, _ := writeBigSession(b, root, 100_000)
	bigFile := filepath.Join(root, "--home-dev-big--", "2026-01-01T00-00-00-000Z_big.jsonl")
	lib := openLib(b, root)
	srv := newServer(b, lib, nil)
	ts := httptest.NewServer(srv.Handler())
	b.Cleanup(ts.Close)
	var small []string
	for _, m := range lib.List() {
		if m.Key != bigKey {
			small = append(small, m.Key)
		}
	}
	fetch := func(path string) time.Duration {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		req.Host = "localhost"
		t0 := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("%s: %s", path, res.Status)
		}
		return time.Since(t0)
	}
	n := 0
	appendOne := func() time.Duration {
		n++
		sessiontest.Append(b, bigFile, sessiontest.Lines(sessiontest.User(fmt.Sprintf("live%d", n), "", 1_000_000+n, "live append")))
		t0 := time.Now()
		if _, err := lib.Refresh(bigFile); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	measure := func() (p95, app time.Duration) {
		var ts []time.Duration
		for k := range 100 {
			ts = append(ts, fetch("/s/"+small[k%len(small)]))
		}
		slices.Sort(ts)
		return ts[94], appendOne()
	}
	fetch("/s/" + bigKey) // its tree loaded once, as a page open on it has
	for b.Loop() {
		idle, idleAppend := measure()
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
					fetch("/s/" + bigKey)
				}
			}
		}()
		busy, busyAppend := measure()
		close(stop)
		<-done
		b.ReportMetric(float64(idle.Microseconds())/1000, "idle-p95-ms")
		b.ReportMetric(float64(busy.Microseconds())/1000, "busy-p95-ms")
		b.ReportMetric(float64(busy)/float64(idle), "busy/idle-p95")
		b.ReportMetric(float64(idleAppend.Microseconds())/1000, "idle-append-ms")
		b.ReportMetric(float64(busyAppend.Microseconds())/1000, "busy-append-ms")
	}
}
