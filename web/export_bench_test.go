package web

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
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

// BenchmarkExport100k: sharing the whole path of the 100k chain (66 MB) as
// one HTML page and as JSONL, downloaded; the peak heap while it runs is the
// figure that matters (it must not grow with the session). With
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
	for _, format := range []string{"jsonl", "html"} {
		b.Run(format, func(b *testing.B) {
			var peak float64
			for b.Loop() {
				peak = max(peak, peakHeap(func() {
					res, err := http.Get(rig.url + "/api/sessions/" + url.PathEscape(rig.key) + "/export?format=" + format)
					if err != nil || res.StatusCode != 200 {
						b.Fatalf("%v %v", err, res.Status)
					}
					n, _ := io.Copy(io.Discard, res.Body)
					res.Body.Close()
					b.SetBytes(n)
				}))
			}
			b.ReportMetric(peak, "peak-heap-MB")
			b.ReportMetric(float64(idle.HeapInuse)/(1<<20), "idle-heap-MB") // the library before any export
		})
	}
}
