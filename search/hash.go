package search

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"
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

// hashString is HashTerm of a string.
func hashString(seed uint64, term string) uint64 {
	h, n := seed, uint64(len(term))
	for len(term) > 8 {
		h = mum(load64(term, 0)^hk0, h^hk1)
		term = term[8:]
	}
	var w uint64
	for k := 0; k < len(term); k++ {
		w |= uint64(term[k]) << (8 * k)
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
		w = (load64(text, i) | set) & (^uint64(0) >> ((64 - 8*(j-i)) & 63))
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

// runeTab holds class(r), isUpper(r) (bit tabUpper) and whether lower(r)
// differs from r (bit tabLower) for every rune below tabRunes (the basic
// plane and the one of emoji), built on first use (a few milliseconds):
// Unicode's tables cost tens of nanoseconds a look-up.
var (
	runeTab *[tabRunes]uint8
	tabOnce sync.Once
)

// lowTab holds lower(r) for the runes of one or two bytes, those of the
// scripts with case, built with runeTab.
var lowTab *[0x800]uint16

const (
	tabRunes = 0x20000
	tabUpper = 4
	tabLower = 8
)

func buildTab() {
	t := new([tabRunes]uint8)
	for r := range rune(len(t)) {
		t[r] = class(r)
		if isUpper(r) {
			t[r] |= tabUpper
		}
		if lower(r) != r {
			t[r] |= tabLower
		}
	}
	runeTab = t
	l := new([0x800]uint16)
	for r := range rune(len(l)) {
		l[r] = uint16(lower(r))
	}
	lowTab = l
}

// lowerCut is appendLowerCut(dst, s) through lowTab and runeTab, with
// ASCII and runes of two bytes that stay two bytes read in place.
func lowerCut(dst []byte, s string) []byte {
	start := len(dst)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if len(dst)-start >= MaxTerm {
				return dst
			}
			dst = append(dst, byte(lowTab[c]))
			i++
			continue
		}
		if 0xc2 <= c && c < 0xe0 && i+1 < len(s) && s[i+1]&0xc0 == 0x80 {
			if r := lowTab[rune(c&0x1f)<<6|rune(s[i+1]&0x3f)]; 0x80 <= r && r < 0x800 {
				if len(dst)-start+2 > MaxTerm {
					return dst
				}
				dst = append(dst, byte(0xc0|r>>6), byte(0x80|r&0x3f))
				i += 2
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r < 0x800 {
			r = rune(lowTab[r])
		} else if r < tabRunes {
			if runeTab[r]&tabLower != 0 {
				r = lower(r)
			}
		} else {
			r = lower(r)
		}
		if len(dst)-start+utf8.RuneLen(r) > MaxTerm {
			return dst
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// lowerHash is HashTerm of lowerCut(run), through t.buf, read 8 bytes
// at a time (the buffer has 8 zeros past the term).
func (t *termHasher) lowerHash(run string) uint64 {
	b := lowerCut(t.buf[:0], run)
	n := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	t.buf = b
	if n == 0 {
		return HashTerm(t.seed, nil)
	}
	h := t.seed
	i := 0
	for ; n-i > 8; i += 8 {
		h = mum(binary.LittleEndian.Uint64(b[i:])^hk0, h^hk1)
	}
	w := binary.LittleEndian.Uint64(b[i:]) & (^uint64(0) >> ((64 - 8*(n-i)) & 63))
	return mum(w^hk0, h^hk2^uint64(n))
}

// classify8 reads 8 bytes at once (x, little-endian) and returns masks
// holding bit 7 of each byte that is an ASCII letter or digit (word), or
// not ASCII (high). Every byte is computed on its own (no carry crosses a
// byte: each sum stays below 0x100), so every bit is exact. (Upper-case
// letters are the word bytes without bit 5, 0x20.)
func classify8(x uint64) (word, high uint64) {
	const (
		msb = 0x8080808080808080
		low = 0x7f7f7f7f7f7f7f7f
		b   = 0x0101010101010101
	)
	high = x & msb
	x &= low
	y := x | b*0x20 // a letter's lower case
	letter := (y + b*(0x80-'a')) &^ (y + b*(0x80-'z'-1))
	digit := (x + b*(0x80-'0')) &^ (x + b*(0x80-'9'-1))
	word = (letter | digit) & msb &^ high
	return
}

// gather8 moves bit 7 of each byte of m (its only bits) to bit k for
// byte k (the products of the multiplication never meet, so nothing
// carries).
func gather8(m uint64) uint64 { return m * 0x0002040810204081 >> 56 }

// classify64Go returns classify8's masks for the 64 bytes text[i:i+64],
// one bit a byte: bit k for text[i+k]. (Unrolled: a loop shifts by a
// variable and keeps less in registers.) On amd64 with AVX2, Append
// calls classify64AVX2 instead (classify_amd64.s), which gives the same
// masks.
func classify64Go(text string, i int) (word, high uint64) {
	text = text[i : i+64]
	w, h := classify8(load64(text, 0))
	word, high = gather8(w), gather8(h)
	w, h = classify8(load64(text, 8))
	word, high = word|gather8(w)<<8, high|gather8(h)<<8
	w, h = classify8(load64(text, 16))
	word, high = word|gather8(w)<<16, high|gather8(h)<<16
	w, h = classify8(load64(text, 24))
	word, high = word|gather8(w)<<24, high|gather8(h)<<24
	w, h = classify8(load64(text, 32))
	word, high = word|gather8(w)<<32, high|gather8(h)<<32
	w, h = classify8(load64(text, 40))
	word, high = word|gather8(w)<<40, high|gather8(h)<<40
	w, h = classify8(load64(text, 48))
	word, high = word|gather8(w)<<48, high|gather8(h)<<48
	w, h = classify8(load64(text, 56))
	word, high = word|gather8(w)<<56, high|gather8(h)<<56
	return
}

// lowBits returns a mask of the n (0..64) low bits.
func lowBits(n int) uint64 {
	return 1<<uint(n) - 1 // (1<<64 is 0)
}

// termHasher holds AppendTermHashes' state.
type termHasher struct {
	bad    bool // a byte that is not UTF-8 was met
	seed   uint64
	buf    []byte
	starts []int
	pad    [64]byte // a text shorter than a block, padded
	memo   *memo
	// The memo's hits and misses since they were last memoWindow or more,
	// and how many spans to read without it: text whose spans rarely
	// repeat (prose of a script other than Latin) reads faster without.
	hits, misses, skip int
}

const (
	memoWindow = 512
	memoSkip   = 4096
)

// memoTerms is the most terms a memo entry holds.
const memoTerms = 4

// memoSlots is the number of entries of a memo (a power of two).
const memoSlots = 1024

// memoEntry is the terms of one span of at most 16 bytes: its bytes (k0,
// k1, zero past n), and the hash and offset in the span of each term.
type memoEntry struct {
	k0, k1 uint64
	n, cnt uint8
	off    [memoTerms]uint8
	h      [memoTerms]uint64
}

// memo holds the terms of recent spans, direct-mapped, under seed.
type memo struct {
	seed  uint64
	slots [memoSlots]memoEntry
}

// terms appends the terms of text[i:], a word, CJK run or symbol, and
// of those that follow it up to j, with no ASCII separator before j, and
// returns where the last one ends (j or past it).
func (t *termHasher) terms(dst []TermHash, text string, i, j int) ([]TermHash, int) {
	for i < j {
		if text[i] >= utf8.RuneSelf {
			dst, i = t.general(dst, text, i)
		} else {
			dst, i = t.word(dst, text, i)
		}
	}
	return dst, i
}

// memoFor returns the memo, emptied if it holds another seed's terms.
func (t *termHasher) memoFor(seed uint64) *memo {
	m := t.memo
	if m == nil {
		m = &memo{seed: seed}
		t.memo = m
	} else if m.seed != seed {
		clear(m.slots[:])
		m.seed = seed
	}
	return m
}

// remember appends the terms of the span text[i:j] (16 bytes or fewer,
// k0 and k1 its bytes as the memo keeps them), read as word reads them,
// and keeps them in me unless there are too many or a byte is not UTF-8.
func (t *termHasher) remember(me *memoEntry, dst []TermHash, text string, i, j int, k0, k1 uint64) []TermHash {
	if t.misses++; t.hits+t.misses >= memoWindow {
		if 3*t.misses > memoWindow { // a third or more missed
			t.skip = memoSkip
		}
		t.hits, t.misses = 0, 0
	}
	bad := t.bad
	t.bad = false
	at := len(dst)
	dst, _ = t.terms(dst, text, i, j)
	if !t.bad && len(dst)-at <= memoTerms {
		*me = memoEntry{k0: k0, k1: k1, n: uint8(j - i), cnt: uint8(len(dst) - at)}
		for c, th := range dst[at:] {
			me.h[c], me.off[c] = th.H, uint8(th.Off-uint32(i))
		}
	}
	t.bad = t.bad || bad
	return dst
}

// AppendTermHashes appends to dst the hash (HashTerm under seed) and
// offset of every term TermOffsets gives for text, in the same order. It
// is TermOffsets for building an index: ASCII words are found 64 bytes at
// a time from bit masks (classify64Go, or its AVX2 kernel on amd64),
// lower-cased and hashed in place, never copied; a span of 16 bytes or
// fewer that holds other runes (café, 日本語, →, don’t) takes its terms
// from a memo of recent spans (they repeat); the rest is read as
// TermOffsets reads it, through runeTab, and hashed in place too unless
// lower-casing changes a letter that is not ASCII.
func AppendTermHashes(dst []TermHash, text string, seed uint64) []TermHash {
	h := hasherPool.Get().(*Hasher)
	defer hasherPool.Put(h)
	return h.Append(dst, text, seed)
}

var hasherPool = sync.Pool{New: func() any { return new(Hasher) }}

// Hasher is AppendTermHashes with buffers kept from call to call.
type Hasher struct {
	t termHasher
}

// BadUTF8 reports whether the text of the last Append held bytes that
// are not UTF-8 (it is then read as it is: each such byte a symbol).
func (hs *Hasher) BadUTF8() bool { return hs.t.bad }

// Append is AppendTermHashes.
func (hs *Hasher) Append(dst []TermHash, text string, seed uint64) []TermHash {
	tabOnce.Do(buildTab)
	t := &hs.t
	t.seed, t.bad = seed, false
	if len(text) == 0 {
		return dst
	}
	if len(text) < 64 {
		// One block: the text padded with spaces, which end every term
		// as the text's end does (offsets are the same).
		n := copy(t.pad[:], text)
		copy(t.pad[n:], spaces)
		text = unsafe.String(&t.pad[0], len(t.pad))
	}
	mo := t.memoFor(seed)
	sk := seed ^ hk2
	i := 0
	for i < len(text) {
		b, from := i, 0 // the block is text[b:b+64], its bytes before from read
		if b+64 > len(text) {
			// The last block ends with the text, over bytes already read.
			b = len(text) - 64
			from = i - b
		}
		var word, high uint64
		if useAVX2 {
			block := text[b : b+64] // the 64 bytes the kernel reads
			word, high = classify64AVX2(unsafe.StringData(block))
		} else {
			word, high = classify64Go(text, b)
		}
		// Spans: runs of ASCII letters and digits and bytes of other runes,
		// between ASCII separators (what ended at from ended a term).
		wh := word | high
		for {
			if cap(dst)-len(dst) < 64+memoTerms { // room for the terms of a block, at most one a byte, and a memo entry's
				dst = slices.Grow(dst, 128)
			}
			m := wh >> (from & 63) << (from & 63)
			starts := m &^ (m << 1)
			// The spans of 16 bytes or fewer that end in the block: ASCII
			// words and their camel-case parts hashed from registers, the
			// others from the memo.
			var s, e int
			for {
				if starts == 0 {
					s = -1
					break
				}
				s = bits.TrailingZeros64(starts)
				starts &= starts - 1
				e = s + bits.TrailingZeros64(^(m >> (s & 63)))
				n := e - s
				if n > 16 || e == 64 || b+s+16 > len(text) {
					break
				}
				if high != 0 && high>>(s&63)&lowBits(n) != 0 {
					ss := b + s
					if t.skip > 0 { // text that misses the memo
						t.skip--
						dst, _ = t.terms(dst, text, ss, b+e)
						continue
					}
					k0 := load64(text, ss) & lowBits(8*min(n, 8))
					k1 := load64(text, ss+8) & lowBits(8*max(n-8, 0))
					me := &mo.slots[mum(k0^hk0, k1^hk1^uint64(n))&(memoSlots-1)]
					if me.k0 != k0 || me.k1 != k1 || int(me.n) != n {
						dst = t.remember(me, dst, text, ss, b+e, k0, k1)
						continue
					}
					t.hits++
					at := len(dst)
					dst = dst[:at+memoTerms]
					for c := range memoTerms {
						dst[at+c] = TermHash{me.h[c], uint32(ss) + uint32(me.off[c])}
					}
					dst = dst[:at+int(me.cnt)]
					continue
				}
				const set = 0x2020202020202020
				if n > 8 {
					x := load64(text, b+s)
					keep := ^uint64(0) >> ((128 - 8*n) & 63)
					y := load64(text, b+s+8) & keep
					h := mum((x|set)^hk0, seed^hk1)
					dst = dst[:len(dst)+1]
					dst[len(dst)-1] = TermHash{mum((y|set&keep)^hk0, h^hk2^uint64(n)), uint32(b + s)}
					if (^x&0x2020202020202000)|(^y&keep&set) != 0 {
						// Camel case, as below, over x and then y.
						upX, upY := ^x&set>>5, ^y&keep&set>>5
						loX, loY := x&(x<<1)&(set<<1)>>6, y&(y<<1)&keep&(set<<1)>>6
						ldX, ldY := (loX|^x&(set<<1)>>6)&(set>>5), loY|^y&keep&(set<<1)>>6
						cX := upX & (ldX<<8 | upX<<8&(loX>>8|loY<<56))
						cY := upY & (ldY<<8 | ldX>>56 | (upY<<8|upX>>56)&(loY>>8))
						if bits.OnesCount64(cX)+bits.OnesCount64(cY) > maxCamelParts {
							continue
						}
						for cX != 0 {
							k := bits.TrailingZeros64(cX) &^ 7 // 8 to 56
							cX &= cX - 1
							lo := (x>>k | y<<(64-k)) | set
							hi := y >> k
							var hp uint64
							if m := n - k/8; m > 8 {
								hp = mum(hi|set&keep>>k^hk0, mum(lo^hk0, seed^hk1)^hk2^uint64(m))
							} else {
								hp = mum(lo&(^uint64(0)>>((64-8*m)&63))^hk0, sk^uint64(m))
							}
							dst = dst[:len(dst)+1]
							dst[len(dst)-1] = TermHash{hp, uint32(b + s + k/8)}
						}
						for cY != 0 {
							k := bits.TrailingZeros64(cY) &^ 7
							cY &= cY - 1
							m := n - 8 - k/8
							dst = dst[:len(dst)+1]
							dst[len(dst)-1] = TermHash{mum((y>>k|set&keep>>k)^hk0, sk^uint64(m)), uint32(b + s + 8 + k/8)}
						}
					}
					continue
				}
				keep := ^uint64(0) >> ((64 - 8*n) & 63)
				x := load64(text, b+s) & keep
				dst = dst[:len(dst)+1]
				dst[len(dst)-1] = TermHash{mum((x|set&keep)^hk0, sk^uint64(n)), uint32(b + s)}
				if ^x&keep&0x2020202020202000 != 0 {
					// Camel case (camelStarts; 8 bytes have at most 4 parts):
					// bit 0 of each byte that is an upper-case letter (no bit
					// 5), a lower-case one (bits 5 and 6) or a digit (no bit 6).
					up := ^x & keep & set >> 5
					lo := x & (x << 1) & keep & (set << 1) >> 6
					dig := ^x & keep & (set << 1) >> 6
					c := up & ((lo|dig)<<8 | up<<8&(lo>>8))
					for c != 0 {
						k := bits.TrailingZeros64(c) &^ 7
						c &= c - 1
						dst = dst[:len(dst)+1]
						dst[len(dst)-1] = TermHash{mum((x>>k|set&keep>>k)^hk0, sk^uint64(n-k/8)), uint32(b + s + k/8)}
					}
				}
			}
			if s < 0 {
				i = b + 64
				break
			}
			// The span at s needs more than that loop does.
			var next int
			if e == 64 && b+64 < len(text) && b+s > i {
				// It may go on past the block, which the next block starts
				// with (classifying is cheaper than its bytes).
				i = b + s
				break
			} else if e < 64 && high>>(s&63)&lowBits(e-s) == 0 {
				dst = t.ascii(dst, text, b+s, b+e)
				next = b + e
			} else {
				dst, next = t.terms(dst, text, b+s, b+e)
			}
			if next >= b+64 {
				i = next
				break
			}
			from = next - b
		}
	}
	return dst
}

// ascii appends the terms of the ASCII word text[i:j].
func (t *termHasher) ascii(dst []TermHash, text string, i, j int) []TermHash {
	dst = append(dst, TermHash{t.hashASCII(text, i, j), uint32(i)})
	if j-i <= maxCamelRun {
		for k := i + 1; k < j; k++ {
			if text[k]&0x20 == 0 { // upper case (letters and digits without bit 5)
				return t.camel(dst, text, i, j)
			}
		}
	}
	return dst
}

// spaces pads a short text to a block.
const spaces = "                                                                "

// hashASCII is hashLowerASCII(t.seed, text, i, j), in one step for 8
// bytes or fewer.
func (t *termHasher) hashASCII(text string, i, j int) uint64 {
	if j-i <= 8 && i+8 <= len(text) {
		return mum((load64(text, i)|0x2020202020202020)&(^uint64(0)>>((64-8*(j-i))&63))^hk0, t.seed^hk2^uint64(j-i))
	}
	return hashLowerASCII(t.seed, text, i, j)
}

// word appends the terms of the word (or symbol, or CJK run) at text[i],
// not a separator, and returns where it ends.
func (t *termHasher) word(dst []TermHash, text string, i int) ([]TermHash, int) {
	if byteClass[text[i]] == bHigh {
		return t.general(dst, text, i)
	}
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
	if j < len(text) && text[j] >= utf8.RuneSelf {
		return t.general(dst, text, i)
	}
	dst = append(dst, TermHash{t.hashASCII(text, i, j), uint32(i)})
	if seen&2 != 0 {
		dst = t.camel(dst, text, i, j)
	}
	return dst, j
}

// decode is utf8.DecodeRuneInString, noting invalid UTF-8. Every byte
// that is not ASCII goes through it (general reads them all), so that
// Hasher.BadUTF8 needs no pass of its own.
func (t *termHasher) decode(s string) (rune, int) {
	r, size := utf8.DecodeRuneInString(s)
	if size == 1 && r == utf8.RuneError {
		t.bad = true
	}
	return r, size
}

// camel appends the camel-case parts of the ASCII word text[i:j].
func (t *termHasher) camel(dst []TermHash, text string, i, j int) []TermHash {
	t.starts = asciiCamelStarts(t.starts[:0], text[i:j])
	for _, s := range t.starts {
		dst = append(dst, TermHash{hashLowerASCII(t.seed, text, i+s, j), uint32(i + s)})
	}
	return dst
}

// general appends the terms of the word, CJK run or symbol at text[i]
// as TermOffsets reads it, or skips a separator, and returns where the
// next one may start.
func (t *termHasher) general(dst []TermHash, text string, i int) ([]TermHash, int) {
	tab, size := runeTab[text[i]], 1
	if text[i] >= utf8.RuneSelf {
		tab, size = t.tabAt(text, i)
	}
	switch tab & 3 {
	case cSep:
		return dst, i + size
	case cSym:
		return append(dst, TermHash{hashText(t.seed, text, i, i+size), uint32(i)}), i + size
	case cCJK:
		return t.cjk(dst, text, i, i+size)
	}
	var lo uint8
	if size > 1 {
		lo = tab
	}
	return t.letters(dst, text, i, i+size, lo, 0)
}

// cjk appends the terms of the CJK run whose first character is
// text[i:j] and returns where the run ends.
func (t *termHasher) cjk(dst []TermHash, text string, i, j int) ([]TermHash, int) {
	sk := t.seed ^ hk2
	for j < len(text) && text[j] >= utf8.RuneSelf { // no ASCII rune is CJK
		tab, size := t.tabAt(text, j)
		if tab&3 != cCJK {
			break
		}
		// hashText, inlined for 8 bytes or fewer (two characters of 3
		// bytes, mostly).
		var h uint64
		if n := j + size - i; n <= 8 && i+8 <= len(text) {
			h = mum(load64(text, i)&(^uint64(0)>>((64-8*n)&63))^hk0, sk^uint64(n))
		} else {
			h = hashText(t.seed, text, i, j+size)
		}
		dst = append(dst, TermHash{h, uint32(i)})
		i, j = j, j+size
	}
	return append(dst, TermHash{hashText(t.seed, text, i, j), uint32(i)}), j
}

// letters appends the terms of the word at text[i] read up to j (lo and
// up as run takes them, for the runes before j) and returns where it
// ends.
func (t *termHasher) letters(dst []TermHash, text string, i, j int, lo, up uint8) ([]TermHash, int) {
	for j < len(text) {
		if c := text[j]; c < utf8.RuneSelf {
			k := byteClass[c]
			if k&bLower == 0 {
				break
			}
			up |= k << 1 // bUpper's bit 2 becomes tabUpper
			j++
			continue
		}
		tab, size := t.tabAt(text, j)
		if tab&3 != cWord {
			break
		}
		lo |= tab
		up |= tab
		j += size
	}
	if n := j - i; n <= 8 && i+8 <= len(text) && lo&tabLower|up&tabUpper == 0 {
		// run's one term, from a register (café, naïve).
		h := mum(lower8(load64(text, i))&(^uint64(0)>>((64-8*n)&63))^hk0, t.seed^hk2^uint64(n))
		return append(dst, TermHash{h, uint32(i)}), j
	}
	return t.run(dst, text, i, j, lo, up), j
}

// run appends the terms of text[i:j], a run of cWord runes: lo holds
// tabLower if a rune that is not ASCII changes under lower-casing, up
// tabUpper if one after the first is upper case.
func (t *termHasher) run(dst []TermHash, text string, i, j int, lo, up uint8) []TermHash {
	seed := t.seed
	run := text[i:j]
	inPlace := lo&tabLower == 0 // lower-casing changes ASCII letters only
	if inPlace {
		dst = append(dst, TermHash{hashLowerRun(seed, text, i, j), uint32(i)})
	} else {
		dst = append(dst, TermHash{t.lowerHash(run), uint32(i)})
	}
	if up&tabUpper != 0 {
		t.starts = camelStarts(t.starts[:0], run)
		for _, s := range t.starts {
			if inPlace {
				dst = append(dst, TermHash{hashLowerRun(seed, text, i+s, j), uint32(i + s)})
				continue
			}
			dst = append(dst, TermHash{t.lowerHash(run[s:]), uint32(i + s)})
		}
	}
	return dst
}

// tabAt returns runeTab's bits for the rune at text[j], not ASCII, and
// its size. With 4 bytes to read it decodes with no branch on the size
// (text mixes sizes at random), from the first byte's entry in seq. A
// byte that is not UTF-8 is noted and read as decode reads it: one byte,
// of class cSym.
func (t *termHasher) tabAt(text string, j int) (uint8, int) {
	if j+4 <= len(text) {
		w := load32(text, j)
		q := &seq[w&0xff]
		// The bits of a 4-byte sequence, less the last 4-n bytes'.
		r := rune(w&q.lead<<18|w>>8&0x3f<<12|w>>16&0x3f<<6|w>>24&0x3f) >> q.shift
		if w&q.cont == q.cont&0x80808080 && r >= q.min && r < tabRunes && (r < 0xd800 || r > 0xdfff) {
			return runeTab[r], int(q.n)
		}
	}
	r, size := t.decode(text[j:])
	if r < tabRunes {
		return runeTab[r], size
	}
	c := class(r)
	if isUpper(r) {
		c |= tabUpper
	}
	if lower(r) != r {
		c |= tabLower
	}
	return c, size
}

// seq describes the UTF-8 sequence each byte starts, for tabAt: its
// length n, the bits of the first byte that the rune keeps (lead), the
// bits that mark the continuation bytes (cont), the shift from 4 bytes'
// bits to n bytes', and the least rune n bytes may encode (min; past
// every rune for a byte that starts none).
var seq [256]struct {
	n, shift   uint8
	lead, cont uint32
	min        rune
}

func init() {
	for c := range 256 {
		q := &seq[c]
		q.min = utf8.MaxRune + 1
		switch {
		case 0xc2 <= c && c < 0xe0:
			q.n, q.min = 2, 0x80
		case 0xe0 <= c && c < 0xf0:
			q.n, q.min = 3, 0x800
		case 0xf0 <= c && c < 0xf5:
			q.n, q.min = 4, 0x10000
		}
		if q.n > 0 {
			q.lead = 0x7f >> q.n
			q.cont = 0xc0c0c000 & (1<<(8*q.n) - 1)
			q.shift = 6 * (4 - q.n)
		}
	}
}

// load32 reads 4 bytes of s at i, little-endian.
func load32(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// lower8 lower-cases the ASCII upper-case letters among the 8 bytes x,
// leaving every other byte as it is.
func lower8(x uint64) uint64 {
	const (
		msb = 0x8080808080808080
		b   = 0x0101010101010101
	)
	y := x &^ msb
	upper := (y + b*(0x80-'A')) &^ (y + b*(0x80-'Z'-1)) &^ x & msb
	return x | upper>>2
}

// hashLowerRun is HashTerm of lowerCut of text[i:j], a run of cWord
// runes none of which but ASCII letters changes under lower-casing: the
// run's bytes with those letters lower-cased, cut at the last rune that
// ends within MaxTerm bytes.
func hashLowerRun(seed uint64, text string, i, j int) uint64 {
	if j-i > MaxTerm {
		j = i + MaxTerm
		for text[j]&0xc0 == 0x80 { // inside a rune
			j--
		}
	}
	h, n := seed, uint64(j-i)
	for j-i > 8 {
		h = mum(lower8(load64(text, i))^hk0, h^hk1)
		i += 8
	}
	var w uint64
	if i+8 <= len(text) {
		w = lower8(load64(text, i)) & (^uint64(0) >> ((64 - 8*(j-i)) & 63))
	} else {
		for k := i; k < j; k++ {
			c := text[k]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			w |= uint64(c) << (8 * (k - i))
		}
	}
	return mum(w^hk0, h^hk2^n)
}

// hashText is hashString(seed, text[i:j]), in one step for 8 bytes or
// fewer.
func hashText(seed uint64, text string, i, j int) uint64 {
	if j-i <= 8 && i+8 <= len(text) {
		return mum(load64(text, i)&(^uint64(0)>>((64-8*(j-i))&63))^hk0, seed^hk2^uint64(j-i))
	}
	return hashString(seed, text[i:j])
}
