package store

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/search"
)

// TestIndexMatchesTerms: the word index batches write holds, for every
// word search.Terms gives of the documents, exactly the documents holding
// it, with their length levels, documents dropped from their batch left
// out; texts holding invalid UTF-8 are read as pi reads them.
func TestIndexMatchesTerms(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vocab := []string{"alpha", "Beta", "requestHandler", "newHTTPServer", "日本語", "café", "🚀", "x", "the", "a1b2",
		strings.Repeat("long", 20), "ÉCOLE", "σ", "τέλος", "snake_case", "0x1f",
		"\xff", "bad\xe6\x97x", "\xf0\x9f\x98", "\xed\xa0\x80é", // invalid UTF-8, read as pi reads it
		"sameprefix", "sameprefixes", "sameprefix2"} // words alike in their first 8 bytes
	for k := range 3000 {
		vocab = append(vocab, fmt.Sprintf("w%d", k)) // more words than a table's first slots
	}
	text := func() string {
		var sb strings.Builder
		n := rng.IntN(80)
		if rng.IntN(30) == 0 {
			n = 5000 + rng.IntN(20000) // texts of several segments (addText)
		}
		for range n {
			sb.WriteString(vocab[rng.IntN(len(vocab))])
			sb.WriteString([]string{" ", "\n", ", ", "-", "…"}[rng.IntN(5)])
		}
		if rng.IntN(300) == 0 {
			sb.WriteString(" seldom") // documents far apart in a batch (steps of 2 bytes)
		}
		return sb.String()
	}
	s := openT(t, filepath.Join(t.TempDir(), "index.db"))
	want := map[string][]string{} // word -> entries holding it, as Terms gives them
	distinct := map[string]int{}  // entry -> its distinct words
	lens := map[string]int{}      // entry -> its text's length, as pi reads it
	n := 0
	for range 20 { // batches, enough for a merge
		b := s.Batch()
		for range 1 + rng.IntN(8) { // files, some twice in a batch
			file := fmt.Sprintf("/f%d.jsonl", rng.IntN(6))
			var docs []Doc
			for range rng.IntN(60) {
				n++
				docs = append(docs, Doc{EntryID: fmt.Sprint(n), Role: "user", Text: text()})
			}
			if rng.IntN(6) == 0 {
				b.DeleteDocs(file) // drops the file's documents added before, in this batch and earlier
			}
			b.AddDocs(file, docs)
			for _, d := range docs {
				seen := map[string]bool{}
				fixed := string(js.ToValidUTF8([]byte(d.Text)))
				lens[d.EntryID] = len(fixed)
				search.Terms(fixed, func(term []byte) {
					if !seen[string(term)] {
						seen[string(term)] = true
						want[string(term)] = append(want[string(term)], d.EntryID)
					}
				})
				distinct[d.EntryID] = len(seen)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := s.conn().Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	ids := map[string]int64{} // the documents kept, by entry
	for _, m := range storedDocs(t, tx) {
		ids[m.entry] = m.id
		if int(m.n) != lens[m.entry] {
			t.Errorf("document %s: len %d, its text as pi reads it has %d bytes", m.entry, m.n, lens[m.entry])
		}
	}
	dead := map[int64]bool{}
	rows, err := tx.Query(`SELECT id FROM dead`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		dead[id] = true
	}
	rows.Close()
	segs, err := segments(tx)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) >= 20 {
		t.Fatalf("%d segments: no merge", len(segs))
	}
	got := map[string][]int64{}
	levels := map[int64]uint8{}
	for _, seg := range segs {
		var lb []byte
		if err := tx.QueryRow(`SELECT levels FROM segs WHERE id=?`, seg).Scan(&lb); err != nil {
			t.Fatal(err)
		}
		lv, err := decodeLevels(lb)
		if err != nil {
			t.Fatal(err)
		}
		for k, id := range lv.ids {
			levels[id] = lv.lv[k]
		}
		r := &segReader{tx: tx, seg: seg}
		for {
			ok, err := r.next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if r.it.word[0] == 0 {
				continue // a filter word
			}
			l, err := r.it.ids(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range l {
				if !dead[id] {
					got[string(r.it.word)] = append(got[string(r.it.word)], id)
				}
			}
		}
	}
	if len(ids) < 100 || len(ids) == n {
		t.Fatalf("%d of %d documents kept: the test should keep many and drop some", len(ids), n)
	}
	for w, entries := range want {
		var wids []int64
		for _, e := range entries {
			if id, ok := ids[e]; ok {
				wids = append(wids, id)
			}
		}
		slices.Sort(wids)
		g := slices.Clone(got[w])
		slices.Sort(g)
		if !slices.Equal(g, wids) {
			t.Fatalf("%q: index holds %v, the documents holding it are %v", w, g, wids)
		}
		delete(got, w)
	}
	for w, l := range got {
		if len(l) > 0 {
			t.Fatalf("%q is in the index (%v) but in no document's terms", w, l)
		}
	}
	for e, id := range ids {
		if lv, ok := levels[id]; !ok || int64(lv) != lenLevel(distinct[e]) {
			t.Fatalf("document %d: level %d (%v), want %d for %d distinct words", id, lv, ok, lenLevel(distinct[e]), distinct[e])
		}
	}
}

// TestSortKeys: sortKeys orders as compare does, whether it sorts by radix
// or not, keys equal in their first 8 bytes included.
func TestSortKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 10, 1023, 1024, 5000} {
		keys := make([]keyedWord, n)
		for i := range keys {
			k := rng.Uint64()
			switch rng.IntN(4) {
			case 0:
				k &= 0xff00_0000_0000_0000 // one byte varies
			case 1:
				k = 42 // a run of one key
			}
			keys[i] = keyedWord{k, int32(rng.IntN(100))}
		}
		compare := func(x, y keyedWord) int {
			if x.key != y.key {
				return cmp.Compare(x.key, y.key)
			}
			return cmp.Compare(x.i, y.i)
		}
		want := slices.Clone(keys)
		slices.SortFunc(want, compare)
		if got := sortKeys(keys, make([]keyedWord, n), compare); !slices.Equal(got, want) {
			t.Fatalf("%d keys: not sorted as compare orders them", n)
		}
	}
}

func TestUvarintLen(t *testing.T) {
	for _, x := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<63 - 1, 1 << 63, 1<<64 - 1} {
		if got, want := uvarintLen(x), len(binary.AppendUvarint(nil, x)); got != want {
			t.Errorf("uvarintLen(%d) = %d, want %d", x, got, want)
		}
	}
}
