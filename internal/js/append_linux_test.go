//go:build linux

package js

import (
	"strings"
	"syscall"
	"testing"
)

// TestAppendValidStringAtGuard (and AppendSpacedStringAt) puts lines at the end of a page the next
// of which may not be read or written, and decodes them into a dst whose
// room ends at such a page too: a read past the line or a write past
// dst's capacity faults.
func TestAppendValidStringAtGuard(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 4*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[page:2*page], syscall.PROT_NONE); err != nil {
		t.Skip(err)
	}
	if err := syscall.Mprotect(mem[3*page:], syscall.PROT_NONE); err != nil {
		t.Skip(err)
	}
	src, room := mem[:page], mem[2*page:3*page]
	for _, p := range atPieces {
		for n := range 100 {
			for _, end := range []string{`"`, ``, `\`} {
				s := `"` + strings.Repeat("a", n) + p + strings.Repeat("b", n%7) + end
				line := src[page-len(s):]
				copy(line, s)
				for _, c := range []int{0, 1, 31, 32, 33, 64, len(s), len(s) + 40} {
					if c > page {
						continue
					}
					dst := room[page-c : page-c : page] // room for c bytes
					got, e, ok := AppendValidStringAt(dst, line, 0)
					want, we, wok := appendValidStringAtGo(nil, line, 0)
					if string(got) != string(want) || e != we || ok != wok {
						t.Fatalf("%q, room %d: %q %d %v, in Go %q %d %v", line, c, got, e, ok, want, we, wok)
					}
					got, e, ok = AppendSpacedStringAt(dst, line, 0)
					want, we, wok = appendSpacedStringAtGo(nil, line, 0)
					if string(got) != string(want) || e != we || ok != wok {
						t.Fatalf("%q, room %d: spaced %q %d %v, in Go %q %d %v", line, c, got, e, ok, want, we, wok)
					}
				}
			}
		}
	}
}
