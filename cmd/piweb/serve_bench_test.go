package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/library"
)

// BenchmarkServe runs the piweb command on whole roots, as a person does,
// and measures what they feel: the first start until every session is
// listed (list-s), the full-text index built in the background (build-s),
// page latency while it builds (page-p95-ms: the sessions page and
// sessions' pages, two clients), a restart on the unchanged root (restart-s)
// and the memory of a server holding its root (rss-MB, after pages of a
// dozen sessions were served; peak-MB over its life). Roots: sessiontest's
// tree ("gen") and each mkroot.py root named in PIWEB_BENCH_MKROOTS
// (comma-separated; 1, 2 and 4 GB give the growth per GB).
func BenchmarkServe(b *testing.B) {
	type root struct{ name, dir string }
	dir, _, _ := sessiontest.BenchTree(b)
	roots := []root{{"gen", dir}}
	for _, d := range strings.Split(os.Getenv("PIWEB_BENCH_MKROOTS"), ",") {
		if d != "" {
			roots = append(roots, root{"small-" + filepath.Base(d), d})
		}
	}
	bin := piwebBinary(b)
	for _, r := range roots {
		b.Run(r.name, func(b *testing.B) {
			var bytes int64
			files, _ := library.SessionFiles(r.dir)
			for _, f := range files {
				st, _ := os.Stat(f)
				bytes += st.Size()
			}
			b.SetBytes(bytes)
			for b.Loop() {
				dsn := "sqlite:" + filepath.Join(b.TempDir(), "index.db")
				s := startPiweb(b, bin, r.dir, dsn)
				list := s.waitLine(b, "indexed")
				pages := s.pagesUntilBuilt(b)
				build := time.Since(s.start)
				s.touchSessions(b, 12)
				rss, _ := s.memory(b)
				s.stop(b)
				_, peak := s.memory(b)
				s2 := startPiweb(b, bin, r.dir, dsn)
				restart := s2.waitLine(b, "indexed")
				s2.stop(b)
				slices.Sort(pages)
				b.ReportMetric(list.Seconds(), "list-s")
				b.ReportMetric(build.Seconds(), "build-s")
				if len(pages) > 0 {
					b.ReportMetric(float64(pages[len(pages)*95/100].Microseconds())/1000, "page-p95-ms")
				}
				b.ReportMetric(restart.Seconds(), "restart-s")
				b.ReportMetric(float64(rss)/1024, "rss-MB")
				b.ReportMetric(float64(peak)/1024, "peak-MB")
			}
		})
	}
}

// served is a piweb process started by a benchmark.
type served struct {
	cmd   *exec.Cmd
	start time.Time
	url   string
	lines chan string
	peak  int64 // KiB, VmHWM when last read
}

var openRE = regexp.MustCompile(`open (http://\S+/)`)

// startPiweb runs bin on root with the store dsn, on a free port.
func startPiweb(b *testing.B, bin, root, dsn string) *served {
	b.Helper()
	s := &served{cmd: exec.Command(bin, "--session-dir", root, "--store", dsn, "--addr", "127.0.0.1:0"), lines: make(chan string, 64)}
	s.cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+b.TempDir())
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	s.start = time.Now()
	if err := s.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	return s
}

// waitLine waits for a line of the command's output holding word, and
// returns how long after the start it came; the address is noted on the way.
func (s *served) waitLine(b *testing.B, word string) time.Duration {
	b.Helper()
	for l := range s.lines {
		if m := openRE.FindStringSubmatch(l); m != nil {
			s.url = m[1]
		}
		if strings.Contains(l, word) {
			took := time.Since(s.start)
			go func() {
				for range s.lines { // the rest, so the process never blocks on its output
				}
			}()
			return took
		}
	}
	b.Fatalf("piweb ended before saying %q", word)
	return 0
}

// get fetches path, failing the benchmark on an error status.
func (s *served) get(b *testing.B, path string) []byte {
	b.Helper()
	res, err := http.Get(s.url + strings.TrimPrefix(path, "/"))
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		b.Fatalf("%s: %s", path, res.Status)
	}
	return body
}

// keys returns the keys of the sessions listed.
func (s *served) keys(b *testing.B) []string {
	var list []struct{ Key string }
	if err := json.Unmarshal(s.get(b, "/api/sessions"), &list); err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, m := range list {
		out = append(out, m.Key)
	}
	return out
}

// pagesUntilBuilt requests pages on two clients until the full-text index
// is built, and returns how long each took.
func (s *served) pagesUntilBuilt(b *testing.B) []time.Duration {
	keys := s.keys(b)
	var mu sync.Mutex
	var took []time.Duration
	done := make(chan struct{})
	var wg sync.WaitGroup
	for c := range 2 {
		wg.Go(func() {
			for k := c; ; k++ {
				select {
				case <-done:
					return
				default:
				}
				path := "/"
				if k%2 == 1 {
					path = "/s/" + keys[(k*7919)%len(keys)]
				}
				t0 := time.Now()
				s.get(b, path)
				mu.Lock()
				took = append(took, time.Since(t0))
				mu.Unlock()
			}
		})
	}
	for {
		var p struct{ SearchIndexing bool }
		json.Unmarshal(s.get(b, "/api/index"), &p)
		if !p.SearchIndexing {
			break
		}
		time.Sleep(100 * time.Millisecond) // polling the index's state, not timing it
	}
	close(done)
	wg.Wait()
	return took
}

// touchSessions serves the pages of n sessions (their trees read).
func (s *served) touchSessions(b *testing.B, n int) {
	keys := s.keys(b)
	for k := range min(n, len(keys)) {
		s.get(b, "/s/"+keys[(k*7919)%len(keys)])
	}
}

// memory returns the process's resident memory now and its peak, KiB
// (the peak stays readable after stop: it is read before the process ends).
func (s *served) memory(b *testing.B) (rss, peak int64) {
	rss = sessiontest.ProcKB(s.cmd.Process.Pid, "VmRSS")
	if p := sessiontest.ProcKB(s.cmd.Process.Pid, "VmHWM"); p > 0 {
		s.peak = p
	}
	return rss, s.peak
}

// stop ends the process.
func (s *served) stop(b *testing.B) {
	s.memory(b)
	s.cmd.Process.Signal(os.Interrupt)
	s.cmd.Wait()
}
