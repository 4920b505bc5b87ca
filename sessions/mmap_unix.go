//go:build unix

package sessions

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the n bytes of f from off (a multiple of the page size)
// read-only, its pages filled at once (MAP_POPULATE where the system has
// it); ok is false where it cannot.
func mapFile(f *os.File, off, n int64) (b []byte, unmap func(), ok bool) {
	if n <= 0 || int64(int(n)) != n || off < 0 || off%int64(os.Getpagesize()) != 0 {
		return nil, nil, false
	}
	b, err := unix.Mmap(int(f.Fd()), off, int(n), unix.PROT_READ, unix.MAP_SHARED|mapPopulate)
	if err != nil {
		return nil, nil, false
	}
	return b, func() { unix.Munmap(b) }, true
}
