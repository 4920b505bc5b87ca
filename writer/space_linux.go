package writer

import (
	"os"

	"golang.org/x/sys/unix"
)

// allocate allocates n bytes at off in f, keeping its size.
func allocate(f *os.File, off, n int64) error {
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, off, n)
}

// freeSpace returns the bytes free to f's user on f's file system.
func freeSpace(f *os.File) (int64, bool) {
	var fs unix.Statfs_t
	if unix.Fstatfs(int(f.Fd()), &fs) != nil {
		return 0, false
	}
	return int64(fs.Bavail) * int64(fs.Bsize), true
}
