//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// ttyWidth returns the columns of the terminal f is, or 0.
func ttyWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
