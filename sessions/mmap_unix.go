//go:build unix

package sessions

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the first n bytes of f read-only, its pages filled at once
// (MAP_POPULATE where the system has it); ok is false where it cannot.
func mapFile(f *os.File, n int64) (b []byte, unmap func(), ok bool) {
	if n <= 0 || int64(int(n)) != n {
		return nil, nil, false
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(n), unix.PROT_READ, unix.MAP_SHARED|mapPopulate)
	if err != nil {
		return nil, nil, false
	}
	return b, func() { unix.Munmap(b) }, true
}
