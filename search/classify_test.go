package search

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestClassify64: the AVX2 kernel, where there is one, gives
// classify64Go's masks for every byte value at every place of a block,
// among bytes of every class, and for random blocks.
func TestClassify64(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 kernel")
	}
	check := func(buf []byte, i int) {
		t.Helper()
		text := string(buf)
		w, h := classify64AVX2(unsafe.StringData(text[i : i+64]))
		gw, gh := classify64Go(text, i)
		if w != gw || h != gh {
			t.Fatalf("%q at %d: masks %016x %016x, classify64Go %016x %016x", text[i:i+64], i, w, h, gw, gh)
		}
	}
	buf := make([]byte, 64+7)
	for _, fill := range []byte{' ', 'a', 'Z', '0', 0x80, 0xff, 0} {
		for k := range buf {
			buf[k] = fill
		}
		for c := range 256 {
			for p := range 64 {
				for i := range 8 { // unaligned too
					buf[i+p] = byte(c)
					check(buf, i)
					buf[i+p] = fill
				}
			}
		}
	}
	// Every byte value once in each block, rotated.
	for r := range 256 {
		for k := range 64 {
			buf[k] = byte(r + 4*k)
		}
		check(buf, 0)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		for k := range buf {
			buf[k] = byte(rng.Uint32())
		}
		check(buf, rng.IntN(8))
	}
}
