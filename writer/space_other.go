//go:build !linux

package writer

import (
	"errors"
	"os"
)

// allocate is not available here: reserve checks the free space instead.
func allocate(f *os.File, off, n int64) error { return errors.ErrUnsupported }

// freeSpace is not known here.
func freeSpace(f *os.File) (int64, bool) { return 0, false }
