//go:build amd64 && !purego

package js

import "golang.org/x/sys/cpu"

// useAVX2 is whether AppendValidStringAt decodes with decodeAVX2, 32
// bytes at a time, and scanBlocks classifies its blocks with
// masks64AVX2; tests clear it to check the Go paths.
var useAVX2 = cpu.X86.HasAVX2

// decodeAVX2 copies src to dst 32 bytes at a time up to the first quote,
// backslash or control character, decodes there the escapes esc has a
// byte for (as shortEscape) and goes on, while a block of 32 of the n
// bytes of src is left to read. It stops at a quote, at a control
// character, at any other escape (\u) and when
// fewer than 32 bytes are left, and returns how many bytes it read from
// src and wrote to dst. Blocks of 32 are stored whole: src must hold n
// bytes and dst must have room for n.
//
//go:noescape
func decodeAVX2(dst, src *byte, n int, esc *[256]byte) (read, written int)

// masks64AVX2 returns the masks of the quotes, the backslashes and the
// control characters of the 64 bytes at p, byte k's in bit k (for
// scanBlocks).
//
//go:noescape
func masks64AVX2(p *byte) (q, bs, ctl uint64)

// spacedAVX2 copies the bytes of a string at src to dst 64 at a time
// while 64 of the n are left, each escape of one character as two
// spaces (dst gains what src gives); it stops at the closing quote, before
// a block that holds a control character or another escape in the
// string, and when fewer than 64 are left, never inside an escape, and
// returns how many bytes it read. src must hold n bytes and dst have
// room for n.
//
//go:noescape
func spacedAVX2(dst, src *byte, n int) (read int)
