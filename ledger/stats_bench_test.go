package ledger

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// Benchmarks of the statistics, file changes and comparisons (issue 14's
// targets: the stats of a 100k session and a compare of two 50k-entry
// branches under 300 ms). Each runs beside its baseline: reading the same
// lines, which no answer can avoid.

// readAll reads the lines of the entries at positions, the baseline.
func readAll(b *testing.B, s *sessions.Session, pos []int) {
	r, err := s.Open()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	seq := r.Sequential()
	for _, p := range pos {
		if _, err := seq.Raw(p); err != nil {
			b.Fatal(err)
		}
	}
}

func all(s *sessions.Session) []int {
	out := make([]int, len(s.Entries))
	for i := range out {
		out[i] = i
	}
	return out
}

// BenchmarkStats100k: the file, path and by-model totals of the 100k chain
// from nothing (a first page view), then again after one append (cached).
func BenchmarkStats100k(b *testing.B) {
	p, _ := sessiontest.ChainFile(b)
	s, err := sessions.Load(p)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("baseline-read-lines", func(b *testing.B) {
		for b.Loop() {
			readAll(b, s, all(s))
		}
	})
	b.Run("ledger-from-nothing", func(b *testing.B) {
		for b.Loop() {
			r, _ := s.Open()
			l := New()
			if err := l.Update(r); err != nil {
				b.Fatal(err)
			}
			st := l.Stats(s, s.Leaf())
			r.Close()
			if st.File.AssistantMessages == 0 || st.Path.Entries != len(s.Entries) {
				b.Fatalf("stats: %+v", st.File)
			}
		}
	})
	b.Run("stats-cached", func(b *testing.B) {
		r, _ := s.Open()
		defer r.Close()
		l := New()
		l.Update(r)
		for b.Loop() {
			l.Stats(s, s.Leaf())
		}
	})
}

// twoBranches is a session of two 50k-entry branches from one root entry
// (cached in the temp dir), and the positions of the branches' last entries.
func twoBranches(b *testing.B) (*sessions.Session, int, int) {
	p := filepath.Join(os.TempDir(), fmt.Sprintf("piweb-bench-two50k-v%d.jsonl", sessiontest.Version))
	if _, err := os.Stat(p); err != nil {
		var first, second bytes.Buffer
		if _, err := sessiontest.Write(&first, 21, 50_000, sessiontest.Options{Chain: true, Scale: sessiontest.ChainScale}); err != nil {
			b.Fatal(err)
		}
		if _, err := sessiontest.Write(&second, 22, 50_000, sessiontest.Options{Chain: true, Scale: sessiontest.ChainScale, NoHeader: true}); err != nil {
			b.Fatal(err)
		}
		lines := strings.SplitAfterN(first.String(), "\n", 3)
		rootID := lines[1][strings.Index(lines[1], `"id":"`)+6:]
		rootID = rootID[:strings.IndexByte(rootID, '"')]
		// The second chain hangs off the first chain's root entry.
		rest := strings.Replace(second.String(), `"parentId":null`, `"parentId":"`+rootID+`"`, 1)
		tmp := fmt.Sprintf("%s.tmp%d", p, os.Getpid())
		if err := os.WriteFile(tmp, append(first.Bytes(), rest...), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, p); err != nil {
			b.Fatal(err)
		}
	}
	s, err := sessions.Load(p)
	if err != nil {
		b.Fatal(err)
	}
	return s, 50_000 - 1, len(s.Entries) - 1
}

// BenchmarkCompare50k: where two 50k-entry branches part, each side's
// totals and file changes, as the compare API answers.
func BenchmarkCompare50k(b *testing.B) {
	s, a, z := twoBranches(b)
	f := Compare(s, a, z)
	if f.Ancestor < 0 || len(f.A) < 49_000 || len(f.B) < 49_000 {
		b.Fatalf("not two 50k branches: ancestor %d, %d and %d", f.Ancestor, len(f.A), len(f.B))
	}
	b.Run("baseline-read-lines", func(b *testing.B) {
		for b.Loop() {
			readAll(b, s, f.A)
			readAll(b, s, f.B)
		}
	})
	compare := func(b *testing.B, l *Ledger) {
		r, _ := s.Open()
		defer r.Close()
		if err := l.Update(r); err != nil {
			b.Fatal(err)
		}
		f := Compare(s, a, z)
		for _, side := range [][]int{f.A, f.B} {
			l.Sum(s, side)
			if _, err := ChangesOf(r, side); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("compare-ledger-cached", func(b *testing.B) {
		l := New()
		compare(b, l)
		for b.Loop() {
			compare(b, l)
		}
	})
	b.Run("compare-from-nothing", func(b *testing.B) {
		for b.Loop() {
			compare(b, New())
		}
	})
}

// BenchmarkLedgerAppend: keeping the subtree sums as pi appends one entry to the 100k chain.
func BenchmarkLedgerAppend(b *testing.B) {
	p, _ := sessiontest.ChainFile(b)
	s, err := sessions.Load(p)
	if err != nil {
		b.Fatal(err)
	}
	r, _ := s.Open()
	l := New()
	l.Update(r)
	leaf := s.Leaf()
	b.ResetTimer()
	for b.Loop() {
		// One more entry under the leaf, as an append makes it: the sums walk its ancestors.
		l.mu.Lock()
		l.sums(s, len(s.Entries))
		own := l.own(leaf)
		for v := leaf; v >= 0; v = s.Parent(v) {
			l.sub[v].add(own)
		}
		l.mu.Unlock()
	}
}
