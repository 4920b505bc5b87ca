package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/piweb/piweb/search"
)

// A batch is inverted by sorting, not with a map from words: every word
// occurrence is a (hash, position, offset) triple appended as the text is
// read; a radix sort on the hash brings each word's occurrences together,
// in position order; each group is one word, spelled out once from the
// text of its first occurrence. Appending and sorting touch memory in
// order, where a map of a million words misses the cache at every word.
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

// scratch is the memory one inversion works in, kept in a pool between
// commits: a first build commits hundreds of batches of millions of words.
type scratch struct {
	tmp, out []wordAt
	distinct []int
	words    []invertedWord
	sorted   []invertedWord
	keys     []keyedWord
	arena    []byte
	pos      []int32
	levels   []int64
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
	pairs := radixSort(sc, b.pairs) // b.pairs stays, should the commit fail and be tried again
	distinct := grow(sc.distinct, len(b.docs))
	clear(distinct)
	sc.distinct = distinct
	words := sc.words[:0]
	arena := sc.arena[:0]
	posBuf := grow(sc.pos, len(pairs))[:0]
	for i := 0; i < len(pairs); {
		j := i + 1
		for j < len(pairs) && pairs[j].h == pairs[i].h {
			j++
		}
		start := len(posBuf)
		last := uint32(1<<32 - 1)
		for _, p := range pairs[i:j] {
			if p.pos != last {
				posBuf = append(posBuf, int32(p.pos))
				distinct[p.pos]++
				last = p.pos
			}
		}
		first := pairs[i]
		a := len(arena)
		arena = search.TermAt(arena, b.texts[first.pos], int(first.off))
		// The arena may move as it grows: words keep offsets until it is whole.
		words = append(words, invertedWord{word: arena[a:len(arena):len(arena)], pos: posBuf[start:len(posBuf):len(posBuf)]})
		i = j
	}
	sc.pos = posBuf
	// Point the words into the arena as it ends (earlier growth left some
	// in arrays it copied from: their bytes are the same, but let them go).
	off := 0
	for k := range words {
		n := len(words[k].word)
		words[k].word = arena[off : off+n : off+n]
		off += n
	}
	sc.arena = arena
	for w, pos := range b.filters {
		words = append(words, invertedWord{word: []byte(w), pos: pos})
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
	for i, n := range distinct {
		levels[i] = lenLevel(n)
	}
	sc.levels = levels
	return sorted, levels
}

// radixSort returns the occurrences of chunks grouped by hash, keeping
// the order of equal ones (so positions stay ascending): a radix sort on
// the upper 33 bits, 11 at a time (2,048 buckets stay in cache), then a
// stable sort of the rare runs whose upper bits are equal but whole
// hashes are not.
func radixSort(sc *scratch, chunks [][]wordAt) []wordAt {
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	sc.tmp, sc.out = grow(sc.tmp, n), grow(sc.out, n)
	tmp, out := sc.tmp, sc.out
	const digit = 11
	// The three digits' counts in one pass, then each one's places.
	var counts [3][1 << digit]int
	for _, c := range chunks {
		for _, p := range c {
			counts[0][p.h>>(64-3*digit)&(1<<digit-1)]++
			counts[1][p.h>>(64-2*digit)&(1<<digit-1)]++
			counts[2][p.h>>(64-digit)]++
		}
	}
	for d := range counts {
		sum := 0
		for k, c := range counts[d] {
			counts[d][k] = sum
			sum += c
		}
	}
	scatter := func(src [][]wordAt, dst []wordAt, count *[1 << digit]int, shift uint) {
		for _, c := range src {
			for _, p := range c {
				k := p.h >> shift & (1<<digit - 1)
				dst[count[k]] = p
				count[k]++
			}
		}
	}
	scatter(chunks, out, &counts[0], 64-3*digit)
	scatter([][]wordAt{out}, tmp, &counts[1], 64-2*digit)
	scatter([][]wordAt{tmp}, out, &counts[2], 64-digit)
	for i := 0; i < len(out); {
		j := i + 1
		mixed := false
		for j < len(out) && out[j].h>>(64-3*digit) == out[i].h>>(64-3*digit) {
			mixed = mixed || out[j].h != out[i].h
			j++
		}
		if mixed {
			slices.SortStableFunc(out[i:j], func(x, y wordAt) int { return cmp.Compare(x.h, y.h) })
		}
		i = j
	}
	return out
}
