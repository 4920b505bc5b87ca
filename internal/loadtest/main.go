// Command loadtest measures piweb under many clients, for the scale table
// of docs/benchmarks.md: it builds piweb, serves a sessions root (by default
// the generated 1 GiB benchmark tree, made once under the temp dir), waits for
// the first indexing to end, then has N clients fetch a page as browsers do
// (gzip) and reports latency percentiles and piweb's peak memory.
//
//	go run ./internal/loadtest [-clients 200] [-requests 4000] [-path /] [-root DIR] [-bytes N]
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
)

func main() {
	clients := flag.Int("clients", 200, "concurrent clients")
	requests := flag.Int("requests", 4000, "requests in all")
	path := flag.String("path", "/", "the page every client fetches")
	root := flag.String("root", "", "sessions root (default: the generated benchmark tree)")
	size := flag.Int64("bytes", 1<<30, "size of the generated tree")
	flag.Parse()
	if err := run(*clients, *requests, *path, *root, *size); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func run(clients, requests int, path, root string, size int64) error {
	if root == "" {
		root = filepath.Join(os.TempDir(), fmt.Sprintf("piweb-bench-%d-v%d", size, sessiontest.Version))
		if _, err := os.Stat(filepath.Join(root, ".complete")); err != nil {
			fmt.Printf("generating %d bytes of sessions into %s (once)\n", size, root)
			tmp := root + ".tmp"
			os.RemoveAll(tmp)
			if _, _, err := sessiontest.Tree(tmp, size); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
				return err
			}
			if err := os.Rename(tmp, root); err != nil {
				return err
			}
		}
	}
	bin := filepath.Join(os.TempDir(), "piweb-loadtest")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/piweb").CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	l.Close()
	srv := exec.Command(bin, "--addr", addr, "--session-dir", root, "--no-cache")
	srv.Stdout, srv.Stderr = io.Discard, io.Discard
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Process.Kill()
	base := "http://" + addr
	start := time.Now()
	for { // until piweb listens and has read every file
		res, err := http.Get(base + "/api/index")
		if err == nil {
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode == 200 && res.Header.Get("X-Piweb-Indexing") == "" && !strings.Contains(string(body), `"indexing":true`) {
				break
			}
		}
		if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("piweb did not finish indexing in 5 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("indexed %s in %v\n", root, time.Since(start).Round(time.Millisecond))
	idle := sessiontest.ProcKB(srv.Process.Pid, "VmRSS")
	indexPeak := sessiontest.ProcKB(srv.Process.Pid, "VmHWM")
	// Reset the peak (Linux: 5 to clear_refs), so the one printed is the load's.
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", srv.Process.Pid), []byte("5"), 0)

	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	var next atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var wire, failed atomic.Int64
	var wg sync.WaitGroup
	began := time.Now()
	for range clients {
		wg.Go(func() {
			for next.Add(1) <= int64(requests) {
				req, _ := http.NewRequest(http.MethodGet, base+path, nil)
				req.Header.Set("Accept-Encoding", "gzip") // as a browser; Go then leaves the body compressed
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				n, _ := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				d := time.Since(t0)
				if res.StatusCode != 200 {
					failed.Add(1)
				}
				wire.Add(n)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	slices.Sort(lat)
	pct := func(p int) time.Duration { return lat[min(len(lat)-1, len(lat)*p/100)].Round(time.Millisecond) }
	fmt.Printf("%d clients, %d requests of %s in %v (%.0f/s), %d failed\n", clients, len(lat), path, took.Round(time.Millisecond), float64(len(lat))/took.Seconds(), failed.Load())
	fmt.Printf("latency p50 %v, p95 %v, max %v; %d KB on the wire per response\n", pct(50), pct(95), lat[len(lat)-1].Round(time.Millisecond), wire.Load()/int64(max(len(lat), 1))/1024)
	fmt.Printf("piweb RSS: %d MB at peak while indexing, %d MB after it, %d MB at peak under the load\n", indexPeak/1024, idle/1024, sessiontest.ProcKB(srv.Process.Pid, "VmHWM")/1024)
	return nil
}
