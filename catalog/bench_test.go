package catalog

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/internal/storetest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/search"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
)

// Benchmarks of the catalog and its store on the roots the issues measure
// (see docs/benchmarks.md for how to run them):
//   - "gen": internal/sessiontest's tree (sessiontest.BenchTree: about
//     1 GB of larger entries, 375k of them);
//   - "small": the small-entry root of ../shared/bench/mkroot.py (1,000
//     sessions, 1.65M entries: `python3 mkroot.py root DIR 1000 1024`),
//     when PIWEB_BENCH_MKROOT names it.
// Engines: SQLite, and PostgreSQL when PIWEB_TEST_POSTGRES names a server.

// benchRoot is a root to measure on.
type benchRoot struct {
	name  string
	dir   string
	files []string
	bytes int64
}

func benchRoots(b *testing.B) []benchRoot {
	var out []benchRoot
	dir, files, total := sessiontest.BenchTree(b)
	out = append(out, benchRoot{"gen", dir, files, total})
	if dir := os.Getenv("PIWEB_BENCH_MKROOT"); dir != "" {
		files, err := library.SessionFiles(dir)
		if err != nil || len(files) == 0 {
			b.Fatalf("PIWEB_BENCH_MKROOT=%s: %v (%d files)", dir, err, len(files))
		}
		var n int64
		for _, f := range files {
			st, _ := os.Stat(f)
			n += st.Size()
		}
		out = append(out, benchRoot{"small", dir, files, n})
	} else {
		b.Log("PIWEB_BENCH_MKROOT names no mkroot.py root: the small-entry root is not measured")
	}
	return out
}

// benchStores returns the DSNs of a new store on each engine.
func benchStores(b *testing.B) []storetest.Engine { return storetest.Engines(b) }

// keptStore returns the DSN of a store of root built once and kept for
// later runs (restart and search benchmarks): SQLite next to the tree in
// the temporary folder, PostgreSQL in a schema of its own that is kept.
func keptStore(b *testing.B, r benchRoot, engine string) string {
	b.Helper()
	tag := fmt.Sprintf("piweb-bench-%s-%d-s%d", r.name, r.bytes, store.SchemaVersion)
	var dsn string
	switch engine {
	case "sqlite":
		dsn = "sqlite:" + filepath.Join(os.TempDir(), tag+".db")
	default:
		var ok bool
		if dsn, ok = storetest.Kept(b, strings.ReplaceAll(tag, "-", "_")); !ok {
			b.Skip("no PostgreSQL")
		}
	}
	marker := filepath.Join(os.TempDir(), tag+"-"+engine+".complete")
	if _, err := os.Stat(marker); err != nil {
		b.Logf("building the %s store of %s (once)", engine, r.dir)
		t0 := time.Now()
		c, stop := benchStart(b, r.dir, dsn)
		if err := c.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		stop()
		b.Logf("built in %v", time.Since(t0))
		os.WriteFile(marker, nil, 0o644)
	}
	return dsn
}

