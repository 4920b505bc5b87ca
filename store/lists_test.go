package store

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randomIDs returns n ascending ids from first on, each step at most
// maxStep but for one in 50, of 128 to 400 (a step of two bytes).
func randomIDs(r *rand.Rand, first int64, n, maxStep int) []int64 {
	ids := []int64{first}
	for len(ids) < n {
		step := 1 + int64(r.IntN(maxStep))
		if r.IntN(50) == 0 {
			step = 128 + int64(r.IntN(273))
		}
		ids = append(ids, ids[len(ids)-1]+step)
	}
	return ids
}

// decodeList decodes an encoded list as a search reads it.
func decodeList(t *testing.T, enc []byte) []int64 {
	t.Helper()
	it := blockIter{raw: enc}
	ids, err := it.ids(nil)
	if err != nil {
		t.Fatalf("%x: %v", enc, err)
	}
	return ids
}

// TestIDLists: lists of every density are stored as steps or as a bitmap,
// whichever is shorter, and read back as written.
func TestIDLists(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := map[bool]int{}
	for range 2000 {
		ids := randomIDs(r, 1+int64(r.IntN(1e6)), 1+r.IntN(300), 1+r.IntN(40))
		enc := encodeIDs(nil, ids)
		l, ok := parseIDs(enc)
		if !ok {
			t.Fatalf("%v: does not parse", ids)
		}
		kinds[l.bits != nil]++
		steps := 0
		for k := 1; k < len(ids); k++ {
			steps += uvarintLen(uint64(ids[k] - ids[k-1]))
		}
		if got, want := l.bits != nil, bitmapLen(ids[0], ids[len(ids)-1]) < steps; got != want {
			t.Fatalf("%v: bitmap %v, want %v", ids, got, want)
		}
		if got := decodeList(t, enc); !slices.Equal(got, ids) {
			t.Fatalf("read back %v, want %v", got, ids)
		}
	}
	if kinds[true] == 0 || kinds[false] == 0 {
		t.Fatalf("kinds used: %v", kinds)
	}
}

// TestSpliceLists: lists that follow one another, of either kind, make one
// list of the shorter kind holding all their ids.
func TestSpliceLists(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var dst, bits []byte
	kinds := map[bool]int{}
	for range 2000 {
		var all []int64
		var lists []idList
		var encs [][]byte
		next := 1 + int64(r.IntN(100))
		for range 1 + r.IntN(5) {
			ids := randomIDs(r, next, 1+r.IntN(100), 1+r.IntN(20))
			next = ids[len(ids)-1] + 1 + int64(r.IntN(2000))
			all = append(all, ids...)
			encs = append(encs, encodeIDs(nil, ids))
		}
		for _, e := range encs {
			l, ok := parseIDs(e)
			if !ok {
				t.Fatal("does not parse")
			}
			lists = append(lists, l)
		}
		var ok bool
		if dst, bits, ok = spliceLists(dst[:0], bits, lists); !ok {
			t.Fatal("lists do not splice")
		}
		l, ok := parseIDs(dst)
		if !ok {
			t.Fatalf("spliced list does not parse")
		}
		kinds[l.bits != nil]++
		if got := decodeList(t, dst); !slices.Equal(got, all) {
			t.Fatalf("spliced %v, want %v", got, all)
		}
		if want := encodeIDs(nil, all); !slices.Equal(dst, want) {
			t.Fatalf("spliced %x, encoded %x", dst, want)
		}
	}
	if kinds[true] == 0 || kinds[false] == 0 {
		t.Fatalf("kinds made: %v", kinds)
	}
}

// TestBadBitmaps: a bitmap list whose header disagrees with its bits is
// damage, not a list.
func TestBadBitmaps(t *testing.T) {
	ids := []int64{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	good := encodeIDs(nil, ids)
	if l, ok := parseIDs(good); !ok || l.bits == nil {
		t.Fatalf("%x: not a bitmap", good)
	}
	for name, enc := range map[string][]byte{
		"count":     append(appendHead(nil, 10, 10, 20, true), 0xff, 0x07),
		"first":     append(appendHead(nil, 10, 10, 20, true), 0xfe, 0x07),
		"last":      append(appendHead(nil, 10, 10, 20, true), 0xff, 0x03),
		"long":      append(appendHead(nil, 11, 10, 20, true), 0xff, 0x07, 0),
		"short":     append(appendHead(nil, 11, 10, 20, true), 0xff),
		"too many":  append(appendHead(nil, 12, 10, 20, true), 0xff, 0x07),
		"no ids":    append(appendHead(nil, 0, 10, 20, true), 0xff, 0x07),
		"past last": append(appendHead(nil, 11, 10, 20, true), 0xff, 0x0f),
	} {
		it := blockIter{raw: enc}
		if _, err := it.ids(nil); err == nil {
			t.Errorf("%s: %x read", name, enc)
		}
	}
}

// TestSpliceDamaged: a merge that meets a list of steps running past its
// last id, spliced into a bitmap, reports damage instead of panicking.
func TestSpliceDamaged(t *testing.T) {
	dense := encodeIDs(nil, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
	bad := append(appendHead(nil, 3, 20, 22, false), 1, 200) // 20, 21, 221: past 22
	var lists []idList
	for _, e := range [][]byte{dense, bad} {
		l, ok := parseIDs(e)
		if !ok {
			t.Fatalf("%x does not parse", e)
		}
		lists = append(lists, l)
	}
	if _, _, ok := spliceLists(nil, nil, lists); ok {
		t.Fatal("a damaged list spliced")
	}
}

// FuzzIDList: any bytes read as a list of ids either fail as damage or
// give strictly ascending ids that encode back to a list read the same; splicing a
// list that parses after another never panics.
func FuzzIDList(f *testing.F) {
	f.Add(encodeIDs(nil, []int64{1, 2, 3, 5, 8, 13, 21, 34, 35, 36, 37, 38, 39, 40}))
	f.Add(encodeIDs(nil, []int64{7, 300, 301, 100000}))
	f.Add(append(appendHead(nil, 11, 10, 20, true), 0xff, 0x07))
	f.Fuzz(func(t *testing.T, raw []byte) {
		it := blockIter{raw: raw}
		ids, err := it.ids(nil)
		if l, ok := parseIDs(raw); ok {
			dense := encodeIDs(nil, []int64{l.first - 20, l.first - 19, l.first - 18, l.first - 17, l.first - 16, l.first - 15, l.first - 14, l.first - 13, l.first - 12})
			if d, ok := parseIDs(dense); ok && l.first >= 21 {
				spliceLists(nil, nil, []idList{d, l}) // may report damage, never panic
			}
		}
		if err != nil {
			return
		}
		for k := range ids {
			if k > 0 && ids[k] <= ids[k-1] {
				t.Fatalf("%x read as %v: not ascending", raw, ids)
			}
		}
		if len(ids) == 0 {
			t.Fatalf("%x read as no ids", raw)
		}
		if got := decodeList(t, encodeIDs(nil, ids)); !slices.Equal(got, ids) {
			t.Fatalf("%v encoded read back as %v", ids, got)
		}
	})
}
