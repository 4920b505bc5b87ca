package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/piweb/piweb/search"
)

// rowsOf returns the rows of docruns as "file lo-hi", in id order.
func rowsOf(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.conn().Query(`SELECT p.path, r.lo, r.hi FROM docruns r JOIN paths p ON p.id = r.fid ORDER BY r.hi`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var f string
		var lo, hi int64
		if err := rows.Scan(&f, &lo, &hi); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d-%d", f, lo, hi))
	}
	return out
}

// deadIDs returns the ids listed as dead, ascending.
func deadIDs(t *testing.T, s *Store) []int64 {
	t.Helper()
	rows, err := s.conn().Query(`SELECT id FROM dead ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		out = append(out, id)
	}
	return out
}

// distinctTerms counts the distinct words of text.
func distinctTerms(text string) int {
	seen := map[string]bool{}
	search.Terms(text, func(w []byte) { seen[string(w)] = true })
	return len(seen)
}

// TestRunsRoundTrip: every field of a document reads back as added, over
// values the packing codes as differences (positions and times going
// back, huge and negative), repeated and changing entries and names; a
// batch's documents go in rows of one file and at most runDocs.
func TestRunsRoundTrip(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "index.db"))
	var want []Doc
	var files []string
	b := s.Batch()
	add := func(file string, docs []Doc) {
		b.AddDocs(file, docs)
		for range docs {
			files = append(files, file)
		}
		want = append(want, docs...)
	}
	var a []Doc
	for k := range 2*runDocs + 8 {
		a = append(a, Doc{EntryID: fmt.Sprintf("e%d", k/3), Position: k / 3, Part: k % 3, Type: []string{"text", "thinking"}[k/7%2],
			Role: "assistant", Project: "p", Time: 1_700_000_000_000 + int64(k/5)*1000, Text: fmt.Sprintf("word%d", k)})
	}
	add("a", a)
	add("b", []Doc{
		{EntryID: "", Position: 0, Text: ""}, // an empty entry id first, then the same
		{EntryID: "", Position: math.MaxInt32, Part: math.MaxInt32, Time: math.MaxInt64, Text: "x"},
		{EntryID: "z", Position: math.MinInt32, Part: -3, Time: math.MinInt64, Role: "user", Text: "y"},
		{EntryID: "z", Position: math.MaxInt, Part: math.MinInt, Time: 0, Role: "user", Text: "y"},
		{EntryID: "z", Position: math.MinInt, Part: math.MaxInt, Time: 0, Role: "user", Text: "y"},
		{EntryID: "z", Position: 5, Time: -1, Role: "user", Project: "日本", Type: "bash", Text: "much longer text than the others"},
	})
	add("a", a[:3]) // the same file again, after another
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	names, err := s.loadNames(s.conn())
	if err != nil {
		t.Fatal(err)
	}
	got := storedDocs(t, s.conn())
	if len(got) != len(want) {
		t.Fatalf("%d documents stored, %d added", len(got), len(want))
	}
	for i, m := range got {
		d := want[i]
		p := pathT(t, s, m.fid)
		if m.id != int64(i+1) || p != files[i] || m.entry != d.EntryID || m.pos != d.Position || m.part != d.Part ||
			m.time != d.Time || m.n != int64(len(d.Text)) || names[m.typ].name != d.Type || names[m.role].name != d.Role ||
			names[m.proj].name != d.Project || m.level != lenLevel(distinctTerms(d.Text)) {
			t.Fatalf("document %d: %+v (%s), added %+v to %s", i, m, p, d, files[i])
		}
	}
	n := 2*runDocs + 8
	if rows, want := rowsOf(t, s), []string{
		fmt.Sprintf("a 1-%d", runDocs), fmt.Sprintf("a %d-%d", runDocs+1, 2*runDocs), fmt.Sprintf("a %d-%d", 2*runDocs+1, n),
		fmt.Sprintf("b %d-%d", n+1, n+6), fmt.Sprintf("a %d-%d", n+7, n+9),
	}; !slices.Equal(rows, want) {
		t.Fatalf("rows %q, want %q", rows, want)
	}
	st, err := s.Stats()
	var size int64
	for _, d := range want {
		size += int64(len(d.Text))
	}
	if err != nil || st.Docs != len(want) || st.TextBytes != size {
		t.Fatalf("Stats = %+v %v, want %d documents of %d bytes", st, err, len(want), size)
	}
}

// TestDeleteInterleaved deletes a file whose rows lie between another
// file's, written by the same batches: the other file's documents stay,
// the deleted ones are listed dead until the merge of their segment
// drops them.
func TestDeleteInterleaved(t *testing.T) {
	c := newCorpus(t)
	var aIDs []int64
	next := int64(1)
	for i := range fanIn {
		b := c.s.Batch()
		for k, f := range []string{"a", "b", "a", "b"} {
			var docs []Doc
			for j := range 1 + (i+k)%3 {
				d := doc(fmt.Sprintf("%s%d.%d.%d", f, i, k, j), 0, "user", "p", i, "shared "+f+"word")
				docs = append(docs, d)
				c.texts[key(f, d.EntryID, 0)] = d.Text
				if f == "a" {
					aIDs = append(aIDs, next)
				}
				next++
			}
			b.AddDocs(f, docs)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		if i == fanIn-2 {
			c.drop(t, "a") // the last batch adds to a again
			if got := deadIDs(t, c.s); !slices.Equal(got, aIDs) {
				t.Fatalf("dead %v, want a's ids %v", got, aIDs)
			}
			for _, m := range storedDocs(t, c.s.conn()) {
				if p := pathT(t, c.s, m.fid); p != "b" {
					t.Fatalf("document %d of %s left after deleting a", m.id, p)
				}
			}
			aIDs = nil
		}
	}
	checkIndex(t, c.s)
	// The batches' segments were merged: a's dead documents went with them.
	var segs int
	c.s.conn().QueryRow(`SELECT count(*) FROM segs`).Scan(&segs)
	if dead := deadIDs(t, c.s); segs != 1 || len(dead) != 0 {
		t.Fatalf("%d segments, dead %v", segs, dead)
	}
	for _, q := range []string{"bword", "aword", "shared", "re:word"} {
		want := 0
		for _, text := range c.texts {
			if q == "re:word" || strings.Contains(text, q) {
				want++
			}
		}
		if got, p := c.find(t, q, SearchOptions{Limit: 500}); len(got) != want || p.Next != "" || want == 0 {
			t.Errorf("%q: %d hits (next %q), want %d", q, len(got), p.Next, want)
		}
	}
	st, _ := c.s.Stats()
	if got := storedDocs(t, c.s.conn()); st.Docs != len(got) || st.Docs != len(c.texts) {
		t.Fatalf("Stats counts %d documents, %d stored, %d live", st.Docs, len(got), len(c.texts))
	}
}

// TestScanAcrossRuns pages through a scan (newest first) over rows of
// several files and batches, with and without a time window that rows
// fall wholly out of.
func TestScanAcrossRuns(t *testing.T) {
	c := newCorpus(t)
	day := int64(24 * 60 * 60 * 1000)
	var order []string // every document, oldest first
	x := 0
	add := func(b *Batch, file string, n int, days int64) {
		var docs []Doc
		for range n {
			d := doc(fmt.Sprintf("%s%d", file, x), 0, "user", "p", 0, fmt.Sprintf("word %d", x))
			d.Time = base + days*day
			if days == 0 {
				d.Time = base + int64(x/50)*day
			}
			x++
			docs = append(docs, d)
			c.texts[key(file, d.EntryID, 0)] = d.Text
			order = append(order, file+":"+d.EntryID)
		}
		b.AddDocs(file, docs)
	}
	b := c.s.Batch()
	add(b, "x", 2*runDocs+10, 0)
	add(b, "y", 5, 20)
	add(b, "x", 10, 0)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b = c.s.Batch()
	add(b, "y", 3, 20)
	add(b, "x", 100, 0)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    string
		keep func(k int) bool // by place in order
	}{
		{"re:word", func(int) bool { return true }},
		{"re:word before:2026-03-03", func(k int) bool { return strings.HasPrefix(order[k], "x:") && k < 100 }},
	} {
		var want []string
		for k := len(order) - 1; k >= 0; k-- {
			if tc.keep(k) {
				want = append(want, order[k])
			}
		}
		for _, limit := range []int{500, 7, runDocs} {
			var got []string
			cur := ""
			for range 200 {
				hits, p := c.find(t, tc.q, SearchOptions{Limit: limit, Cursor: cur})
				if !p.Scanned {
					t.Fatalf("%q did not scan", tc.q)
				}
				got = append(got, hits...)
				if cur = p.Next; cur == "" {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%q in pages of %d: %d hits %v,\nwant %d %v", tc.q, limit, len(got), got, len(want), want)
			}
		}
	}
}

// TestRankedAcrossRuns: a ranked search reads its candidates from many
// rows at once, some of them deleted, and gives each hit's fields as added.
func TestRankedAcrossRuns(t *testing.T) {
	c := newCorpus(t)
	added := map[string]Doc{}
	n := 0
	for batch := range 3 {
		b := c.s.Batch()
		for f := range 4 {
			file := fmt.Sprintf("f%d", f)
			var docs []Doc
			for k := range 40 + 50*f {
				n++
				d := Doc{EntryID: fmt.Sprintf("e%d", n), Position: k + 1000*batch, Part: n % 3, Type: []string{"text", "toolCall"}[n%2],
					Role: []string{"user", "assistant", "tool"}[n%3], Project: fmt.Sprintf("p%d", f%2), Time: base + int64(n)*1000,
					Text: "common" + strings.Repeat(" pad", n%7)}
				docs = append(docs, d)
				c.texts[key(file, d.EntryID, d.Part)] = d.Text
				added[file+":"+d.EntryID] = d
			}
			b.AddDocs(file, docs)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	c.drop(t, "f2")
	for k := range added {
		if strings.HasPrefix(k, "f2:") {
			delete(added, k)
		}
	}
	pq, err := search.Parse("common")
	if err != nil {
		t.Fatal(err)
	}
	var hits []Hit
	cur := ""
	for range 100 {
		p, err := c.s.Search(context.Background(), pq, SearchOptions{Limit: 100, Cursor: cur, Text: c.text})
		if err != nil || p.Scanned {
			t.Fatalf("%v (scanned %v)", err, p.Scanned)
		}
		hits = append(hits, p.Hits...)
		if cur = p.Next; cur == "" {
			break
		}
	}
	if len(hits) != len(added) {
		t.Fatalf("%d hits, want %d", len(hits), len(added))
	}
	for _, h := range hits {
		d, ok := added[h.File+":"+h.EntryID]
		if !ok || h.Position != d.Position || h.Part != d.Part || h.Type != d.Type || h.Role != d.Role ||
			h.Project != d.Project || h.Time != d.Time {
			t.Fatalf("hit %+v, added %+v (%v)", h, d, ok)
		}
		delete(added, h.File+":"+h.EntryID)
	}
}

// TestReopen: a store closed and opened again holds the same documents
// and dead ids, and numbers new documents past every id given before,
// those of deleted documents included.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	c := &corpus{s: openT(t, path), texts: map[string]string{}}
	c.add(t, "a", doc("a1", 0, "user", "p", 1, "alpha"), doc("a2", 0, "user", "p", 2, "alpha beta"))
	c.add(t, "b", doc("b1", 0, "user", "p", 3, "beta"))
	c.drop(t, "b") // the greatest id
	before := storedDocs(t, c.s.conn())
	st, _ := c.s.Stats()
	if err := c.s.Close(); err != nil {
		t.Fatal(err)
	}
	c.s = openT(t, path)
	if after := storedDocs(t, c.s.conn()); !slices.Equal(after, before) {
		t.Fatalf("after reopening: %+v, before %+v", after, before)
	}
	if st2, _ := c.s.Stats(); st2.Docs != st.Docs || st2.TextBytes != st.TextBytes {
		t.Fatalf("Stats after reopening %+v, before %+v", st2, st)
	}
	if got := deadIDs(t, c.s); !slices.Equal(got, []int64{3}) {
		t.Fatalf("dead %v, want [3]", got)
	}
	if got, _ := c.find(t, "alpha", SearchOptions{}); !slices.Equal(got, []string{"a:a1", "a:a2"}) {
		t.Fatalf("alpha: %v", got)
	}
	c.add(t, "c", doc("c1", 0, "user", "p", 4, "gamma"))
	if docs := storedDocs(t, c.s.conn()); docs[len(docs)-1].id != 4 {
		t.Fatalf("a new document after reopening has id %d, want 4", docs[len(docs)-1].id)
	}
	checkIndex(t, c.s)
}

// TestDamagedRun: a row of documents that does not decode makes a search
// fail with ErrCorrupt, ranked or scanning, and never panics the reader.
func TestDamagedRun(t *testing.T) {
	fresh := func() (*corpus, storedRun) {
		c := newCorpus(t)
		var docs []Doc
		for k := range 20 {
			docs = append(docs, doc(fmt.Sprintf("e%d", k/2), k%2, "user", "p", k, "common word"))
		}
		c.add(t, "f", docs...)
		var sr storedRun
		if err := c.s.conn().QueryRow(`SELECT hi, lo, fid, data FROM docruns`).Scan(&sr.hi, &sr.lo, &sr.fid, &sr.data); err != nil {
			t.Fatal(err)
		}
		return c, sr
	}
	_, good := fresh()
	// The row holds several groups: the lengths of all but the last, then the groups.
	len0, k := binary.Uvarint(good.data)
	hdr := k // the header's length
	for range (good.hi-good.lo)/groupDocs - 1 {
		_, n := binary.Uvarint(good.data[hdr:])
		hdr += n
	}
	if good.hi-good.lo != 19 || groupDocs >= 20 || k <= 0 || len0 == 0 || hdr+int(len0) >= len(good.data) {
		t.Fatalf("row %d-%d of %d bytes, header of %d: not the row the test expects", good.lo, good.hi, len(good.data), hdr)
	}
	second := hdr + int(len0) // the second group's first document
	with := func(at int, b byte) func([]byte) []byte {
		return func(d []byte) []byte { d[at] = b; return d }
	}
	first := func(l uint64) func([]byte) []byte { // the first group's length set to l
		return func(d []byte) []byte { return append(binary.AppendUvarint(nil, l), d[k:]...) }
	}
	for _, tc := range []struct {
		name string
		data func([]byte) []byte
		set  string // else
	}{
		{"truncated", func(d []byte) []byte { return d[:len(d)-3] }, ""},
		{"trailing bytes", func(d []byte) []byte { return append(d, 0, 0, 0, 0) }, ""},
		{"first group too long", first(len0 + 1), ""},
		{"first group past the end", first(uint64(len(good.data))), ""},
		{"first group too short", first(len0 - 1), ""},
		{"first group empty", first(0), ""},
		{"a header that does not end", func([]byte) []byte { return bytes.Repeat([]byte{0xff}, 12) }, ""},
		{"unknown flag", with(hdr, good.data[hdr]|0x80), ""},
		{"first like the one before", with(hdr, good.data[hdr]|sameEntry), ""},
		{"a group's first like the one before", with(second, good.data[second]|sameNames), ""},
		{"empty", func([]byte) []byte { return []byte{} }, ""},
		{"fewer ids than documents", nil, `lo = lo + 1`},
		{"more ids than documents", nil, `hi = hi + 1`},
		{"more ids than a row holds", nil, fmt.Sprintf(`lo = hi - %d`, runDocs)},
		{"not a blob", nil, `data = 'text'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := fresh()
			var err error
			if tc.data != nil {
				_, err = c.s.conn().Exec(`UPDATE docruns SET data = ?`, tc.data(slices.Clone(good.data)))
			} else {
				_, err = c.s.conn().Exec(`UPDATE docruns SET ` + tc.set)
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"common", "re:word"} {
				pq, _ := search.Parse(q)
				if _, err := c.s.Search(context.Background(), pq, SearchOptions{Text: c.text}); !errors.Is(err, ErrCorrupt) {
					t.Errorf("%q: %v, want ErrCorrupt", q, err)
				}
			}
		})
	}
	// Every truncation and many single-byte changes: an error or a decoding, no panic.
	read := func(lo, hi int64, data []byte) {
		rd := newRunReader(lo, hi, good.fid, data)
		n := int64(0)
		for rd.next() {
			n++
		}
		if rd.err == nil && n != hi-lo+1 {
			t.Fatalf("%d documents decoded from a row of %d, without an error", n, hi-lo+1)
		}
	}
	for l := range len(good.data) {
		read(good.lo, good.hi, good.data[:l])
	}
	for i := range good.data {
		for _, v := range []byte{0, 1, 0x7f, 0x80, 0xff, good.data[i] ^ 1, good.data[i] ^ 0x40} {
			d := slices.Clone(good.data)
			d[i] = v
			read(good.lo, good.hi, d)
		}
	}
	read(1, math.MaxInt64, good.data)
	read(math.MinInt64, 0, good.data)
}

// pathT returns the path of file id fid.
func pathT(t *testing.T, s *Store, fid int64) string {
	t.Helper()
	tx, err := s.conn().BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	p, err := s.pathOf(tx, fid)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
