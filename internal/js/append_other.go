//go:build !amd64 || purego

package js

// useAVX2 is false: AppendValidStringAt decodes and scanBlocks
// classifies 8 bytes at a time, in Go.
const useAVX2 = false

// decodeAVX2 is never called without AVX2 (see append_amd64.go).
func decodeAVX2(dst, src *byte, n int, esc *[256]byte) (read, written int) {
	panic("js: decodeAVX2 without amd64")
}

// masks64AVX2 is never called without AVX2 (see append_amd64.go).
func masks64AVX2(p *byte) (q, bs, ctl uint64) { panic("js: masks64AVX2 without amd64") }

// spacedAVX2 is never called without AVX2 (see append_amd64.go).
func spacedAVX2(dst, src *byte, n int) (read int) { panic("js: spacedAVX2 without amd64") }
