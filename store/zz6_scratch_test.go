package store

import (
	"context"
	"os"
	"testing"

	"github.com/piweb/piweb/search"
)

func BenchmarkScratchOne(b *testing.B) {
	s, texts := benchStore(b)
	text := func(h *Hit) (string, error) { return texts[docKey{h.File, h.EntryID, h.Part}], nil }
	pq, _ := search.Parse(os.Getenv("Q"))
	b.ResetTimer()
	for range b.N {
		p, _ := s.Search(context.Background(), pq, SearchOptions{Limit: 20, Text: text})
		b.ReportMetric(float64(p.Examined), "examined")
	}
}
