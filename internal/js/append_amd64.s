//go:build amd64 && !purego

#include "textflag.h"

// func decodeAVX2(dst, src *byte, n int, esc *[256]byte) (read, written int)
//
// Copies src to dst 32 bytes at a time while a block of 32 of the n bytes
// is left to read, up to the first '"', '\\' or control character (below
// 0x20) of a block; decodes there the escapes esc has a byte for and goes
// on; stops at a quote, at a control character, at an escape esc lacks
// and when fewer than 32 bytes are left. Each block is
// stored whole, what follows its first quote or backslash included: dst
// must have room for n bytes (it gains no more than src gives). The bytes
// 512 ahead are prefetched: the build reads lines from mapped files whose
// text no one has read before, out of memory rather than cache.
TEXT ·decodeAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), R10
	MOVQ esc+24(FP), R9
	XORQ AX, AX        // read
	XORQ BX, BX        // written
	LEAQ -32(R10), CX  // the last offset a block may be read at
	CMPQ CX, $0
	JLT  none
	MOVL $0x22, DX     // '"'
	MOVQ DX, X1
	VPBROADCASTB X1, Y1
	MOVL $0x5c, DX     // '\\'
	MOVQ DX, X2
	VPBROADCASTB X2, Y2
	MOVL $0x1f, DX
	MOVQ DX, X5
	VPBROADCASTB X5, Y5

loop:
	PREFETCHT0 512(SI)(AX*1)
	VMOVDQU   (SI)(AX*1), Y0
	VMOVDQU   Y0, (DI)(BX*1)
	VPCMPEQB  Y0, Y1, Y3
	VPCMPEQB  Y0, Y2, Y4
	VPOR      Y3, Y4, Y3
	VPMINUB   Y0, Y5, Y4     // x < 0x20 where min(x, 0x1f) == x
	VPCMPEQB  Y0, Y4, Y4
	VPOR      Y3, Y4, Y3
	VPMOVMSKB Y3, DX
	TESTL     DX, DX
	JNZ       found
	ADDQ      $32, AX
	ADDQ      $32, BX
	CMPQ      AX, CX
	JLE       loop
	JMP       done

found:
	BSFL    DX, DX
	ADDQ    DX, AX
	ADDQ    DX, BX
	MOVBLZX (SI)(AX*1), DX
	CMPL    DX, $0x5c
	JNE     done           // the closing quote, or a control character
	LEAQ    1(AX), R8
	CMPQ    R8, R10
	JGE     done           // the escaped byte is not among the n
	MOVBLZX 1(SI)(AX*1), DX
	MOVBLZX (R9)(DX*1), DX
	TESTL   DX, DX
	JZ      done           // \u, or no escape of JSON's
	MOVB    DX, (DI)(BX*1)
	ADDQ    $2, AX
	INCQ    BX
	CMPQ    AX, CX
	JLE     loop

done:
	VZEROUPPER

none:
	MOVQ AX, read+32(FP)
	MOVQ BX, written+40(FP)
	RET

// func masks64AVX2(p *byte) (q, bs, ctl uint64)
//
// Returns the masks of the quotes, the backslashes and the control
// characters (below 0x20) of the 64 bytes at p, byte k's in bit k.
TEXT ·masks64AVX2(SB), NOSPLIT, $0-32
	MOVQ         p+0(FP), SI
	VMOVDQU      (SI), Y0
	VMOVDQU      32(SI), Y1
	MOVL         $0x22, AX // '"'
	MOVQ         AX, X2
	VPBROADCASTB X2, Y2
	MOVL         $0x5c, AX // '\\'
	MOVQ         AX, X3
	VPBROADCASTB X3, Y3
	MOVL         $0x1f, AX
	MOVQ         AX, X4
	VPBROADCASTB X4, Y4

	VPCMPEQB  Y0, Y2, Y5
	VPCMPEQB  Y1, Y2, Y6
	VPMOVMSKB Y5, AX
	VPMOVMSKB Y6, DX
	SHLQ      $32, DX
	ORQ       DX, AX
	MOVQ      AX, q+8(FP)

	VPCMPEQB  Y0, Y3, Y5
	VPCMPEQB  Y1, Y3, Y6
	VPMOVMSKB Y5, AX
	VPMOVMSKB Y6, DX
	SHLQ      $32, DX
	ORQ       DX, AX
	MOVQ      AX, bs+16(FP)

	// x < 0x20 where min(x, 0x1f) == x.
	VPMINUB   Y0, Y4, Y5
	VPMINUB   Y1, Y4, Y6
	VPCMPEQB  Y0, Y5, Y5
	VPCMPEQB  Y1, Y6, Y6
	VPMOVMSKB Y5, AX
	VPMOVMSKB Y6, DX
	SHLQ      $32, DX
	ORQ       DX, AX
	MOVQ      AX, ctl+24(FP)
	VZEROUPPER
	RET

