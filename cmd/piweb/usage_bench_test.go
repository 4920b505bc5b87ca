package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/usage"
	"github.com/piweb/piweb/usage/storesource"
	"github.com/piweb/piweb/web"
)

// usageBenchRoot returns the root of the usage benchmarks,
// $PIWEB_USAGE_ROOT (e.g. one of mkroot.py's), else the generated tree of
// the other benchmarks (1 GiB, or $PIWEB_BENCH_BYTES), and the store kept
// for it across runs (warm after the first).
func usageBenchRoot(b *testing.B) (root, dsn string) {
	b.Helper()
	root = os.Getenv("PIWEB_USAGE_ROOT")
	if root == "" {
		root, _, _ = sessiontest.BenchTree(b)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		b.Fatal(err)
	}
	h := sha256.Sum256([]byte(abs))
	dir := filepath.Join(os.TempDir(), "piweb-usage-store-"+hex.EncodeToString(h[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	return abs, "sqlite:" + filepath.Join(dir, "index.db")
}

// timing is how long a command took: wall and CPU time (user and system).
type timing struct{ wall, cpu time.Duration }

// timed runs a command to the end, its output thrown away, and returns how long it took.
func timed(b *testing.B, name string, args ...string) timing {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdout = io.Discard
	cmd.Stderr = io.Discard
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %v: %v", name, args, err)
	}
	return timing{time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}

// ms returns d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkUsageDaily runs `piweb usage daily` as a user does (a new
// process each time) on a root whose store is warm (brought up to date
// once before, untimed: on a first run of the benchmark, the whole root
// is indexed then), and reports its median wall and CPU time (piweb-ms,
// piweb-cpu-ms) beside one run of `ccusage-pi daily` on the same root in
// the same run (ccusage-ms, ccusage-cpu-ms) and how many times faster
// piweb was (x-ccusage, in wall time). Without ccusage-pi installed in
// conformance/ (or with PIWEB_USAGE_BENCH_CCUSAGE=0), that side is skipped.
func BenchmarkUsageDaily(b *testing.B) {
	root, dsn := usageBenchRoot(b)
	bin := piwebBinary(b)
	args := []string{"usage", "daily", "--session-dir", root, "--store", dsn, "-z", "UTC"}
	warm := timed(b, bin, args...)
	b.Logf("bringing the store up to date: %v", warm.wall.Round(time.Millisecond))
	var cc timing
	if os.Getenv("PIWEB_USAGE_BENCH_CCUSAGE") != "0" {
		c := oracle.CCUsage(b)
		cc = timed(b, c[0], append(c[1:], "daily", "-z", "UTC", "--piPath", root)...)
	}
	var walls, cpus []time.Duration
	for b.Loop() {
		r := timed(b, bin, args...)
		walls, cpus = append(walls, r.wall), append(cpus, r.cpu)
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	med := walls[len(walls)/2]
	b.ReportMetric(ms(med), "piweb-ms")
	b.ReportMetric(ms(walls[len(walls)-1]), "piweb-max-ms")
	b.ReportMetric(ms(cpus[len(cpus)/2]), "piweb-cpu-ms")
	if cc.wall > 0 {
		b.ReportMetric(ms(cc.wall), "ccusage-ms")
		b.ReportMetric(ms(cc.cpu), "ccusage-cpu-ms")
		b.ReportMetric(float64(cc.wall)/float64(med), "x-ccusage")
	}
}

// BenchmarkUsagePage serves /usage and /api/usage from the warm store of
// the same root (piweb as `piweb` runs it, once the store is current):
// every range and view of the page and each report of the API, each op
// all of them; it reports the requests' median and 95th percentile.
func BenchmarkUsagePage(b *testing.B) {
	root, dsn := usageBenchRoot(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := store.Open(ctx, dsn, store.Options{Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	lib := library.NewLibrary(root)
	cat := catalog.New(lib, catalog.Options{Store: st, Logger: log})
	done := make(chan error, 1)
	go func() { done <- cat.Run(ctx) }()
	defer func() { cancel(); <-done }()
	start := time.Now()
	if err := cat.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("the store current after %v", time.Since(start).Round(time.Millisecond))
	srv := web.New(lib, web.Options{Addr: "127.0.0.1:8377", Root: root, Logger: log, Catalog: cat,
		Usage: storesource.New(usage.Stored{DB: st}, machineName(), storesource.Options{Settle: cat.Wait, Ready: cat.SearchReady(), Fallback: usage.NewFiles(lib, machineName())})})
	defer srv.Close()
	h := srv.Handler()
	urls := []string{"/usage?range=all&tz=UTC", "/usage?range=all&tz=Europe/Berlin&by=project&heat=turns", "/usage?range=30d&tz=UTC",
		"/usage?range=90d&tz=America/New_York", "/api/usage?group=day&tz=UTC", "/api/usage?group=session&tz=UTC", "/api/usage?group=project"}
	var times []time.Duration
	per := map[string][]time.Duration{}
	defer func() {
		for _, u := range urls {
			d := per[u]
			slices.Sort(d)
			b.Logf("%s: median %v", u, d[len(d)/2].Round(time.Millisecond/10))
		}
	}()
	for b.Loop() {
		for _, u := range urls {
			req := httptest.NewRequest(http.MethodGet, u, nil)
			req.Host = "127.0.0.1:8377"
			rec := httptest.NewRecorder()
			t0 := time.Now()
			h.ServeHTTP(rec, req)
			times = append(times, time.Since(t0))
			per[u] = append(per[u], time.Since(t0))
			if rec.Code != http.StatusOK {
				b.Fatalf("GET %s: %d\n%s", u, rec.Code, rec.Body)
			}
		}
	}
	slices.Sort(times)
	b.ReportMetric(ms(times[len(times)/2]), "p50-ms")
	b.ReportMetric(ms(times[len(times)*95/100]), "p95-ms")
	b.ReportMetric(ms(times[len(times)-1]), "max-ms")
}
