package web

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
)

// BenchmarkSessionPage: the page of a small-entry session of about 1 MB
// (1,650 entries of about 640 bytes, as mkroot.py's 1 GB root holds a
// thousand of), as a browser asks for it (gzip). cold: its tree is read
// from the file for each page (the library keeps no tree: every page is
// of another file than the last), so the page pays the read, the layout,
// the ledger and the render, as the sessions a person opens across a root
// do; warm: the same page again (trees, layouts and ledgers cached).
func BenchmarkSessionPage(b *testing.B) {
	const files = 4
	root := b.TempDir()
	var chain bytes.Buffer
	if err := sessiontest.WriteSmallChain(&chain, 1650); err != nil {
		b.Fatal(err)
	}
	const header = "cd613e30-d8f1-6adf-91b7-584a2265b1f5"
	var keys []string
	for k := range files {
		key := fmt.Sprintf("cd613e30-d8f1-6adf-91b7-%012d", k)
		dir := filepath.Join(root, fmt.Sprintf("--home-user-p%02d--", k))
		os.MkdirAll(dir, 0o755)
		data := bytes.Replace(chain.Bytes(), []byte(header), []byte(key), 1)
		if err := os.WriteFile(filepath.Join(dir, "2026-08-24T10-00-00-000Z_"+key+".jsonl"), data, 0o644); err != nil {
			b.Fatal(err)
		}
		keys = append(keys, key)
	}
	lib := openLib(b, root)
	lib.SetCacheLimit(1) // no tree but the one being read stays loaded
	h := newServer(b, lib, nil).Handler()
	get := func(key string) int {
		req := httptest.NewRequest(http.MethodGet, "/s/"+key, nil)
		req.Host = "localhost:8377"
		req.Header.Set("Accept-Encoding", "gzip")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || w.Header().Get("Content-Encoding") != "gzip" {
			b.Fatalf("%s: %d %q", key, w.Code, w.Header().Get("Content-Encoding"))
		}
		return w.Body.Len()
	}
	// cpu-ms/op is the process's CPU time a page took (the garbage
	// collector's included): what a page costs a core shared with the
	// index build, and steadier than the wall time on a busy machine.
	cpu := func(b *testing.B, page func()) {
		c0, _ := sessiontest.CPU()
		for b.Loop() {
			page()
		}
		c1, _ := sessiontest.CPU()
		b.ReportMetric(float64((c1-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
	b.Run("cold", func(b *testing.B) {
		n, size := 0, 0
		cpu(b, func() {
			size = get(keys[n%files])
			n++
		})
		b.ReportMetric(float64(size)/1024, "gzip-KB")
	})
	b.Run("warm", func(b *testing.B) {
		lib.SetCacheLimit(64 << 20)
		get(keys[0])
		cpu(b, func() { get(keys[0]) })
	})
}
