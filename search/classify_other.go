//go:build !amd64 || purego

package search

// useAVX2 is false where there is no AVX2 kernel (classify_amd64.go).
var useAVX2 = false

// classify64 returns the masks of text[i:i+64]: bit k of word for each
// ASCII letter or digit text[i+k], of high for each byte >= 0x80.
func classify64(text string, i int) (word, high uint64) {
	return classify64Go(text, i)
}
