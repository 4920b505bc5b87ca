package web

import (
	"io"
	"net/http"
	"net/url"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
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
// figure that matters (it must not grow with the session).
func BenchmarkExport100k(b *testing.B) {
	rig := newLiveRig(b, true)
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
		})
	}
}
