//go:build amd64 && !purego

package search

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernel (classify_amd64.s) over classify64Go;
// tests clear it to run the Go code on the same inputs.
var useAVX2 = cpu.X86.HasAVX2

// classify64AVX2 is classify64Go for the 64 bytes at p, which must all
// be readable.
//
//go:noescape
func classify64AVX2(p *byte) (word, high uint64)