// benchStart runs a catalog over root and the store at dsn until every
// session is listed, and returns it with a func that stops it.
func benchStart(b *testing.B, root, dsn string) (*Catalog, func()) {
	b.Helper()
	st, err := store.Open(context.Background(), dsn, store.Options{Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	c := New(library.NewLibrary(root), Options{Store: st, Logger: quiet()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-c.Ready()
	return c, func() {
		cancel()
		<-done
		st.Close()
	}
}

// readAll reads every file whole, two at a time (os.ReadFile: a buffer
// made for each): the raw read a start is measured against.
func readAll(b *testing.B, files []string) {
	eachFile(b, files, func(f string, _ []byte) error {
		_, err := os.ReadFile(f)
		return err
	})
}

// readBytes reads every file's bytes into one buffer a reader reuses,
// two at a time: the bytes alone, without the cost of a buffer per file.
func readBytes(b *testing.B, files []string) {
	eachFile(b, files, func(f string, buf []byte) error {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		defer fh.Close()
		for {
			if _, err := fh.Read(buf); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	})
}

// eachFile calls read with each file, two at a time, each reader with a
// buffer of its own.
func eachFile(b *testing.B, files []string, read func(f string, buf []byte) error) {
	var wg sync.WaitGroup
	next := make(chan string)
	for range 2 {
		wg.Go(func() {
			buf := make([]byte, 1<<20)
			for f := range next {
				if err := read(f, buf); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for _, f := range files {
		next <- f
	}
	close(next)
	wg.Wait()
}

// BenchmarkList: a first start with an empty store until every session is
// listed (what the sessions page needs), beside the raw read of the files
// in the same run ("raw": each file read whole; "bytes": the bytes alone).
func BenchmarkList(b *testing.B) {
	for _, r := range benchRoots(b) {
		b.Run(r.name+"/raw", func(b *testing.B) {
			b.SetBytes(r.bytes)
			for b.Loop() {
				readAll(b, r.files)
			}
		})
		b.Run(r.name+"/bytes", func(b *testing.B) {
			b.SetBytes(r.bytes)
			for b.Loop() {
				readBytes(b, r.files)
			}
		})
		b.Run(r.name+"/list", func(b *testing.B) {
			b.SetBytes(r.bytes)
			for b.Loop() {
				b.StopTimer()
				dsn := "sqlite:" + filepath.Join(b.TempDir(), "index.db")
				b.StartTimer()
				c, stop := benchStart(b, r.dir, dsn)
				b.StopTimer()
				if n := c.lib.Len(); n != len(r.files) {
					b.Fatalf("%d sessions listed of %d", n, len(r.files))
				}
				stop()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkBuild: a first start with an empty store until its full-text
// index covers every entry, on each engine. Reports seconds per GB of
// session files and the store's size against them.
func BenchmarkBuild(b *testing.B) {
	for _, r := range benchRoots(b) {
		for _, e := range benchStores(b) {
			b.Run(r.name+"/"+e.Name, func(b *testing.B) {
				b.SetBytes(r.bytes)
				var took time.Duration
				dsn := e.DSN
				for k := range b.N {
					if k > 0 {
						b.StopTimer()
						dsn = storetest.Engines(b)[slices.IndexFunc(storetest.Engines(b), func(x storetest.Engine) bool { return x.Name == e.Name })].DSN
						b.StartTimer()
					}
					t0 := time.Now()
					c, stop := benchStart(b, r.dir, dsn)
					if err := c.Wait(context.Background()); err != nil {
						b.Fatal(err)
					}
					took += time.Since(t0)
					b.StopTimer()
					stop()
					b.StartTimer()
				}
				b.ReportMetric(took.Seconds()/float64(b.N)/(float64(r.bytes)/1e9), "s/GB")
				st, err := store.Open(context.Background(), dsn, store.Options{Logger: quiet()})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				if sz, err := st.Size(context.Background()); err == nil {
					b.ReportMetric(float64(sz)/float64(r.bytes), "store/files")
					b.ReportMetric(float64(sz)/1e6, "store-MB")
				}
			})
		}
	}
}

// BenchmarkRestart: a start on the unchanged root with its store built,
// until every session is listed.
func BenchmarkRestart(b *testing.B) {
	for _, r := range benchRoots(b) {
		for _, e := range benchStores(b) {
			b.Run(r.name+"/"+e.Name, func(b *testing.B) {
				dsn := keptStore(b, r, e.Name)
				before := sessions.BytesRead.Load()
				for b.Loop() {
					c, stop := benchStart(b, r.dir, dsn)
					b.StopTimer()
					if n := c.lib.Len(); n != len(r.files) {
						b.Fatalf("%d sessions listed of %d", n, len(r.files))
					}
					stop()
					b.StartTimer()
				}
				b.ReportMetric(float64(sessions.BytesRead.Load()-before)/float64(b.N), "bytes-read/op")
			})
		}
	}
}

// benchQueries are the searches BenchmarkSearch times: words, a
// substring, phrases, negation, regular expressions and filters.
var benchQueries = []string{"handler", "refactor handler", "andle", `"cache key"`, `"fix the"`, "error -cache",
	"re:handl[e]r", `re:ses+ion tre{1,2}`, "role:user test", "role:tool build", "is:offpath error",
	"project:p03 model", "after:2026-01-01 branch"}

// BenchmarkSearch: the first page (20 hits) of each of benchQueries,
// through the catalog on the built store, every hit's text read from its
// file; p50, p95 and max over every query of every run, and how many
// searches the store did not answer in time (scanned: the files were read).
func BenchmarkSearch(b *testing.B) {
	for _, r := range benchRoots(b) {
		for _, e := range benchStores(b) {
			b.Run(r.name+"/"+e.Name, func(b *testing.B) {
				c, stop := benchStart(b, r.dir, keptStore(b, r, e.Name))
				defer stop()
				if err := c.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
				var times []time.Duration
				per := map[string][]time.Duration{}
				work := map[string][4]int64{} // what each query's searches did, summed (searchCounts)
				scanned := 0
				for b.Loop() {
					for _, qs := range benchQueries {
						q, err := search.Parse(qs)
						if err != nil {
							b.Fatal(err)
						}
						n := &c.counts
						before := [4]int64{n.candidates.Load(), n.lines.Load(), n.bytes.Load(), n.decoded.Load()}
						t0 := time.Now()
						res, err := c.Search(context.Background(), q, 20, "")
						if err != nil {
							b.Fatalf("%q: %v", qs, err)
						}
						if res.Scanned { // the store did not answer within storeWait: the files were read, as a user's search would
							scanned++
							b.Logf("%q: answered by a scan of the files", qs)
						}
						times = append(times, time.Since(t0))
						per[qs] = append(per[qs], time.Since(t0))
						w := work[qs]
						for k, v := range [4]int64{n.candidates.Load(), n.lines.Load(), n.bytes.Load(), n.decoded.Load()} {
							w[k] += v - before[k]
						}
						work[qs] = w
					}
				}
				for _, qs := range benchQueries {
					slices.Sort(per[qs])
					w, runs := work[qs], int64(len(per[qs]))
					b.Logf("%-28s median %-12v candidates %4d lines read %4d (%5d KB), decoded %4d", qs, per[qs][len(per[qs])/2],
						w[0]/runs, w[1]/runs, w[2]/runs>>10, w[3]/runs)
				}
				slices.Sort(times)
				pick := func(p float64) float64 { return float64(times[int(p*float64(len(times)-1))].Microseconds()) / 1000 }
				b.ReportMetric(pick(0.5), "p50-ms")
				b.ReportMetric(pick(0.95), "p95-ms")
				b.ReportMetric(pick(1), "max-ms")
				b.ReportMetric(float64(scanned), "scanned")
			})
		}
	}
}
