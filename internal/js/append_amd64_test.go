//go:build amd64 && !purego

package js

// appendValidStringAtGo is AppendValidStringAt without AVX2: 8 bytes at
// a time, in Go.
func appendValidStringAtGo(dst, b []byte, i int) ([]byte, int, bool) {
	defer func(on bool) { useAVX2 = on }(useAVX2)
	useAVX2 = false
	return AppendValidStringAt(dst, b, i)
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
