//go:build amd64 && !purego

package js

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// appendValidStringAtGo is AppendValidStringAt without AVX2: 8 bytes at
// a time, in Go.
func appendValidStringAtGo(dst, b []byte, i int) ([]byte, int, bool) {
	defer func(on bool) { useAVX2 = on }(useAVX2)
	useAVX2 = false
	return AppendValidStringAt(dst, b, i)
}

// appendSpacedStringAtGo is AppendSpacedStringAt without AVX2.
func appendSpacedStringAtGo(dst, b []byte, i int) ([]byte, int, bool) {
	defer func(on bool) { useAVX2 = on }(useAVX2)
	useAVX2 = false
	return AppendSpacedStringAt(dst, b, i)
}

// withAVX2 reports whether AppendValidStringAt uses AVX2 on this machine
// (tests of it skip when it does not).
func withAVX2() bool { return useAVX2 }

// goPath makes AppendValidStringAt and scanBlocks take their Go path
// until the returned func is called.
func goPath() (restore func()) {
	on := useAVX2
	useAVX2 = false
	return func() { useAVX2 = on }
}

// TestSpacedAVX2 checks that spacedAVX2 reads on through escapes of one
// character, runs of backslashes and blocks' ends (its callers would
// give the same text if it stopped at once): it stops at the closing
// quote, or within 64 bytes of the end, or at the block of a \u or a
// control character, and what it wrote is spacedRef's.
func TestSpacedAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	pieces := []string{`\n`, `\t`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\\\\`, `\\\"`, `a`, `bc`, `é`, ` `, `0123456789abcdef`}
	r := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		var sb strings.Builder
		for sb.Len() < 64+r.IntN(300) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		inner := sb.String()
		var stop int // where it must stop: -1 anywhere past len-64
		switch r.IntN(3) {
		case 0: // closed
			stop = len(inner)
			inner += `"` + strings.Repeat("x", 70)
		case 1: // not closed within the bytes given
			stop = -1
		case 2: // a \u or a control character somewhere
			at := r.IntN(len(inner))
			for at > 0 && inner[at-1] == '\\' {
				at--
			}
			k := r.IntN(2)
			inner = inner[:at] + []string{`\u00e9`, "\x01"}[k] + inner[at:] + `"` + strings.Repeat("y", 70)
			stop = (at + 1 - k) &^ 63 // the block (of 64 from the start) that holds the u, or the control character
		}
		src := []byte(inner)
		dst := make([]byte, len(src))
		read := spacedAVX2(&dst[0], &src[0], len(src))
		switch {
		case stop >= 0 && read != stop && !(read == stop-1 && stop > 0 && src[stop-1] == '\\'):
			t.Fatalf("%q: read %d, want %d", src, read, stop)
		case stop < 0 && read < len(src)-64-1:
			t.Fatalf("%q: read %d of %d", src, read, len(src))
		}
		if want := spacedRef(nil, src[:read]); !bytes.Equal(dst[:read], want) {
			t.Fatalf("%q: wrote %q, want %q", src[:read], dst[:read], want)
		}
	}
}
