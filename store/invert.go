package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"github.com/piweb/piweb/search"
)

// A batch numbers its distinct words as the text is read: an
// open-addressing table from a word's hash (search.AppendTermHashes) to
// its number, which also remembers the last document holding the word,
// so that a document's repeated words are dropped at once. Each word
// keeps its documents as they come, in document order, already encoded
// as the index stores them (index.go's ids): its first and last batch
// position, and the steps between them as uvarints, in an arena that a
// word's steps leave for twice the room when they fill theirs. Writing
// the segment then copies each word's steps as they are (a batch's ids
// are its positions plus the first id), and the batch keeps no list of
// (word, document) pairs to sort. Each word is spelled out once, where it
// first occurs, so the batch keeps no text. Words are few next to their
// occurrences, and the frequent ones, most of the occurrences, stay in
// the cache.
//
// Two words with the same 64-bit hash in one batch (about one chance in
// ten million for a batch of a million distinct words) would share the
// first one's spelling: the second could not be found in that batch's
// segment until the file is indexed again.

// termTable numbers a batch's distinct words.
type termTable struct {
	slots []termSlot // a power of two of them, at most half full
	terms []termInfo
	spell []byte  // the words, spelled out where they first occur (search.TermAt)
	steps []byte  // the words' steps (termInfo.off); 4 GB at most
	seen  []int32 // addWords' words met again in a document
}

type termSlot struct {
	h    uint64
	t    int32  // the term's index + 1; 0 for an empty slot
	last uint32 // the last batch position holding it
}

// termInfo is one distinct word of a batch.
type termInfo struct {
	n           uint32 // how many positions hold it
	first, last uint32 // the first and last of them
	off, len    uint32 // the steps between them in termTable.steps
	room        uint32 // bytes from off the word may fill before it moves
	start, size uint32 // its spelling in termTable.spell
}

var tablePool = sync.Pool{New: func() any { return &termTable{slots: make([]termSlot, 1<<12)} }}

// addWords adds the words hs of the document at batch position pos, whose
// text is text, and returns how many distinct ones it has. Most words
// repeat one already in the document: a first pass (seenAgain) notes,
// without a branch, which do not, and a second adds those.
func (b *Batch) addWords(hs []search.TermHash, text string, pos uint32) int {
	if b.tt == nil {
		b.tt = tablePool.Get().(*termTable)
	}
	tt := b.tt
	added := 0 // new words
	seen := grow(tt.seen, len(hs))
	tt.seen = seen
	n := 0 // words seen before, first in the document (in seen)
	for len(hs) > 0 {
		var i int
		var s *termSlot
		if i, n, s = seenAgain(tt.slots, hs, pos, seen, n); s == nil {
			break
		}
		tt.add(s, hs[i], text, pos)
		added++
		hs = hs[i+1:]
	}
	for _, t := range seen[:n] {
		ti := &tt.terms[t]
		d := pos - ti.last
		ti.last = pos
		ti.n++
		if ti.len+binary.MaxVarintLen32 > ti.room {
			tt.move(ti)
		}
		if at := ti.off + ti.len; d < 0x80 {
			tt.steps[at] = byte(d)
			ti.len++
		} else {
			ti.len += uint32(binary.PutUvarint(tt.steps[at:], uint64(d)))
		}
	}
	return added + n
}

// seenAgain goes through hs until a word not in the table, whose empty
// slot it returns. It appends to seen[:n] the words first met in the
// document at pos, and returns their new number and where it stopped.
func seenAgain(slots []termSlot, hs []search.TermHash, pos uint32, seen []int32, n int) (int, int, *termSlot) {
	mask := uint64(len(slots) - 1)
	for i, th := range hs {
		k := th.H & mask
		s := &slots[k]
		for s.h != th.H || s.t == 0 {
			if s.t == 0 {
				return i, n, s
			}
			k = (k + 1) & mask
			s = &slots[k]
		}
		first := s.last != pos
		s.last = pos
		seen[n] = s.t - 1
		n += b2i(first)
	}
	return len(hs), n, nil
}

