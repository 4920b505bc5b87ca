//go:build !amd64 || purego

package js

// appendValidStringAtGo is AppendValidStringAt, which has no other path
// here.
func appendValidStringAtGo(dst, b []byte, i int) ([]byte, int, bool) {
	return AppendValidStringAt(dst, b, i)
}

// appendSpacedStringAtGo is AppendSpacedStringAt, which has no other
// path here.
func appendSpacedStringAtGo(dst, b []byte, i int) ([]byte, int, bool) {
	return AppendSpacedStringAt(dst, b, i)
}

func withAVX2() bool { return false }

// goPath does nothing: there is no other path here.
func goPath() (restore func()) { return func() {} }
