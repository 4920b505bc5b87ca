package pitree

import (
	"runtime"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// BenchmarkSearch100k lays out the 100k chain for pi's tree search, as the
// page does on every keystroke: reading every candidate entry's line
// ("uncached"), through a SearchIndex filled by an earlier search
// ("cached"), or filling a fresh index on the way ("first"). "none" is the
// same layout without a search, for scale. "first" also reports the heap
// the filled index keeps.
func BenchmarkSearch100k(b *testing.B) {
	p, _ := sessiontest.ChainFile(b)
	s, err := sessions.Load(p)
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
			opt := Options{Leaf: s.Leaf(), Search: c.search}
			if c.index && !c.fresh {
				opt.Index = &SearchIndex{}
				if _, err := New(s, r, opt); err != nil { // warm-up: fills the index
					b.Fatal(err)
				}
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ReportAllocs()
			rows := 0
			cpu := sessiontest.ReportCPU(b)
			for b.Loop() {
				if c.fresh {
					opt.Index = &SearchIndex{}
				}
				l, err := New(s, r, opt)
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

// BenchmarkLayout lays out a branchy 100k-entry session (TestLayoutLarge's)
// under pi's default, user-only and all filters.
func BenchmarkLayout(b *testing.B) {
	s, err := sessions.Load(layGenerate(b, b.TempDir(), 100_000, false))
	if err != nil {
		b.Fatal(err)
	}
	r, err := s.Open()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, f := range []Filter{FilterDefault, FilterUserOnly, FilterAll} {
		b.Run(string(f)+"-", func(b *testing.B) {
			for b.Loop() {
				if _, err := New(s, r, Options{Leaf: s.Leaf(), Filter: f}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
