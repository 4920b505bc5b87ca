//go:build !unix

package main

import "os"

// ttyWidth returns 0: the width of a terminal is read on Unix only ($COLUMNS elsewhere).
func ttyWidth(*os.File) int { return 0 }
