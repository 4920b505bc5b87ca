//go:build amd64 && !purego

package search

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX2 selects the AVX2 kernel (classify_amd64.s) for classify64;
// tests clear it to run the Go code (classify64Go) on the same inputs.
var useAVX2 = cpu.X86.HasAVX2

// classify64AVX2 is classify64Go for the 64 bytes at p, which must all
// be readable.
//
//go:noescape
func classify64AVX2(p *byte) (word, high uint64)

// classify64 returns the masks of text[i:i+64]: bit k of word for each
// ASCII letter or digit text[i+k], of high for each byte >= 0x80.
func classify64(text string, i int) (word, high uint64) {
	if useAVX2 {
		block := text[i : i+64] // the 64 bytes the kernel reads
		return classify64AVX2(unsafe.StringData(block))
	}
	return classify64Go(text, i)
}
