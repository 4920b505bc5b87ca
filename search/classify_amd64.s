//go:build amd64 && !purego

#include "textflag.h"

// Byte constants for the range checks: a byte c is a letter if
// (c|0x20)+0x1f, as a signed byte, is below -102 (c|0x20 in 'a'..'z'
// maps to -128..-103), a digit if c+0x50 is below -118 ('0'..'9' maps
// to -128..-119). No other byte, ASCII or not, lands in those ranges.
DATA clsLower<>+0(SB)/1, $0x20
GLOBL clsLower<>(SB), RODATA|NOPTR, $1
DATA clsLetterAdd<>+0(SB)/1, $0x1f
GLOBL clsLetterAdd<>(SB), RODATA|NOPTR, $1
DATA clsLetterLim<>+0(SB)/1, $0x9a // -102
GLOBL clsLetterLim<>(SB), RODATA|NOPTR, $1
DATA clsDigitAdd<>+0(SB)/1, $0x50
GLOBL clsDigitAdd<>(SB), RODATA|NOPTR, $1
DATA clsDigitLim<>+0(SB)/1, $0x8a // -118
GLOBL clsDigitLim<>(SB), RODATA|NOPTR, $1

// func classify64AVX2(p *byte) (word, high uint64)
TEXT ·classify64AVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VPBROADCASTB clsLower<>(SB), Y2
	VPBROADCASTB clsLetterAdd<>(SB), Y3
	VPBROADCASTB clsLetterLim<>(SB), Y4
	VPBROADCASTB clsDigitAdd<>(SB), Y5
	VPBROADCASTB clsDigitLim<>(SB), Y6

	// Letters: Y4 > (c|0x20)+0x1f; digits: Y6 > c+0x50.
	VPOR Y2, Y0, Y7
	VPADDB Y3, Y7, Y7
	VPCMPGTB Y7, Y4, Y7
	VPADDB Y5, Y0, Y8
	VPCMPGTB Y8, Y6, Y8
	VPOR Y8, Y7, Y7

	VPOR Y2, Y1, Y9
	VPADDB Y3, Y9, Y9
	VPCMPGTB Y9, Y4, Y9
	VPADDB Y5, Y1, Y10
	VPCMPGTB Y10, Y6, Y10
	VPOR Y10, Y9, Y9

	VPMOVMSKB Y7, AX
	VPMOVMSKB Y9, BX
	SHLQ $32, BX
	ORQ BX, AX
	MOVQ AX, word+8(FP)

	VPMOVMSKB Y0, AX
	VPMOVMSKB Y1, BX
	SHLQ $32, BX
	ORQ BX, AX
	MOVQ AX, high+16(FP)
	VZEROUPPER
	RET
