package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/internal/storetest"
	"github.com/piweb/piweb/push"
	"github.com/piweb/piweb/store"
)

// teamQueries are searched on the team server: words, a phrase, a
// filter, text in other scripts, a regular expression.
var teamQueries = []string{"handler", "refactor handler", "error build fails", `"fix the"`, "role:user compaction",
	"Session Entry", "café", "日本語", "re:handl[e]r", "project:project-01 context"}

// BenchmarkTeamServer serves the benchmark tree (sessiontest.BenchTree:
// 1 GiB, or $PIWEB_BENCH_BYTES) pushed from four machines (its files dealt
// between four roots) with `piweb --from` (a process of its own), and
// reports how long it took to mirror and index everything (ready-s), its
// resident memory then (rss-MB), at its peak until then (ready-peak-MB:
// mirroring and indexing) and at its peak over its life (peak-MB), the p95 of the
// searches in teamQueries (search-p95-ms, each query 5 times), and of 200
// clients loading the sessions page 4,000 times (list-p95-ms; a request
// that takes over a minute counts as one and as a list-timeout).
func BenchmarkTeamServer(b *testing.B) {
	dsn, ok := storetest.Postgres(b)
	if !ok {
		b.Skip("no PostgreSQL: set PIWEB_TEST_POSTGRES")
	}
	tree, files, total := sessiontest.BenchTree(b)
	var roots []string
	for m := range 4 {
		roots = append(roots, filepath.Join(b.TempDir(), fmt.Sprint(m)))
	}
	for k, f := range files {
		rel, _ := filepath.Rel(tree, f)
		to := filepath.Join(roots[k%4], rel)
		os.MkdirAll(filepath.Dir(to), 0o755)
		if err := os.Link(f, to); err != nil {
			b.Skipf("cannot link the tree's files: %v", err)
		}
	}
	st, err := store.Open(context.Background(), dsn, store.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	began := time.Now()
	var wg sync.WaitGroup
	for m, root := range roots {
		wg.Go(func() {
			p, err := push.New(push.Table{DB: st}, push.Options{Root: root, Machine: fmt.Sprintf("machine-%d", m)})
			if err == nil {
				_, err = p.Push(context.Background())
			}
			if err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	b.Logf("pushed %d MB from 4 machines in %v", total>>20, time.Since(began).Round(time.Second))
	bin := piwebBinary(b)
	for b.Loop() {
		teamServerRun(b, bin, dsn)
	}
}

// teamServerRun runs one team server over dsn's pushes and measures it.
func teamServerRun(b *testing.B, bin, dsn string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.Command(bin, "--from", dsn, "--cache-dir", b.TempDir(), "--addr", addr, "--no-login")
	srv.Stdout, srv.Stderr = io.Discard, io.Discard
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	base := "http://" + addr
	began := time.Now()
	for { // until it listens, has every file, and has indexed them for search
		res, err := http.Get(base + "/api/index")
		if err == nil {
			var p struct{ Indexing, SearchIndexing bool }
			json.NewDecoder(res.Body).Decode(&p)
			res.Body.Close()
			if res.StatusCode == 200 && !p.Indexing && !p.SearchIndexing {
				break
			}
		}
		if time.Since(began) > 2*time.Hour {
			b.Fatal("the team server was not ready within 2 hours")
		}
		time.Sleep(200 * time.Millisecond) // polling a process from outside: nothing to wait on
	}
	b.ReportMetric(time.Since(began).Seconds(), "ready-s")
	b.ReportMetric(float64(sessiontest.ProcKB(srv.Process.Pid, "VmRSS"))/1024, "rss-MB")
	b.ReportMetric(float64(sessiontest.ProcKB(srv.Process.Pid, "VmHWM"))/1024, "ready-peak-MB")

	var lat []time.Duration
	for range 5 {
		for _, q := range teamQueries {
			t0 := time.Now()
			res, err := http.Get(base + "/api/search?q=" + url.QueryEscape(q))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				b.Fatalf("search %q: %d", q, res.StatusCode)
			}
			lat = append(lat, time.Since(t0))
		}
	}
	b.ReportMetric(p95(lat), "search-p95-ms")

	lat = lat[:0]
	var mu sync.Mutex
	var next, timeouts atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}, Timeout: time.Minute}
	for range 200 {
		wg.Go(func() {
			for next.Add(1) <= 4000 {
				req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
				req.Header.Set("Accept-Encoding", "gzip")
				t0 := time.Now()
				res, err := client.Do(req)
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					// A slow answer is a measurement, not a failure: it
					// counts as the client's timeout, a lower bound.
					timeouts.Add(1)
					mu.Lock()
					lat = append(lat, time.Since(t0))
					mu.Unlock()
					continue
				}
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b.ReportMetric(p95(lat), "list-p95-ms")
	b.ReportMetric(float64(timeouts.Load()), "list-timeouts")
	b.ReportMetric(float64(sessiontest.ProcKB(srv.Process.Pid, "VmHWM"))/1024, "peak-MB")
}

// p95 returns the 95th percentile of lat in milliseconds.
func p95(lat []time.Duration) float64 {
	s := slices.Clone(lat)
	slices.Sort(s)
	return float64(s[min(len(s)-1, len(s)*95/100)].Microseconds()) / 1000
}
