package sessiontest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// LiveHeap returns the bytes of the heap still in use, after two
// collections (the first leaves what sync.Pools hold alive until the
// second).
func LiveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// ProcKB returns a memory line of /proc/PID/status (key VmRSS, VmHWM, …)
// in KiB; 0 where it cannot be read.
func ProcKB(pid int, key string) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// procCPU returns the CPU time (user and system, all threads) the process
// has used, from /proc/self/stat; ok is false where that file does not exist.
// On a shared machine it varies much less than wall time.
func procCPU() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	// Fields after the command name (which may hold spaces) start at state (field 3).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	st, err2 := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * (time.Second / 100), true // USER_HZ is 100 on Linux
}

// ReportCPU starts measuring CPU time; call the result after the loop to
// report CPU milliseconds per operation as "cpu-ms/op".
func ReportCPU(b *testing.B) func() {
	start, ok := procCPU()
	return func() {
		if end, ok2 := procCPU(); ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		}
	}
}

// CPU returns the CPU time (user and system, all threads) the process has used so far.
func CPU() (time.Duration, bool) { return procCPU() }

// ChainEntries is the length of the single-chain session of the 100k benchmarks.
const ChainEntries = 100_000

// ChainFile returns a generated 100k-entry single-chain session (cached in
// the temp dir for later runs) and its size.
func ChainFile(b testing.TB) (string, int64) {
	b.Helper()
	p := filepath.Join(os.TempDir(), fmt.Sprintf("piweb-bench-chain%d-v%d.jsonl", ChainEntries, Version))
	if st, err := os.Stat(p); err == nil {
		return p, st.Size()
	}
	tmp := fmt.Sprintf("%s.tmp%d", p, os.Getpid())
	n, err := WriteFile(tmp, 100, ChainEntries, Options{Chain: true, Scale: ChainScale})
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		b.Fatal(err)
	}
	return p, n
}

// treeBytes is the size of the OpenLibrary tree: $PIWEB_BENCH_BYTES, else 1 GiB.
func treeBytes(b testing.TB) int64 {
	if v := os.Getenv("PIWEB_BENCH_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("PIWEB_BENCH_BYTES=%q: want a positive number of bytes", v)
		}
		return n
	}
	return 1 << 30
}

var treeOnce struct {
	sync.Mutex
	dir   string
	files []string
	total int64
}

// BenchTree returns the generated 1 GiB (or $PIWEB_BENCH_BYTES) sessions tree (created on first use and
// kept in the temp dir for later runs), its files and their total size.
func BenchTree(b testing.TB) (string, []string, int64) {
	b.Helper()
	bt := &treeOnce
	bt.Lock()
	defer bt.Unlock()
	if bt.dir != "" {
		return bt.dir, bt.files, bt.total
	}
	size := treeBytes(b)
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("piweb-bench-%d-v%d", size, Version))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		b.Logf("generating %d bytes of sessions into %s (once; later runs reuse it)", size, dir)
		tmp := fmt.Sprintf("%s.tmp%d", dir, os.Getpid())
		os.RemoveAll(tmp)
		_, _, err := Tree(tmp, size)
		if err == nil {
			err = os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644)
		}
		if err == nil {
			err = os.Rename(tmp, dir)
		}
		if err != nil {
			os.RemoveAll(tmp)
			if _, serr := os.Stat(filepath.Join(dir, ".complete")); serr != nil {
				b.Fatal(err)
			} // else another process made it first
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if err != nil || len(files) == 0 {
		b.Fatalf("%s: %d files, %v", dir, len(files), err)
	}
	var total int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		total += st.Size()
	}
	bt.dir, bt.files, bt.total = dir, files, total
	return dir, files, total
}
