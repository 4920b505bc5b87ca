package web

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
)

// peakHeap samples the heap in use while fn runs and returns its peak in MB.
func peakHeap(fn func()) float64 {
	runtime.GC()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	return float64(peak.Load()) / (1 << 20)
}

// resetPeakRSS resets the process's peak resident set size (Linux's
// VmHWM), so peakRSS tells the peak of what runs after it.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS returns the process's peak resident set size in MB since it
// started or since resetPeakRSS, or 0 where /proc does not tell it.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				return 0
			}
			return float64(kb) / 1024
		}
	}
	return 0
}

// BenchmarkExport100k: sharing the whole path of the 100k chain (66 MB) as
// one HTML page and as JSONL, and the whole session as one HTML page with
// its tree (html-session), downloaded; the peak heap while it runs is the
// figure that matters (it must not grow with the session), with the
// process's peak RSS beside it where Linux can reset it. With
// PIWEB_BENCH_EXPORT_ENTRIES=200000, a chain of that length instead.
func BenchmarkExport100k(b *testing.B) {
	n := sessiontest.ChainEntries
	if v, err := strconv.Atoi(os.Getenv("PIWEB_BENCH_EXPORT_ENTRIES")); err == nil && v > 0 {
		n = v
	}
	rig := newChainRig(b, n)
	runtime.GC()
	var idle runtime.MemStats
	runtime.ReadMemStats(&idle)
	for _, format := range []string{"jsonl", "html", "html-session"} {
		b.Run(format, func(b *testing.B) {
			var peak, rss float64
			for b.Loop() {
				resetPeakRSS()
				peak = max(peak, peakHeap(func() {
					res, err := http.Get(rig.url + "/api/sessions/" + url.PathEscape(rig.key) + "/export?format=" + format)
					if err != nil || res.StatusCode != 200 {
						b.Fatalf("%v %v", err, res.Status)
					}
					n, _ := io.Copy(io.Discard, res.Body)
					res.Body.Close()
					b.SetBytes(n)
				}))
				rss = max(rss, peakRSS())
			}
			b.ReportMetric(peak, "peak-heap-MB")
			if rss > 0 {
				b.ReportMetric(rss, "peak-rss-MB")
			}
			b.ReportMetric(float64(idle.HeapInuse)/(1<<20), "idle-heap-MB") // the library before any export
		})
	}
}