// add adds a word in empty slot s.
func (tt *termTable) add(s *termSlot, th search.TermHash, text string, pos uint32) {
	a := len(tt.spell)
	tt.spell = search.TermAt(tt.spell, text, int(th.Off))
	tt.terms = append(tt.terms, termInfo{n: 1, first: pos, last: pos, start: uint32(a), size: uint32(len(tt.spell) - a)})
	*s = termSlot{h: th.H, t: int32(len(tt.terms)), last: pos}
	if 2*len(tt.terms) > len(tt.slots) {
		tt.rehash()
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// move gives a word's steps twice their room, at the end of the arena.
// The arena doubles when full (append grows a large slice by a quarter,
// and zeroes the new part): it is kept for the next batch, which then
// seldom grows it.
func (tt *termTable) move(ti *termInfo) {
	room := max(2*ti.room, 16)
	at := len(tt.steps)
	end := at + int(room)
	if uint64(end) > math.MaxUint32 {
		panic("store: a batch of more than 4 GB of steps")
	}
	if end > cap(tt.steps) {
		steps := make([]byte, at, max(2*cap(tt.steps), end, minSteps))
		copy(steps, tt.steps)
		tt.steps = steps
	}
	tt.steps = tt.steps[:end] // what a word's room held before is never read
	copy(tt.steps[at:], tt.steps[ti.off:ti.off+ti.len])
	ti.off, ti.room = uint32(at), room
}

// minSteps is the least arena of steps.
const minSteps = 64 << 10

// word returns the spelling of term t.
func (tt *termTable) word(t int) []byte {
	ti := &tt.terms[t]
	return tt.spell[ti.start : ti.start+ti.size : ti.start+ti.size]
}

// rehash doubles the slots.
func (tt *termTable) rehash() {
	old := tt.slots
	tt.slots = make([]termSlot, 2*len(old))
	mask := uint64(len(tt.slots) - 1)
	for _, s := range old {
		if s.t == 0 {
			continue
		}
		k := s.h & mask
		for tt.slots[k].t != 0 {
			k = (k + 1) & mask
		}
		tt.slots[k] = s
	}
}

// reset empties the table for another batch.
func (tt *termTable) reset() {
	clear(tt.slots)
	tt.terms, tt.spell, tt.steps = tt.terms[:0], tt.spell[:0], tt.steps[:0]
}

// scratch is the memory one inversion works in, kept in a pool between
// commits: a first build commits hundreds of batches.
type scratch struct {
	keys    []keyedWord
	tmp     []keyedWord // sortKeys' other buffer
	filters []filterList
	levels  []int64
	ids     []int64
	head    []byte
	bits    []byte // a bitmap list
}

// filterList is a filter word and the batch positions holding it.
type filterList struct {
	word []byte
	pos  []int32
}

// keyedWord is a word's first 8 bytes (big-endian) and its index: a
// term's, or len(terms) plus a filter's. Sorting these small pairs, not
// the words, orders the words.
type keyedWord struct {
	key uint64
	i   int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// grow returns s with length n, reusing its array when large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n, n+n/4)
}

// inverted is a batch's words, in order, ready to be written.
type inverted struct {
	tt      *termTable
	filters []filterList
	order   []keyedWord
}

// word returns the spelling of word i (keyedWord.i).
func (in *inverted) word(i int32) []byte {
	if in.tt != nil && int(i) < len(in.tt.terms) {
		return in.tt.word(int(i))
	}
	return in.filters[int(i)-in.nterms()].word
}

func (in *inverted) nterms() int {
	if in.tt == nil {
		return 0
	}
	return len(in.tt.terms)
}

// invert orders the batch's words and returns them with each document's
// length level (by batch position). They live in sc until it goes back
// to the pool.
func (b *Batch) invert(sc *scratch) (*inverted, []int64) {
	in := &inverted{tt: b.tt, filters: sc.filters[:0]}
	for w, pos := range b.filters {
		if len(*pos) > 0 {
			in.filters = append(in.filters, filterList{word: []byte(w), pos: *pos})
		}
	}
	sc.filters = in.filters
	nt := in.nterms()
	keys := grow(sc.keys, nt+len(in.filters))
	for i := range keys {
		var k [8]byte
		copy(k[:], in.word(int32(i)))
		keys[i] = keyedWord{binary.BigEndian.Uint64(k[:]), int32(i)}
	}
	sc.keys = keys
	sc.tmp = grow(sc.tmp, len(keys))
	in.order = sortKeys(keys, sc.tmp, func(x, y keyedWord) int {
		if x.key != y.key {
			return cmp.Compare(x.key, y.key)
		}
		return bytes.Compare(in.word(x.i), in.word(y.i))
	})
	levels := grow(sc.levels, len(b.docs))
	for i, n := range b.distinct {
		levels[i] = lenLevel(n)
	}
	sc.levels = levels
	return in, levels
}

// sortKeys sorts keys by compare, which orders them by key first, and
// returns them sorted, in keys or in tmp (as long). Many are sorted by
// their keys a byte at a time, least significant first (a radix sort),
// then each run of one key by compare.
func sortKeys(keys, tmp []keyedWord, compare func(x, y keyedWord) int) []keyedWord {
	if len(keys) < 1024 {
		slices.SortFunc(keys, compare)
		return keys
	}
	var counts [8][256]int
	for _, k := range keys {
		for b := range counts {
			counts[b][byte(k.key>>(8*b))]++
		}
	}
	src, dst := keys, tmp[:len(keys)]
	for b := range counts {
		c := &counts[b]
		if c[byte(src[0].key>>(8*b))] == len(src) {
			continue // one value of this byte
		}
		sum := 0
		for v, n := range c {
			c[v], sum = sum, sum+n
		}
		for _, k := range src {
			v := byte(k.key >> (8 * b))
			dst[c[v]] = k
			c[v]++
		}
		src, dst = dst, src
	}
	for i := 0; i < len(src); {
		j := i + 1
		for j < len(src) && src[j].key == src[i].key {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(src[i:j], compare)
		}
		i = j
	}
	return src
}