// Byte k of the first 32 bytes takes bit k%8 of byte k/8 of a mask
// (spreadLo), of the next 32 bit k%8 of byte 4+k/8 (spreadHi): VPSHUFB
// picks the mask's byte in each 128-bit lane, spreadBits its bit.
DATA spreadLo<>+0(SB)/8, $0x0000000000000000
DATA spreadLo<>+8(SB)/8, $0x0101010101010101
DATA spreadLo<>+16(SB)/8, $0x0202020202020202
DATA spreadLo<>+24(SB)/8, $0x0303030303030303
GLOBL spreadLo<>(SB), RODATA|NOPTR, $32

DATA spreadHi<>+0(SB)/8, $0x0404040404040404
DATA spreadHi<>+8(SB)/8, $0x0505050505050505
DATA spreadHi<>+16(SB)/8, $0x0606060606060606
DATA spreadHi<>+24(SB)/8, $0x0707070707070707
GLOBL spreadHi<>(SB), RODATA|NOPTR, $32

DATA spreadBits<>+0(SB)/8, $0x8040201008040201
DATA spreadBits<>+8(SB)/8, $0x8040201008040201
DATA spreadBits<>+16(SB)/8, $0x8040201008040201
DATA spreadBits<>+24(SB)/8, $0x8040201008040201
GLOBL spreadBits<>(SB), RODATA|NOPTR, $32

// The bytes that make an escape of one character after a backslash, by
// nibble: escHi has a bit for each high nibble among them ('"' and '/'
// 0x2_, '\\' 0x5_, 'b' 'f' 'n' 0x6_, 'r' 't' 0x7_), escLo at each low
// nibble the bits of the high ones that make such a byte with it. Each
// 16 bytes twice, for VPSHUFB's two lanes.
DATA escLo<>+0(SB)/8, $0x00040008000d0000
DATA escLo<>+8(SB)/8, $0x0104000200000000
DATA escLo<>+16(SB)/8, $0x00040008000d0000
DATA escLo<>+24(SB)/8, $0x0104000200000000
GLOBL escLo<>(SB), RODATA|NOPTR, $32

DATA escHi<>+0(SB)/8, $0x0804020000010000
DATA escHi<>+8(SB)/8, $0x0000000000000000
DATA escHi<>+16(SB)/8, $0x0804020000010000
DATA escHi<>+24(SB)/8, $0x0000000000000000
GLOBL escHi<>(SB), RODATA|NOPTR, $32

// func spacedAVX2(dst, src *byte, n int) (read int)
//
// Copies the bytes of a string at src to dst 64 at a time while 64 of the
// n are left to read, each escape of one character (a backslash and one
// of '"', '\\', '/', 'b', 'f', 'n', 'r', 't') as two spaces, so that dst
// gains what src gives. It stops at the closing quote (read is its
// offset), before a block that holds, inside the string, a control
// character or another escape (read is the block's offset, or one less
// when the backslash before it escapes its first byte), and when fewer
// than 64 bytes are left (one less when the last byte read is a
// backslash that escapes the next). Escapes are found as scanBlocks
// finds them (escapedBits), across blocks.
TEXT ·spacedAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX           // read (and written)
	XORQ R8, R8           // the last byte read escapes the next
	SUBQ $64, CX          // the last offset a block may be read at
	JLT  none

	MOVL         $0x22, DX // '"'
	MOVQ         DX, X2
	VPBROADCASTB X2, Y2
	MOVL         $0x5c, DX // '\\'
	MOVQ         DX, X3
	VPBROADCASTB X3, Y3
	MOVL         $0x1f, DX
	MOVQ         DX, X4
	VPBROADCASTB X4, Y4
	VMOVDQU      escLo<>(SB), Y5
	VMOVDQU      escHi<>(SB), Y6
	MOVL         $0x0f, DX
	MOVQ         DX, X7
	VPBROADCASTB X7, Y7
	VPXOR        Y8, Y8, Y8
	VMOVDQU      spreadBits<>(SB), Y14
	MOVL         $0x20, DX // ' '
	MOVQ         DX, X15
	VPBROADCASTB X15, Y15

