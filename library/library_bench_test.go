package library

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
)

// BenchmarkOpenLibrary indexes the generated tree (1 GiB by default) from
// scratch, and reports the heap the index keeps per GiB of sessions. Before
// each run, untimed, it also makes the raw line scan of the same files
// (BenchmarkRawLineScan) and reports how many times slower indexing is, in
// wall time (x-raw) and CPU time (x-raw-cpu), both measured in this run.
func BenchmarkOpenLibrary(b *testing.B) {
	dir, files, total := sessiontest.BenchTree(b)
	b.SetBytes(total)
	b.ReportAllocs()
	before := sessiontest.LiveHeap()
	var l *Library
	var rawWall, rawCPU, idxWall, idxCPU time.Duration
	for b.Loop() {
		b.StopTimer()
		l = nil // let the previous library go while the next one is built
		runtime.GC()
		t0, c0 := time.Now(), cpuNow()
		if _, err := benchRawLineScan(files); err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), cpuNow()
		rawWall, rawCPU = rawWall+t1.Sub(t0), rawCPU+c1-c0
		b.StartTimer()
		var err error
		if l, err = OpenLibrary(dir); err != nil {
			b.Fatal(err)
		}
		idxWall, idxCPU = idxWall+time.Since(t1), idxCPU+cpuNow()-c1
	}
	b.ReportMetric(float64(idxCPU.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(rawWall.Milliseconds())/float64(b.N), "raw-ms/op")
	b.ReportMetric(float64(idxWall)/float64(rawWall), "x-raw")
	b.ReportMetric(float64(idxCPU)/float64(rawCPU), "x-raw-cpu")
	if l.Len() != len(files) || len(l.Problems()) != 0 {
		b.Fatalf("indexed %d of %d files; problems: %v", l.Len(), len(files), l.Problems())
	}
	kept := sessiontest.LiveHeap() - before
	runtime.KeepAlive(l)
	gb := float64(total) / (1 << 30)
	b.ReportMetric(float64(kept)/(1<<20)/gb, "heapMB/GB")
	b.ReportMetric(float64(len(files)), "files")
}

// BenchmarkRawLineScan is the baseline for BenchmarkOpenLibrary: the same
// files read with the same buffer size and the same parallelism, doing
// nothing but count newlines.
func BenchmarkRawLineScan(b *testing.B) {
	_, files, total := sessiontest.BenchTree(b)
	b.SetBytes(total)
	b.ReportAllocs()
	cpu := sessiontest.ReportCPU(b)
	for b.Loop() {
		n, err := benchRawLineScan(files)
		if err != nil || n < int64(len(files)) {
			b.Fatalf("%d lines, %v", n, err)
		}
	}
	cpu()
}

// cpuNow is the process's CPU time so far (0 where it cannot be read).
func cpuNow() time.Duration {
	d, _ := sessiontest.CPU()
	return d
}

// benchRawLineScan counts the lines of files with as many workers as OpenLibrary uses.
func benchRawLineScan(files []string) (int64, error) {
	var (
		mu    sync.Mutex
		lines int64
		first error
	)
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			buf := make([]byte, 1<<20) // as Session.read
			for name := range jobs {
				n, err := benchCountLines(name, buf)
				mu.Lock()
				lines += n
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	for _, f := range files {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	return lines, first
}

// benchCountLines reads the file through buf and counts its newlines.
func benchCountLines(name string, buf []byte) (int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var lines int64
	for {
		n, err := f.Read(buf)
		chunk := buf[:n]
		for {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				break
			}
			lines++
			chunk = chunk[i+1:]
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
	}
}
