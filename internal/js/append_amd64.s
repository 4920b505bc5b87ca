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
