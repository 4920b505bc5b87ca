package search

import (
	"encoding/binary"
	"math/bits"
	"sync"
	"unicode/utf8"
)

// TermHash is one term of a text as an index builder needs it: the hash
// of the term (HashTerm of what Terms gives) and the byte offset where it
// starts (TermAt spells it out again).
type TermHash struct {
	H   uint64
	Off uint32
}

// Hash constants (from wyhash).
const (
	hk0 = 0xa0761d6478bd642f
	hk1 = 0xe7037ed1a0b428db
	hk2 = 0x8ebc6af09c88c6e3
)

// mum folds the 128-bit product of x and y into 64 bits.
func mum(x, y uint64) uint64 {
	hi, lo := bits.Mul64(x, y)
	return hi ^ lo
}

// HashTerm returns the hash of term under seed, as AppendTermHashes
// computes it: 8 bytes at a time, little-endian, the last 1 to 8 padded
// with zeros and mixed with the length.
func HashTerm(seed uint64, term []byte) uint64 {
	h, n := seed, uint64(len(term))
	for len(term) > 8 {
		h = mum(binary.LittleEndian.Uint64(term)^hk0, h^hk1)
		term = term[8:]
	}
	var w uint64
	for k, c := range term {
		w |= uint64(c) << (8 * k)
	}
	return mum(w^hk0, h^hk2^n)
}

// hashLowerASCII is HashTerm of text[i:j] lower-cased, at most MaxTerm
// bytes of it, for a run of ASCII letters and digits only: lower-casing is
// then setting bit 0x20 of every byte (digits have it already).
func hashLowerASCII(seed uint64, text string, i, j int) uint64 {
	j = min(j, i+MaxTerm)
	h, n := seed, uint64(j-i)
	const set = 0x2020202020202020
	for j-i > 8 {
		h = mum((load64(text, i)|set)^hk0, h^hk1)
		i += 8
	}
	var w uint64
	if i+8 <= len(text) {
		w = (load64(text, i) | set) & (^uint64(0) >> (64 - 8*(j-i)))
	} else {
		for k := i; k < j; k++ {
			w |= uint64(text[k]|0x20) << (8 * (k - i))
		}
	}
	return mum(w^hk0, h^hk2^n)
}

// load64 reads 8 bytes of s at i, little-endian.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// asciiCamelStarts is camelStarts for a run of ASCII letters and digits.
func asciiCamelStarts(dst []int, run string) []int {
	if len(run) > maxCamelRun || len(run) < 2 {
		return dst
	}
	base := len(dst)
	for k := 1; k < len(run); k++ {
		p, c := run[k-1], run[k]
		if c < 'A' || c > 'Z' {
			continue
		}
		if 'a' <= p && p <= 'z' || '0' <= p && p <= '9' || 'A' <= p && p <= 'Z' && k+1 < len(run) && 'a' <= run[k+1] && run[k+1] <= 'z' {
			dst = append(dst, k)
		}
	}
	if len(dst)-base > maxCamelParts {
		return dst[:base]
	}
	return dst
}

// Byte classes of the fast path: ASCII letters and digits (upper-case
// ones with a bit of their own), other ASCII (separators), and the bytes
// of other runes.
const (
	bSep   = 0
	bLower = 1
	bUpper = 3 // bLower|2
	bHigh  = 4
)

var byteClass [256]uint8

func init() {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			byteClass[c] = bHigh
		case 'A' <= c && c <= 'Z':
			byteClass[c] = bUpper
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9': // asciiClass's words (its init may not have run)
			byteClass[c] = bLower
		}
	}
}

// bmp holds class and isUpper of every rune below U+10000 (upper-case
// ones have bit bmpUpper), built on first use: Unicode's tables cost tens
// of nanoseconds a look-up.
var (
	bmp     *[0x10000]uint8
	bmpOnce sync.Once
)

const bmpUpper = 4

func buildBMP() {
	t := new([0x10000]uint8)
	for r := range rune(0x10000) {
		t[r] = class(r)
		if isUpper(r) {
			t[r] |= bmpUpper
		}
	}
	bmp = t
}

// classUpper returns class(r) and isUpper(r).
func classUpper(r rune) (uint8, bool) {
	if r < 0x10000 {
		c := bmp[r]
		return c &^ bmpUpper, c&bmpUpper != 0
	}
	return class(r), isUpper(r)
}

// AppendTermHashes appends to dst the hash (HashTerm under seed) and
// offset of every term TermOffsets gives for text, in the same order. It
// is TermOffsets for building an index: ASCII words are lower-cased and
// hashed in place, never copied.
func AppendTermHashes(dst []TermHash, text string, seed uint64) []TermHash {
	bmpOnce.Do(buildBMP)
	var buf []byte
	var starts []int
	i := 0
	for i < len(text) {
		c := text[i]
		cl := byteClass[c]
		if cl == bSep {
			i++
			continue
		}
		if cl != bHigh {
			// An ASCII word, unless a non-ASCII letter continues it.
			j := i + 1
			var seen uint8 // bUpper's bit when an upper-case letter follows the first
			for j < len(text) {
				k := byteClass[text[j]]
				if k&bLower == 0 {
					break
				}
				seen |= k
				j++
			}
			if j == len(text) || text[j] < utf8.RuneSelf {
				dst = append(dst, TermHash{hashLowerASCII(seed, text, i, j), uint32(i)})
				if seen&2 != 0 {
					starts = asciiCamelStarts(starts[:0], text[i:j])
					for _, s := range starts {
						dst = append(dst, TermHash{hashLowerASCII(seed, text, i+s, j), uint32(i + s)})
					}
				}
				i = j
				continue
			}
		}
		// Anything else as TermOffsets reads it.
		r, size := rune(c), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		cl, _ = classUpper(r)
		switch cl {
		case cSep:
			i += size
		case cSym:
			dst = append(dst, TermHash{HashTerm(seed, append(buf[:0], text[i:i+size]...)), uint32(i)})
			i += size
		case cCJK:
			j := i + size
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if c2, _ := classUpper(r2); c2 != cCJK {
					break
				}
				dst = append(dst, TermHash{HashTerm(seed, append(buf[:0], text[i:j+s2]...)), uint32(i)})
				i, j = j, j+s2
			}
			dst = append(dst, TermHash{HashTerm(seed, append(buf[:0], text[i:j]...)), uint32(i)})
			i = j
		case cWord:
			j := i + size
			upper := false
			for j < len(text) {
				r2, s2 := rune(text[j]), 1
				if r2 >= utf8.RuneSelf {
					r2, s2 = utf8.DecodeRuneInString(text[j:])
				}
				c2, up := classUpper(r2)
				if c2 != cWord {
					break
				}
				upper = upper || up
				j += s2
			}
			run := text[i:j]
			buf, _ = appendLowerCut(buf[:0], run)
			dst = append(dst, TermHash{HashTerm(seed, buf), uint32(i)})
			if upper {
				starts = camelStarts(starts[:0], run)
				for _, s := range starts {
					buf, _ = appendLowerCut(buf[:0], run[s:])
					dst = append(dst, TermHash{HashTerm(seed, buf), uint32(i + s)})
				}
			}
			i = j
		}
	}
	return dst
}
