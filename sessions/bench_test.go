package sessions

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/sessiontest"
)

// Benchmarks of the index. See docs/benchmarks.md for how to run them and
// the results on the reference machine. Generated inputs are cached under
// os.TempDir() (named by size and sessiontest.Version) because generating a 1 GB
// tree takes longer than indexing it.

// BenchmarkLoad100k indexes one session of 100,000 entries in a single chain.
func BenchmarkLoad100k(b *testing.B) {
	p, size := sessiontest.ChainFile(b)
	b.SetBytes(size)
	b.ReportAllocs()
	cpu := sessiontest.ReportCPU(b)
	for b.Loop() {
		s, err := Load(p)
		if err != nil || len(s.Entries) != sessiontest.ChainEntries {
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
	p, size := sessiontest.ChainFile(b)
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
				if n != sessiontest.ChainEntries+1 || bad != 0 {
					b.Fatalf("%d lines, %d invalid", n, bad)
				}
			}
		})
	}
}

// BenchmarkProject100k projects the context at the leaf of the 100k chain.
func BenchmarkProject100k(b *testing.B) {
	p, size := sessiontest.ChainFile(b)
	s, err := Load(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var pr *Projection
	cpu := sessiontest.ReportCPU(b)
	for b.Loop() {
		if pr, err = s.Project(s.Leaf()); err != nil {
			b.Fatal(err)
		}
	}
	cpu()
	b.ReportMetric(float64(len(pr.Messages)), "messages")
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
	for _, n := range []int{1000, sessiontest.ChainEntries} {
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
