package usage

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/library"
)

// benchDir holds the benchmarks' generated root, removed after the run.
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchLib is a generated root of $PIWEB_USAGE_BENCH_BYTES (default 64 MiB)
// of sessions, read into a library once per run.
var benchLib = sync.OnceValues(func() (*library.Library, error) {
	size := int64(64 << 20)
	if v, err := strconv.ParseInt(os.Getenv("PIWEB_USAGE_BENCH_BYTES"), 10, 64); err == nil && v > 0 {
		size = v
	}
	dir, err := os.MkdirTemp("", "piweb-usage-bench-")
	if err != nil {
		return nil, err
	}
	benchDir = dir
	if _, _, err := sessiontest.Tree(dir, size); err != nil {
		return nil, err
	}
	return library.OpenLibrary(dir)
})

func benchSource(b *testing.B) (*Files, []Row) {
	b.Helper()
	lib, err := benchLib()
	if err != nil {
		b.Fatal(err)
	}
	src := NewFiles(lib, "m")
	rows, err := src.Rows(context.Background(), Filter{})
	if err != nil {
		b.Fatal(err)
	}
	return src, rows
}

// BenchmarkRowsCold reads every file's usage: what `piweb usage` does
// after the library is read.
func BenchmarkRowsCold(b *testing.B) {
	lib, err := benchLib()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := NewFiles(lib, "m").Rows(context.Background(), Filter{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRowsWarm finds the copies and sums the rows of files already read.
func BenchmarkRowsWarm(b *testing.B) {
	src, rows := benchSource(b)
	b.ReportMetric(float64(len(rows)), "rows")
	for b.Loop() {
		if _, err := src.Rows(context.Background(), Filter{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDaily groups the rows into the daily report in a time zone.
func BenchmarkDaily(b *testing.B) {
	_, rows := benchSource(b)
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(rows)), "rows")
	for b.Loop() {
		if _, err := Build(rows, Query{Group: Daily, Loc: loc}); err != nil {
			b.Fatal(err)
		}
	}
}
