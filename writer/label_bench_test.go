package writer

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// benchChain writes a session of n entries in one chain to a temporary file and loads it.
func labelChain(b *testing.B, n int) (*sessions.Session, string) {
	p := filepath.Join(b.TempDir(), "s.jsonl")
	if _, err := sessiontest.WriteFile(p, 100, n, sessiontest.Options{Chain: true, Scale: sessiontest.ChainScale}); err != nil {
		b.Fatal(err)
	}
	s, err := sessions.Load(p)
	if err != nil {
		b.Fatal(err)
	}
	return s, p
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
	}{{"reread/entries=1000", 1000, false}, {"reread/entries=100000", sessiontest.ChainEntries, false},
		{"indexed/entries=1000", 1000, true}, {"indexed/entries=100000", sessiontest.ChainEntries, true}} {
		n := c.n
		b.Run(c.name, func(b *testing.B) {
			s, p := labelChain(b, n)
			target := s.Entries[len(s.Entries)/2].ID
			st, _ := os.Stat(p)
			b.ReportMetric(float64(st.Size())/(1<<20), "fileMB")
			b.ReportAllocs()
			k := 0
			w := &sessions.Session{File: s.File} // a handle: no index, so the writer reads the file
			if c.indexed {
				w = s
			}
			for b.Loop() {
				k++
				if _, err := label(w, target, fmt.Sprintf("label %d", k)); err != nil {
					b.Fatal(err)
				}
				if c.indexed {
					if d, err := readtest.Update(s); err != nil || len(d.New) != 1 {
						b.Fatalf("Update: %+v, %v", d, err)
					}
				}
			}
		})
	}
}