loop:
	VMOVDQU (SI)(AX*1), Y0
	VMOVDQU 32(SI)(AX*1), Y1

	// Quotes (R9).
	VPCMPEQB  Y0, Y2, Y11
	VPCMPEQB  Y1, Y2, Y12
	VPMOVMSKB Y11, R9
	VPMOVMSKB Y12, DX
	SHLQ      $32, DX
	ORQ       DX, R9

	// Backslashes (R10).
	VPCMPEQB  Y0, Y3, Y13
	VPMOVMSKB Y13, R10
	VPCMPEQB  Y1, Y3, Y13
	VPMOVMSKB Y13, DX
	SHLQ      $32, DX
	ORQ       DX, R10

	// Control characters (R12): x < 0x20 where min(x, 0x1f) == x.
	VPMINUB   Y0, Y4, Y13
	VPCMPEQB  Y0, Y13, Y13
	VPMOVMSKB Y13, R12
	VPMINUB   Y1, Y4, Y13
	VPCMPEQB  Y1, Y13, Y13
	VPMOVMSKB Y13, DX
	SHLQ      $32, DX
	ORQ       DX, R12

	// The bytes that make an escape of one character after a backslash
	// (R11): those whose low and high nibbles' bits in escLo and escHi
	// meet.
	VPAND     Y7, Y0, Y9
	VPSHUFB   Y9, Y5, Y9
	VPSRLW    $4, Y0, Y10
	VPAND     Y7, Y10, Y10
	VPSHUFB   Y10, Y6, Y10
	VPAND     Y9, Y10, Y9
	VPCMPEQB  Y8, Y9, Y9
	VPMOVMSKB Y9, R11
	VPAND     Y7, Y1, Y9
	VPSHUFB   Y9, Y5, Y9
	VPSRLW    $4, Y1, Y10
	VPAND     Y7, Y10, Y10
	VPSHUFB   Y10, Y6, Y10
	VPAND     Y9, Y10, Y9
	VPCMPEQB  Y8, Y9, Y9
	VPMOVMSKB Y9, DX
	SHLQ      $32, DX
	ORQ       DX, R11
	NOTQ      R11

	// The escaped bytes (DX), as escapedBits: bs' = bs &^ carry (BX),
	// follows = bs'<<1 | carry (R13), odd starts = bs' &^ even &^
	// follows, even runs = odd starts + bs' (its carry the next block's),
	// escaped = (even ^ even runs<<1) & follows. Bit 0 of it is the
	// carry it was given.
	MOVQ R8, DX
	NOTQ DX
	MOVQ R10, BX
	ANDQ DX, BX
	MOVQ BX, R13
	SHLQ $1, R13
	ORQ  R8, R13
	MOVQ $0xaaaaaaaaaaaaaaaa, DX
	ANDQ BX, DX
	MOVQ R13, R8
	NOTQ R8
	ANDQ R8, DX
	XORQ R8, R8
	ADDQ BX, DX
	ADCQ $0, R8
	SHLQ $1, DX
	MOVQ $0x5555555555555555, BX
	XORQ BX, DX
	ANDQ R13, DX

	// The first quote not escaped (BX) ends the string: the bytes in it
	// are those below (R13: all when there is none).
	MOVQ DX, BX
	NOTQ BX
	ANDQ R9, BX
	MOVQ BX, R13
	SUBQ $1, R13
	MOVQ BX, R9
	NOTQ R9
	ANDQ R9, R13

	// A control character or an escape of another kind in the string:
	// stop before the block.
	MOVQ  R11, R9
	NOTQ  R9
	ANDQ  DX, R9
	ORQ   R12, R9
	TESTQ R13, R9
	JNZ   stop

	// Spaces for the backslashes and the bytes they escape.
	ORQ  DX, R10
	ANDQ R13, R10
	JZ   store
	MOVQ         R10, X11
	VPBROADCASTQ X11, Y11
	VPSHUFB      spreadLo<>(SB), Y11, Y12
	VPSHUFB      spreadHi<>(SB), Y11, Y13
	VPAND        Y14, Y12, Y12
	VPAND        Y14, Y13, Y13
	VPCMPEQB     Y14, Y12, Y12
	VPCMPEQB     Y14, Y13, Y13
	VPBLENDVB    Y12, Y15, Y0, Y0
	VPBLENDVB    Y13, Y15, Y1, Y1

store:
	VMOVDQU Y0, (DI)(AX*1)
	VMOVDQU Y1, 32(DI)(AX*1)
	TESTQ   BX, BX
	JNZ     closed
	ADDQ    $64, AX
	CMPQ    AX, CX
	JLE     loop
	SUBQ    R8, AX        // an escape begun in the last byte is read again
	JMP     done

closed:
	BSFQ BX, BX
	ADDQ BX, AX
	JMP  done

stop:
	ANDQ $1, DX           // the backslash before escapes the first byte
	SUBQ DX, AX

done:
	VZEROUPPER

none:
	MOVQ AX, read+24(FP)
	RET
