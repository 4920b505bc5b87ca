package sessions

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/sessiontest"
)

// Benchmarks of the index. See docs/benchmarks.md for how to run them and
// the results on the reference machine. Generated inputs are cached under
// os.TempDir() (named by size and sessiontest.Version) because generating a 1 GB
// tree takes longer than indexing it.

// benchProcCPU returns the CPU time (user and system, all threads) the process
// has used, from /proc/self/stat; ok is false where that file does not exist.
// On a shared machine it varies much less than wall time.
func benchProcCPU() (time.Duration, bool) {
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

// benchReportCPU starts measuring CPU time; call the result after the loop to
// report CPU milliseconds per operation as "cpu-ms/op".
func benchReportCPU(b *testing.B) func() {
	start, ok := benchProcCPU()
	return func() {
		if end, ok2 := benchProcCPU(); ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		}
	}
}

// benchEntries is the length of the single-chain session of the 100k benchmarks.
const benchEntries = 100_000

// benchChainFile returns a generated 100k-entry single-chain session and its size.
func benchChainFile(b *testing.B) (string, int64) {
	b.Helper()
	p := filepath.Join(os.TempDir(), fmt.Sprintf("piweb-bench-chain%d-v%d.jsonl", benchEntries, sessiontest.Version))
	if st, err := os.Stat(p); err == nil {
		return p, st.Size()
	}
	tmp := fmt.Sprintf("%s.tmp%d", p, os.Getpid())
	n, err := sessiontest.WriteFile(tmp, 100, benchEntries, sessiontest.Options{Chain: true, Scale: sessiontest.ChainScale})
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		b.Fatal(err)
	}
	return p, n
}

// benchTreeBytes is the size of the OpenLibrary tree: $PIWEB_BENCH_BYTES, else 1 GiB.
func benchTreeBytes(b *testing.B) int64 {
	if v := os.Getenv("PIWEB_BENCH_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("PIWEB_BENCH_BYTES=%q: want a positive number of bytes", v)
		}
		return n
	}
	return 1 << 30
}

var benchTreeOnce struct {
	sync.Mutex
	dir   string
	files []string
	total int64
}

// benchTree returns the generated sessions tree (created on first use and
// kept in the temp dir for later runs), its files and their total size.
func benchTree(b *testing.B) (string, []string, int64) {
	b.Helper()
	bt := &benchTreeOnce
	bt.Lock()
	defer bt.Unlock()
	if bt.dir != "" {
		return bt.dir, bt.files, bt.total
	}
	size := benchTreeBytes(b)
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("piweb-bench-%d-v%d", size, sessiontest.Version))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		b.Logf("generating %d bytes of sessions into %s (once; later runs reuse it)", size, dir)
		tmp := fmt.Sprintf("%s.tmp%d", dir, os.Getpid())
		os.RemoveAll(tmp)
		_, _, err := sessiontest.Tree(tmp, size)
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
	files, err := SessionFiles(dir)
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

// BenchmarkLoad100k indexes one session of 100,000 entries in a single chain.
func BenchmarkLoad100k(b *testing.B) {
	p, size := benchChainFile(b)
	b.SetBytes(size)
	b.ReportAllocs()
	cpu := benchReportCPU(b)
	for b.Loop() {
		s, err := Load(p)
		if err != nil || len(s.Entries) != benchEntries {
			b.Fatalf("Load: %v", err)
		}
	}
	cpu()
	b.ReportMetric(float64(size)/(1<<20), "fileMB")
}

// BenchmarkScan100k breaks BenchmarkLoad100k down, on one core: reading
// the file and finding its lines, then also validating each line with
// encoding/json.Valid or with the index's own scanner (scanValue).
func BenchmarkScan100k(b *testing.B) {
	p, size := benchChainFile(b)
	for _, c := range []struct {
		name  string
		check func([]byte) bool
	}{
		{"lines", nil},
		{"json.Valid", json.Valid},
		{"scanValue", func(l []byte) bool { _, err := js.ScanValue(l, 0); return err == nil }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			buf := make([]byte, 1<<20)
			for b.Loop() {
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				n, bad := 0, 0
				r := bufio.NewReaderSize(f, len(buf))
				for {
					line, err := r.ReadSlice('\n')
					if err == bufio.ErrBufferFull { // a line longer than the buffer
						rest, err2 := r.ReadBytes('\n')
						line, err = append(append([]byte(nil), line...), rest...), err2
					}
					if len(line) > 0 {
						n++
						if c.check != nil && !c.check(line) {
							bad++
						}
					}
					if err != nil {
						break
					}
				}
				f.Close()
				if n != benchEntries+1 || bad != 0 {
					b.Fatalf("%d lines, %d invalid", n, bad)
				}
			}
		})
	}
}

