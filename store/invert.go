package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"

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

// invert groups the batch's words and returns them with each document's
// length level (by batch position).
func (b *Batch) invert() ([]invertedWord, []int64) {
	pairs := radixSort(b.pairs) // b.pairs stays, should the commit fail and be tried again
	distinct := make([]int, len(b.docs))
	words := make([]invertedWord, 0, len(pairs)/8+len(b.filters))
	var arena []byte
	posBuf := make([]int32, 0, len(pairs))
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
		words = append(words, invertedWord{word: arena[a:len(arena):len(arena)], pos: posBuf[start:len(posBuf):len(posBuf)]})
		i = j
	}
	for w, pos := range b.filters {
		words = append(words, invertedWord{word: []byte(w), pos: pos})
	}
	// Sort small (key, index) pairs, not the words themselves.
	type keyed struct {
		key uint64
		i   int32
	}
	keys := make([]keyed, len(words))
	for i := range words {
		var k [8]byte
		copy(k[:], words[i].word)
		keys[i] = keyed{binary.BigEndian.Uint64(k[:]), int32(i)}
	}
	slices.SortFunc(keys, func(x, y keyed) int {
		if x.key != y.key {
			return cmp.Compare(x.key, y.key)
		}
		return bytes.Compare(words[x.i].word, words[y.i].word)
	})
	sorted := make([]invertedWord, len(words))
	for i, k := range keys {
		sorted[i] = words[k.i]
	}
	words = sorted
	levels := make([]int64, len(b.docs))
	for i, n := range distinct {
		levels[i] = lenLevel(n)
	}
	return words, levels
}

// radixSort returns the occurrences of chunks grouped by hash, keeping
// the order of equal ones (so positions stay ascending): a radix sort on
// the upper 33 bits, 11 at a time (2,048 buckets stay in cache), then a
// stable sort of the rare runs whose upper bits are equal but whole
// hashes are not.
func radixSort(chunks [][]wordAt) []wordAt {
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	tmp, out := make([]wordAt, n), make([]wordAt, n)
	const digit = 11
	count := make([]int, 1<<digit)
	scatter := func(src [][]wordAt, dst []wordAt, shift uint) {
		clear(count)
		for _, c := range src {
			for _, p := range c {
				count[p.h>>shift&(1<<digit-1)]++
			}
		}
		sum := 0
		for k, c := range count {
			count[k] = sum
			sum += c
		}
		for _, c := range src {
			for _, p := range c {
				k := p.h >> shift & (1<<digit - 1)
				dst[count[k]] = p
				count[k]++
			}
		}
	}
	scatter(chunks, out, 64-3*digit)
	scatter([][]wordAt{out}, tmp, 64-2*digit)
	scatter([][]wordAt{tmp}, out, 64-digit)
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
