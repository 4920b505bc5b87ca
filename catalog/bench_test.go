package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/search"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
)

// Benchmarks of the catalog on the generated 1 GiB tree
// (sessiontest.BenchTree; PIWEB_BENCH_BYTES for another size). The store
// they restart from is built once and kept next to the tree.

// benchDB returns the store of the bench tree, built on first use.
func benchDB(b *testing.B) (root string, files []string, total int64, db string) {
	root, files, total = sessiontest.BenchTree(b)
	db = filepath.Join(os.TempDir(), fmt.Sprintf("piweb-catalog-bench-%d-v%d-s%d.db", total, sessiontest.Version, store.SchemaVersion))
	if _, err := os.Stat(db + ".complete"); err != nil {
		b.Logf("building the catalog's store of %s into %s (once)", root, db)
		t0 := time.Now()
		os.Remove(db)
		_, stop := run(b, root, db)
		stop()
		b.Logf("built in %v", time.Since(t0))
		os.WriteFile(db+".complete", nil, 0o644)
	}
	return root, files, total, db
}

// start runs a catalog over root and the store at db until its library
// is filled, and returns it with a func that stops it.
func start(b *testing.B, root, db string) (*Catalog, func()) {
	st, err := store.Open(db)
	if err != nil {
		b.Fatal(err)
	}
	c := New(sessions.NewLibrary(root), Options{Store: st, Logger: quiet()})
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

// BenchmarkRestart: a start on the unchanged tree, from the store, until
// every session is in the library (what the sessions page needs). cold
// is the same tree without a store, for scale.
func BenchmarkRestart(b *testing.B) {
	root, _, total, db := benchDB(b)
	b.ResetTimer()
	b.Run("store", func(b *testing.B) {
		var read int64
		for range b.N {
			before := sessions.BytesRead()
			c, stop := start(b, root, db)
			b.StopTimer()
			read += sessions.BytesRead() - before
			if c.Library().Len() == 0 {
				b.Fatal("empty library")
			}
			stop()
			b.StartTimer()
		}
		b.ReportMetric(float64(read)/float64(b.N), "bytesRead/op")
		b.ReportMetric(float64(total)/1e6, "treeMB")
	})
	b.Run("nostore", func(b *testing.B) {
		b.SetBytes(total)
		defer sessiontest.ReportCPU(b)()
		for range b.N {
			c := New(sessions.NewLibrary(root), Options{Logger: quiet()})
			ctx, cancel := context.WithCancel(context.Background())
			go c.Run(ctx)
			<-c.Ready()
			cancel()
		}
	})
}

// BenchmarkRestartAppended: pi appended a turn to 10 files since the last
// run; a start reads only the appended bytes (bytesRead/op against
// appended/op) of them.
func BenchmarkRestartAppended(b *testing.B) {
	root, files, _, db := benchDB(b)
	files = slices.Clone(files)
	slices.Sort(files)
	ten := files[:10]
	sizes := make([]int64, len(ten))
	for i, f := range ten {
		st, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		sizes[i] = st.Size()
	}
	restore := func() {
		for i, f := range ten {
			os.Truncate(f, sizes[i])
		}
		_, stop := run(b, root, db) // the store catches up with the truncation
		stop()
	}
	defer restore()
	var read, appended int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		restore()
		for i, f := range ten {
			add := sessiontest.String(int64(i), 8, sessiontest.Options{NoHeader: true})
			sessiontest.Append(b, f, add)
			appended += int64(len(add))
		}
		before := sessions.BytesRead()
		b.StartTimer()
		_, stop := start(b, root, db)
		b.StopTimer()
		read += sessions.BytesRead() - before
		stop()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(read)/float64(b.N), "bytesRead/op")
	b.ReportMetric(float64(appended)/float64(b.N), "appended/op")
}

// BenchmarkSearch: queries through the catalog on the tree's store, each
// hit's text read from its session file; p50, p95 and max over every run.
func BenchmarkSearch(b *testing.B) {
	root, _, _, db := benchDB(b)
	c, stop := start(b, root, db)
	defer stop()
	<-c.SearchReady()
	queries := []string{"refactor handler", "error", "cache", "the", `"fix the"`, "role:user test", "role:summary",
		"project:proj test", "after:2026-01-01 build", "-cache handler", "is:offpath error", "label:todo", "re:handl[e]r"}
	var times []time.Duration
	per := map[string][]time.Duration{}
	b.ResetTimer()
	for range b.N {
		for _, qs := range queries {
			q, err := search.Parse(qs)
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			if _, err := c.Search(context.Background(), q, 20, ""); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(t0))
			per[qs] = append(per[qs], time.Since(t0))
		}
	}
	b.StopTimer()
	for _, qs := range queries {
		slices.Sort(per[qs])
		b.Logf("%-28s median %v", qs, per[qs][len(per[qs])/2])
	}
	slices.Sort(times)
	pick := func(p float64) float64 { return float64(times[int(p*float64(len(times)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pick(0.5), "p50-ms")
	b.ReportMetric(pick(0.95), "p95-ms")
	b.ReportMetric(pick(1), "max-ms")
}

// BenchmarkBuild: a first start with an empty store, until the search
// index covers every entry of the tree (the library and the kept indexes
// included). Reports the store's size against the text it indexed
// (index/text), the text itself (textMB) and when the library was
// complete (ready-ms: every session listed).
func BenchmarkBuild(b *testing.B) {
	root, _, total, _ := benchDB(b)
	b.SetBytes(total)
	b.ResetTimer() // not the generation of the tree
	defer sessiontest.ReportCPU(b)()
	var ready time.Duration
	for range b.N {
		db := filepath.Join(b.TempDir(), "index.db")
		t0 := time.Now()
		c, stop := start(b, root, db)
		ready += time.Since(t0)
		if err := c.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		<-c.SearchReady()
		b.StopTimer()
		s, err := c.st.Stats()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.DBBytes)/float64(s.TextBytes), "index/text")
		b.ReportMetric(float64(s.TextBytes)/1e6, "textMB")
		b.ReportMetric(float64(s.Docs), "docs")
		stop()
		os.RemoveAll(filepath.Dir(db))
		b.StartTimer()
	}
	b.ReportMetric(float64(ready.Milliseconds())/float64(b.N), "ready-ms")
}