// BenchmarkProject100k projects the context at the leaf of the 100k chain.
func BenchmarkProject100k(b *testing.B) {
	p, size := benchChainFile(b)
	s, err := Load(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var pr *Projection
	cpu := benchReportCPU(b)
	for b.Loop() {
		if pr, err = s.Project(s.Leaf()); err != nil {
			b.Fatal(err)
		}
	}
	cpu()
	b.ReportMetric(float64(len(pr.Messages)), "messages")
}

// BenchmarkSearch100k lays out the 100k chain for pi's tree search, as the
// page does on every keystroke: reading every candidate entry's line
// ("uncached"), through a SearchIndex filled by an earlier search
// ("cached"), or filling a fresh index on the way ("first"). "none" is the
// same layout without a search, for scale. "first" also reports the heap
// the filled index keeps.
func BenchmarkSearch100k(b *testing.B) {
	p, _ := benchChainFile(b)
	s, err := Load(p)
	if err != nil {
		b.Fatal(err)
	}
	r, err := s.Open()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	const query = "refactor handler"
	for _, c := range []struct {
		name   string
		search string
		index  bool
		fresh  bool
	}{
		{"none", "", false, false},
		{"uncached", query, false, false},
		{"cached", query, true, false},
		{"first", query, true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			opt := LayoutOptions{Leaf: s.Leaf(), Search: c.search}
			if c.index && !c.fresh {
				opt.Index = &SearchIndex{}
				if _, err := s.Layout(r, opt); err != nil { // warm-up: fills the index
					b.Fatal(err)
				}
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ReportAllocs()
			rows := 0
			cpu := benchReportCPU(b)
			for b.Loop() {
				if c.fresh {
					opt.Index = &SearchIndex{}
				}
				l, err := s.Layout(r, opt)
				if err != nil {
					b.Fatal(err)
				}
				rows = l.Len()
			}
			cpu()
			b.ReportMetric(float64(rows), "rows")
			if c.fresh {
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(opt.Index)
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/1e6, "heapMB")
				b.ReportMetric(float64(opt.Index.Bytes())/1e6, "indexMB")
			}
		})
	}
}

// benchChain writes a session of n entries in one chain to a temporary file and loads it.
func benchChain(b *testing.B, n int) (*Session, string) {
	p := filepath.Join(b.TempDir(), "s.jsonl")
	if _, err := sessiontest.WriteFile(p, 100, n, sessiontest.Options{Chain: true, Scale: sessiontest.ChainScale}); err != nil {
		b.Fatal(err)
	}
	s, err := Load(p)
	if err != nil {
		b.Fatal(err)
	}
	return s, p
}

// BenchmarkUpdateAppend appends one line to a session and calls Update. Its
// time must not depend on the size of the file: compare the two sizes.
func BenchmarkUpdateAppend(b *testing.B) {
	for _, n := range []int{1000, benchEntries} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			s, p := benchChain(b, n)
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			leaf := s.Entries[s.Leaf()].ID
			// Fixed-width ids that cannot collide with the generator's hex ids.
			line := func(k int) []byte {
				return fmt.Appendf(nil, `{"type":"message","id":"u%07x","parentId":%q,"timestamp":"2026-06-01T00:00:00.000Z","message":{"role":"user","content":"appended line","timestamp":1780272000000}}`+"\n", k, leaf)
			}
			b.SetBytes(int64(len(line(0))))
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				k++
				if _, err := f.Write(line(k)); err != nil {
					b.Fatal(err)
				}
				d, err := s.Update()
				if err != nil || d.Reloaded || len(d.New) != 1 {
					b.Fatalf("Update: %+v, %v", d, err)
				}
				leaf = fmt.Sprintf("u%07x", k)
			}
		})
	}
}

// BenchmarkLabel appends one label entry per iteration with Label. Given
// only a handle (reread), it reads the whole file first, so its cost grows
// with the file; given the index kept current with Update, as the web app's
// library is (indexed), it checks that index against the file instead.
func BenchmarkLabel(b *testing.B) {
	for _, c := range []struct {
		name    string
		n       int
		indexed bool
	}{{"reread/entries=1000", 1000, false}, {"reread/entries=100000", benchEntries, false},
		{"indexed/entries=1000", 1000, true}, {"indexed/entries=100000", benchEntries, true}} {
		n := c.n
		b.Run(c.name, func(b *testing.B) {
			s, p := benchChain(b, n)
			target := s.Entries[len(s.Entries)/2].ID
			st, _ := os.Stat(p)
			b.ReportMetric(float64(st.Size())/(1<<20), "fileMB")
			b.ReportAllocs()
			k := 0
			w := s.Handle()
			if c.indexed {
				w = s
			}
			for b.Loop() {
				k++
				if _, err := Label(w, target, fmt.Sprintf("label %d", k)); err != nil {
					b.Fatal(err)
				}
				if c.indexed {
					if d, err := s.Update(); err != nil || len(d.New) != 1 {
						b.Fatalf("Update: %+v, %v", d, err)
					}
				}
			}
		})
	}
}

// BenchmarkOpenLibrary indexes the generated tree (1 GiB by default) from
// scratch, and reports the heap the index keeps per GiB of sessions.
func BenchmarkOpenLibrary(b *testing.B) {
	dir, files, total := benchTree(b)
	b.SetBytes(total)
	b.ReportAllocs()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var l *Library
	cpu := benchReportCPU(b)
	for b.Loop() {
		l = nil // let the previous library go while the next one is built
		var err error
		if l, err = OpenLibrary(dir); err != nil {
			b.Fatal(err)
		}
	}
	cpu()
	if l.Len() != len(files) || len(l.Problems()) != 0 {
		b.Fatalf("indexed %d of %d files; problems: %v", l.Len(), len(files), l.Problems())
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(l)
	gb := float64(total) / (1 << 30)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20)/gb, "heapMB/GB")
	b.ReportMetric(float64(len(files)), "files")
}

// BenchmarkRawLineScan is the baseline for BenchmarkOpenLibrary: the same
// files read with the same buffer size and the same parallelism, doing
// nothing but count newlines.
func BenchmarkRawLineScan(b *testing.B) {
	_, files, total := benchTree(b)
	b.SetBytes(total)
	b.ReportAllocs()
	cpu := benchReportCPU(b)
	for b.Loop() {
		n, err := benchRawLineScan(files)
		if err != nil || n < int64(len(files)) {
			b.Fatalf("%d lines, %v", n, err)
		}
	}
	cpu()
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
