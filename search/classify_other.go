//go:build !amd64 || purego

package search

// useAVX2 is false where there is no AVX2 kernel (classify_amd64.go).
var useAVX2 = false

// classify64AVX2 is not called where there is no AVX2 kernel.
func classify64AVX2(p *byte) (word, high uint64) {
	panic("search: no AVX2 kernel")
}
