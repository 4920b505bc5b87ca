package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/piweb/piweb/search"
)

// A batch numbers its distinct words as the text is read: an
// open-addressing table from a word's hash (search.AppendTermHashes) to
// its number, which also remembers the last document holding the word,
// so that a document's repeated words are dropped at once. Each (word,
// document) pair is appended, in document order; inverting is then a
// counting sort of the pairs by word, which keeps each word's documents
// in order. Each word is spelled out once, where it first occurs, so the
// batch keeps no text. Words are few next to their occurrences, and the
// frequent ones, most of the occurrences, stay in the cache.
//
// Two words with the same 64-bit hash in one batch (about one chance in
// ten million for a batch of a million distinct words) would share the
// first one's spelling: the second could not be found in that batch's
// segment until the file is indexed again.

// invertedWord is one word of a batch and the positions holding it.
type invertedWord struct {
	word []byte
	pos  []int32
}

// termTable numbers a batch's distinct words.
type termTable struct {
	slots []termSlot // a power of two of them, at most half full
	terms []termInfo
	spell []byte // the words, spelled out where they first occur (search.TermAt)
}

type termSlot struct {
	h    uint64
	t    int32  // the term's index + 1; 0 for an empty slot
	last uint32 // the last batch position holding it
}

// termInfo is one distinct word of a batch.
type termInfo struct {
	n           uint32 // how many positions hold it
	start, size uint32 // its spelling in termTable.spell
}

// termPos is a (word, batch position) pair.
type termPos struct {
	t, pos uint32
}

// pairChunk is how many pairs a chunk of Batch.pairs holds.
const pairChunk = 1 << 16

// pairBuf is the array of a chunk; chunks go back to chunkPool once their
// batch is committed.
type pairBuf [pairChunk]termPos

var (
	chunkPool = sync.Pool{New: func() any { return new(pairBuf) }}
	tablePool = sync.Pool{New: func() any { return &termTable{slots: make([]termSlot, 1<<12)} }}
)

// addWords adds the words hs of the document at batch position pos, whose
// text is text, and returns how many distinct ones it has.
func (b *Batch) addWords(hs []search.TermHash, text string, pos uint32) int {
	if b.tt == nil {
		b.tt = tablePool.Get().(*termTable)
	}
	tt := b.tt
	distinct := 0
	for _, th := range hs {
		mask := uint64(len(tt.slots) - 1)
		k := th.H & mask
		var t int32
		for {
			s := &tt.slots[k]
			if s.h == th.H && s.t != 0 {
				if s.last == pos {
					t = -1 // already in this document
				} else {
					s.last = pos
					t = s.t - 1
					tt.terms[t].n++
				}
				break
			}
			if s.t == 0 {
				t = int32(len(tt.terms))
				a := len(tt.spell)
				tt.spell = search.TermAt(tt.spell, text, int(th.Off))
				tt.terms = append(tt.terms, termInfo{n: 1, start: uint32(a), size: uint32(len(tt.spell) - a)})
				*s = termSlot{h: th.H, t: t + 1, last: pos}
				if 2*len(tt.terms) > len(tt.slots) {
					tt.rehash()
				}
				break
			}
			k = (k + 1) & mask
		}
		if t < 0 {
			continue
		}
		distinct++
		if n := len(b.pairs); n == 0 || len(b.pairs[n-1]) == cap(b.pairs[n-1]) {
			b.pairs = append(b.pairs, chunkPool.Get().(*pairBuf)[:0])
		}
		c := &b.pairs[len(b.pairs)-1]
		*c = append(*c, termPos{uint32(t), pos})
	}
	return distinct
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
	tt.terms, tt.spell = tt.terms[:0], tt.spell[:0]
}

// scratch is the memory one inversion works in, kept in a pool between
// commits: a first build commits hundreds of batches of millions of words.
type scratch struct {
	ends   []int
	words  []invertedWord
	sorted []invertedWord
	keys   []keyedWord
	pos    []int32
	levels []int64
}

// keyedWord is a word's first 8 bytes (big-endian) and its index: sorting
// these small pairs, not the words, orders the words.
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

// invert groups the batch's words and returns them with each document's
// length level (by batch position). They live in sc until it goes back
// to the pool.
func (b *Batch) invert(sc *scratch) ([]invertedWord, []int64) {
	var terms []termInfo
	if b.tt != nil {
		terms = b.tt.terms
	}
	// Each word's positions, in order: a counting sort of the pairs.
	ends := grow(sc.ends, len(terms))
	sum := 0
	for t := range terms {
		ends[t] = sum // its start, until the pairs are placed
		sum += int(terms[t].n)
	}
	sc.ends = ends
	pos := grow(sc.pos, sum)
	sc.pos = pos
	for _, c := range b.pairs {
		for _, p := range c {
			pos[ends[p.t]] = int32(p.pos)
			ends[p.t]++
		}
	}
	words := grow(sc.words, len(terms))[:0]
	for t := range terms {
		ti := &terms[t]
		end := ends[t]
		words = append(words, invertedWord{word: b.tt.spell[ti.start : ti.start+ti.size : ti.start+ti.size],
			pos: pos[end-int(ti.n) : end : end]})
	}
	for w, pos := range b.filters {
		words = append(words, invertedWord{word: []byte(w), pos: *pos})
	}
	sc.words = words
	keys := grow(sc.keys, len(words))
	for i := range words {
		var k [8]byte
		copy(k[:], words[i].word)
		keys[i] = keyedWord{binary.BigEndian.Uint64(k[:]), int32(i)}
	}
	slices.SortFunc(keys, func(x, y keyedWord) int {
		if x.key != y.key {
			return cmp.Compare(x.key, y.key)
		}
		return bytes.Compare(words[x.i].word, words[y.i].word)
	})
	sc.keys = keys
	sorted := grow(sc.sorted, len(words))
	for i, k := range keys {
		sorted[i] = words[k.i]
	}
	sc.sorted = sorted
	levels := grow(sc.levels, len(b.docs))
	for i, n := range b.distinct {
		levels[i] = lenLevel(n)
	}
	sc.levels = levels
	return sorted, levels
}
