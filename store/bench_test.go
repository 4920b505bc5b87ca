package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/piweb/piweb/search"
)

// Benchmarks of the store. See docs/benchmarks.md for how to run them and
// the results. Their corpus (benchCorpus, gen_test.go) and the index built
// from it are cached in the temp folder.

// batchText is how much text a builder gathers before it commits.
const batchText = 16 << 20

// build indexes files into s as piweb's library would on a first start:
// one worker per core extracts words into its own batch, with the file's
// record, and commits it when it holds batchText of text.
func build(tb testing.TB, s *Store, files []benchFile) {
	jobs := make(chan *benchFile)
	errs := make(chan error, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			bt := s.Batch()
			n := 0
			for f := range jobs {
				bt.Put(Record{File: f.path, Size: int64(len(f.docs)), ModTime: 1, Stamp: []byte("head+tail"), Blob: []byte(f.path)})
				bt.AddDocs(f.path, f.docs)
				for _, d := range f.docs {
					n += len(d.Text)
				}
				if n >= batchText {
					if err := bt.Commit(); err != nil {
						errs <- err
						return
					}
					n = 0
				}
			}
			errs <- bt.Commit()
		})
	}
	for i := range files {
		jobs <- &files[i]
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkBuild builds the search index of the corpus from nothing
// (store), against extracting the words alone (terms) and reading the text
// alone (scan), both on every core.
func BenchmarkBuild(b *testing.B) {
	files, total := benchCorpus(b)
	b.Run("store", func(b *testing.B) {
		b.SetBytes(total)
		for range b.N {
			b.StopTimer()
			dir := b.TempDir()
			s, err := Open(filepath.Join(dir, "index.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			build(b, s, files)
			b.StopTimer()
			var pages, free, size int64
			s.conn().QueryRow(`PRAGMA page_count`).Scan(&pages)
			s.conn().QueryRow(`PRAGMA freelist_count`).Scan(&free)
			s.conn().QueryRow(`PRAGMA page_size`).Scan(&size)
			b.ReportMetric(float64((pages-free)*size)/float64(total), "used/text")
			b.StartTimer()
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			fi, err := os.Stat(filepath.Join(dir, "index.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fi.Size())/float64(total), "index/text")
			b.ReportMetric(float64(fi.Size())/1e6, "indexMB")
			os.RemoveAll(dir)
			b.StartTimer()
		}
	})
	parallel := func(b *testing.B, fn func(d *Doc)) {
		b.SetBytes(total)
		for range b.N {
			var wg sync.WaitGroup
			next := make(chan *benchFile)
			for range runtime.GOMAXPROCS(0) {
				wg.Go(func() {
					for f := range next {
						for i := range f.docs {
							fn(&f.docs[i])
						}
					}
				})
			}
			for i := range files {
				next <- &files[i]
			}
			close(next)
			wg.Wait()
		}
	}
	b.Run("terms", func(b *testing.B) {
		parallel(b, func(d *Doc) { search.Terms(d.Text, func([]byte) {}) })
	})
	b.Run("scan", func(b *testing.B) {
		parallel(b, func(d *Doc) { _ = strings.Count(d.Text, "\n") })
	})
}

var benchStoreOnce struct {
	sync.Mutex
	s     *Store
	texts map[docKey]string
}

// docKey names a document of the corpus.
type docKey struct {
	file, entry string
	part        int
}

// benchStore returns the store built from the corpus, cached in the temp
// folder, and the corpus's texts by document.
func benchStore(b *testing.B) (*Store, map[docKey]string) {
	c := &benchStoreOnce
	c.Lock()
	defer c.Unlock()
	if c.s != nil {
		return c.s, c.texts
	}
	files, _ := benchCorpus(b)
	path := filepath.Join(os.TempDir(), fmt.Sprintf("piweb-store-bench-%d-v%d-s%d.db", benchBytes(b), corpusVersion, SchemaVersion))
	if _, err := os.Stat(path + ".complete"); err != nil {
		b.Logf("building the index into %s (once; later runs reuse it)", path)
		removeDB(path)
		s, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		build(b, s, files)
		s.Close()
		os.WriteFile(path+".complete", nil, 0o644)
	}
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	texts := map[docKey]string{}
	for _, f := range files {
		for _, d := range f.docs {
			texts[docKey{f.path, d.EntryID, d.Part}] = d.Text
		}
	}
	c.s, c.texts = s, texts
	return s, texts
}

// benchQueries are what a user might type, from very common to rare words
// (ranks in the generator's vocabulary), with filters and phrases.
func benchQueries() []string {
	v := newVocab(newRand(1))
	// w returns the first word of at least 5 letters from rank on.
	w := func(rank int) string {
		for len(v.words[rank]) < 5 {
			rank++
		}
		return v.words[rank]
	}
	return []string{
		"the", "handler", "refactor handler", "error build fails",
		w(150), w(800), w(3000), w(12000), w(25000),
		w(120) + " " + w(900), w(300) + " " + w(2000) + " " + w(5000),
		`"` + w(100) + " " + w(101) + `"`, `"the ` + w(400) + `"`,
		w(200)[:3], w(1500)[:4],
		"検索", "テスト結果", "🚀 " + w(100),
		"role:user " + w(200), "role:summary", "role:label " + w(50),
		"project:project-07 " + w(150), "-project:project-07 " + w(600),
		"after:2026-03-01 before:2026-04-01 " + w(300),
		w(60) + " -" + w(70), "src/" + w(30), "404",
	}
}

// BenchmarkQuery runs benchQueries against the index of the corpus and
// reports the latency of a first page of 20 hits (p50, p95, max), the text
// read from memory as the caller would read it from the session files.
func BenchmarkQuery(b *testing.B) {
	s, texts := benchStore(b)
	text := func(h *Hit) (string, error) { return texts[docKey{h.File, h.EntryID, h.Part}], nil }
	queries := benchQueries()
	var lat []time.Duration
	per := map[string][]time.Duration{}
	hits := map[string]int{}
	b.ResetTimer()
	for range b.N {
		for _, q := range queries {
			pq, err := search.Parse(q)
			if err != nil {
				b.Fatalf("%q: %v", q, err)
			}
			start := time.Now()
			p, err := s.Search(context.Background(), pq, SearchOptions{Limit: 20, Text: text})
			d := time.Since(start)
			if err != nil {
				b.Fatalf("%q: %v", q, err)
			}
			lat = append(lat, d)
			per[q] = append(per[q], d)
			hits[q] = len(p.Hits)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(1), "max-ms")
	b.ReportMetric(0, "ns/op")
	for _, q := range queries {
		ds := per[q]
		slices.Sort(ds)
		b.Logf("%-40q %3d hits, median %v", q, hits[q], ds[len(ds)/2].Round(time.Microsecond))
	}
}

// BenchmarkScanQuery measures a query the index cannot narrow (re:): the
// time to its first page, and to go through every document.
func BenchmarkScanQuery(b *testing.B) {
	s, texts := benchStore(b)
	text := func(h *Hit) (string, error) { return texts[docKey{h.File, h.EntryID, h.Part}], nil }
	pq, err := search.Parse(`re:fail(ed|ure)\s+\d+`)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("first-page", func(b *testing.B) {
		for range b.N {
			p, err := s.Search(context.Background(), pq, SearchOptions{Limit: 20, Text: text, MaxExamined: 5000})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(p.Examined), "docs-read")
		}
	})
}

// BenchmarkAppend adds a few documents to the built index, as when pi
// appends a turn to a session, and finds them.
func BenchmarkAppend(b *testing.B) {
	s, _ := benchStore(b)
	const file = "/root/--appended--/live.jsonl"
	defer s.DeleteDocs(file)
	pq, _ := search.Parse("zzyzxappended")
	b.ResetTimer()
	for i := range b.N {
		docs := make([]Doc, 8)
		for k := range docs {
			docs[k] = Doc{EntryID: fmt.Sprintf("%08x", i*8+k), Position: i*8 + k, Role: "assistant", Type: "text",
				Time: time.Now().UnixMilli(), Project: "--appended--", Text: strings.Repeat("some appended words ", 20) + "zzyzxappended"}
		}
		if err := s.AddDocs(file, docs); err != nil {
			b.Fatal(err)
		}
		p, err := s.Search(context.Background(), pq, SearchOptions{Limit: 1, Text: func(*Hit) (string, error) { return docs[0].Text, nil }})
		if err != nil || len(p.Hits) != 1 {
			b.Fatalf("appended documents not found: %v %v", len(p.Hits), err)
		}
	}
}

// BenchmarkRestart reads back the records of 1,300 files (All) and all
// their blobs (100 MB, Blobs), as a restart on an unchanged root does,
// against reading the same bytes from one file (readfile).
func BenchmarkRestart(b *testing.B) {
	const nfiles, blobSize = 1300, 80 << 10
	dir := b.TempDir()
	s, err := Open(filepath.Join(dir, "index.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var recs []Record
	var files []string
	blob := bytes.Repeat([]byte("serialized index "), blobSize/17)
	for i := range nfiles {
		f := fmt.Sprintf("/root/--p%02d--/%05d.jsonl", i%40, i)
		files = append(files, f)
		recs = append(recs, Record{File: f, Size: int64(i) << 20, ModTime: int64(i), Stamp: make([]byte, 128), Blob: blob})
	}
	if err := s.PutMany(recs); err != nil {
		b.Fatal(err)
	}
	total := int64(nfiles * len(blob))
	b.Run("all", func(b *testing.B) {
		for range b.N {
			all, err := s.All()
			if err != nil || len(all) != nfiles {
				b.Fatal(len(all), err)
			}
		}
	})
	b.Run("blobs", func(b *testing.B) {
		b.SetBytes(total)
		for range b.N {
			all, err := s.All()
			if err != nil {
				b.Fatal(err)
			}
			paths := make([]string, len(all))
			for i, r := range all {
				paths[i] = r.File
			}
			var n int64
			if err := s.Blobs(paths, func(_ string, blob []byte) error { n += int64(len(blob)); return nil }); err != nil || n != total {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("readfile", func(b *testing.B) {
		p := filepath.Join(dir, "flat")
		os.WriteFile(p, bytes.Repeat(blob, nfiles), 0o600)
		b.SetBytes(total)
		b.ResetTimer()
		for range b.N {
			if d, err := os.ReadFile(p); err != nil || int64(len(d)) != total {
				b.Fatal(err)
			}
		}
	})
}
