package js

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// atPieces are what the strings of TestAppendValidStringAtPaths are made
// of: escapes of every kind, a bad one, a quote, control characters and
// the bytes around them, UTF-8 and plain bytes.
var atPieces = []string{`\n`, `\t`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\u12`, `\q`,
	`"`, `é`, "\xff", "\x01", "\x00", "\x1f", " ", "\x7f", `a`, `abcdefg`, `0123456789abcdef0123456789abcdef`, `\`}

// spacedRef is what AppendSpacedStringAt writes of raw, the bytes
// inside a string AppendValidStringAt decodes: each escape of one
// character two spaces, the rest as AppendValidString decodes it.
func spacedRef(dst, raw []byte) []byte {
	for k := 0; k < len(raw); {
		if raw[k] != '\\' {
			dst = append(dst, raw[k])
			k++
			continue
		}
		if shortEscape[raw[k+1]] != 0 {
			dst = append(dst, ' ', ' ')
			k += 2
			continue
		}
		rest := raw[k:]
		dst, rest, _ = appendEscape(dst, rest)
		k = len(raw) - len(rest)
	}
	return dst
}

// checkSpacedAt checks AppendSpacedStringAt of b at i against its Go
// path, AppendValidStringAt's end and ok (end, ok) and, when ok,
// spacedRef.
func checkSpacedAt(t *testing.T, dst, b []byte, i, end int, ok bool) {
	t.Helper()
	want, wend, wok := appendSpacedStringAtGo(bytes.Clone(dst), b, i)
	for _, d := range [][]byte{bytes.Clone(dst)[:len(dst):len(dst)], bytes.Clone(dst)} {
		got, gend, gok := AppendSpacedStringAt(d, b, i)
		if string(got) != string(want) || gend != wend || gok != wok {
			t.Fatalf("%q at %d, dst %d/%d: spaced %q %d %v, in Go %q %d %v", b, i, len(d), cap(d), got, gend, gok, want, wend, wok)
		}
	}
	if wend != end || wok != ok {
		t.Fatalf("%q at %d: spaced ends %d %v, AppendValidStringAt %d %v", b, i, wend, wok, end, ok)
	}
	if len(want)-len(dst) > wend-i {
		t.Fatalf("%q at %d: spaced wrote %d bytes, end %d", b, i, len(want)-len(dst), wend)
	}
	if ok {
		if ref := spacedRef(bytes.Clone(dst), b[i+1:end-1]); string(want) != string(ref) {
			t.Fatalf("%q at %d: spaced %q, want %q", b, i, want, ref)
		}
	}
}

// checkAt checks AppendValidStringAt of b at i against its Go path
// (8 bytes at a time) given a dst of each size and room, and both
// against ScanString (ok exactly when it reads a string there) and
// AppendValidString when b holds a string there; and
// AppendSpacedStringAt (checkSpacedAt).
func checkAt(t *testing.T, b []byte, i int) {
	t.Helper()
	wend, _, err := ScanString(b, i)
	for _, dst := range [][]byte{nil, make([]byte, 0, 1), make([]byte, 3, 17), make([]byte, 5, 40), make([]byte, 0, 64), make([]byte, 7, 1000)} {
		for k := range dst {
			dst[k] = 'p'
		}
		want, gend, gok := appendValidStringAtGo(bytes.Clone(dst), b, i)
		var got []byte
		var end int
		var ok bool
		for _, d := range [][]byte{bytes.Clone(dst)[:len(dst):len(dst)], dst} { // no room, and dst's
			got, end, ok = AppendValidStringAt(d, b, i)
			if string(got) != string(want) || end != gend || ok != gok {
				t.Fatalf("%q at %d, dst %d/%d: %q %d %v, in Go %q %d %v", b, i, len(d), cap(d), got, end, ok, want, gend, gok)
			}
		}
		if end < i || end > len(b) || len(got)-len(dst) > end-i {
			t.Fatalf("%q at %d: wrote %d bytes, end %d", b, i, len(got)-len(dst), end)
		}
		checkSpacedAt(t, dst, b, i, end, ok)
		if err != nil {
			if ok {
				t.Fatalf("%q at %d: ok ending at %d, ScanString: %v", b, i, end, err)
			}
			continue
		}
		vwant, vok := AppendValidString(bytes.Clone(dst), b[i:wend])
		if !ok || !vok || end != wend || string(got) != string(vwant) {
			t.Fatalf("%q at %d: %q %d %v, AppendValidString %q %v ending at %d", b, i, got, end, ok, vwant, vok, wend)
		}
	}
}

// TestAppendValidStringAtPaths compares AppendValidStringAt with its Go
// path (the two are one on machines without AVX2): a piece at every
// offset of the first two blocks of 32, strings ending at every offset
// near a block's end, lines ending right after the string or in it, and
// random strings of the pieces.
func TestAppendValidStringAtPaths(t *testing.T) {
	if !withAVX2() {
		t.Log("no AVX2: the Go path against itself and AppendValidString")
	}
	for _, p := range atPieces {
		for pre := range 70 {
			for post := range []int{0, 1, 5, 31, 40} {
				s := `"` + strings.Repeat("a", pre) + p + strings.Repeat("b", post) + `"`
				for _, tail := range []string{"", "}", `,"k":"v"}`, strings.Repeat(" ", 40)} {
					line := []byte(`{"t":` + s + tail)
					checkAt(t, line, 5)
					checkAt(t, line[:len(line)-len(tail)-1], 5) // no closing quote
				}
			}
		}
	}
	for n := range 140 { // ending at every offset near a block's end
		for _, tail := range []string{"", "}"} {
			checkAt(t, []byte(`"`+strings.Repeat("x", n)+`"`+tail), 0)
			checkAt(t, []byte(`"`+strings.Repeat(`x\n`, n/3)+strings.Repeat("y", n%3)+`"`+tail), 0)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var sb strings.Builder
		sb.WriteString(`{"text":"`)
		for range r.IntN(40) {
			p := atPieces[r.IntN(len(atPieces))]
			if r.IntN(3) > 0 && (p == `"` || p == "\x01" || p == "\x00" || p == "\x1f" || p == "\xff" || p == `\q` || p == `\`) {
				p = "z"
			}
			sb.WriteString(p)
		}
		sb.WriteString(`"`)
		sb.WriteString(`,"k":"v"}`[:r.IntN(10)])
		checkAt(t, []byte(sb.String()), 8)
	}
}

// TestAppendStringAtEscapes: a backslash before every byte value, at
// offsets around the blocks of the AVX2 kernels, reads as in Go and as
// ScanString accepts or refuses it.
func TestAppendStringAtEscapes(t *testing.T) {
	for c := range 256 {
		for _, pre := range []int{0, 7, 8, 30, 31, 55, 56, 62, 63, 64, 70, 119, 120} {
			line := []byte(`"` + strings.Repeat("a", 8+pre) + `\` + string(rune(0)) + strings.Repeat("b", 80) + `\n"`)
			line[9+pre+1] = byte(c)
			checkAt(t, line, 0)
		}
	}
}

// FuzzAppendStringAtLong: AppendValidStringAt of a long string, data at
// any offset of its blocks of 32 after pad plain bytes, the line ending
// at most tail bytes after it, decodes as its Go path does, and as
// AppendValidString when the line holds a string there.
func FuzzAppendStringAtLong(f *testing.F) {
	for _, s := range []string{`a\nb"`, `\ud83d\ude00"`, `\ud83d"`, `\u00e9\t\\\/"`, "\xff\"", `\q"`, "a\x01\"", `\"`, `x\"y"`,
		strings.Repeat(`\\`, 40) + `"`, strings.Repeat(`0123456789abcde\n`, 9) + `"`, `abcdefg\`, strings.Repeat("é", 40)} {
		f.Add([]byte(s), uint8(0), uint8(0))
		f.Add([]byte(s), uint8(31), uint8(9))
	}
	f.Fuzz(func(t *testing.T, data []byte, pad, tail uint8) {
		line := append([]byte(`{"text":"`), bytes.Repeat([]byte{'a'}, int(pad%96))...)
		line = append(append(line, data...), `,"k":"tail"}`[:int(tail)%13]...)
		checkAt(t, line, 8)
	})
}

// TestScanStringPaths compares ScanString's blocks with AVX2 and in Go,
// and with the reading one special byte at a time: each piece (escapes,
// bad escapes, quotes, control characters, bytes above 0x7f) at every
// offset of the first blocks, strings ending at every offset near a
// block's end, and random strings of the pieces.
func TestScanStringPaths(t *testing.T) {
	pieces := append([]string{"\x00", "\x1f", " ", "\x7f", "\x80", "\xe9", `\\\"`, `\\\\"`}, atPieces...)
	check := func(b []byte) {
		t.Helper()
		end, esc, err := ScanString(b, 0)
		restore := goPath()
		gend, gesc, gerr := ScanString(b, 0)
		restore()
		wend, wesc, werr := scanFrom(b, 1, 0, false, false)
		for _, r := range []struct {
			end  int
			esc  bool
			err  error
			name string
		}{{end, esc, err, "AVX2"}, {gend, gesc, gerr, "Go"}} {
			if r.end != wend || r.esc != wesc || (r.err == nil) != (werr == nil) || (r.err != nil && r.err.Error() != werr.Error()) {
				t.Fatalf("ScanString(%q) (%s) = %d, %v, %v; one byte at a time: %d, %v, %v", b, r.name, r.end, r.esc, r.err, wend, wesc, werr)
			}
		}
	}
	for _, p := range pieces {
		for pre := longString; pre < longString+140; pre++ {
			for _, post := range []string{`"`, `b"`, strings.Repeat("b", 70) + `"`, ""} {
				s := `"` + strings.Repeat("a", pre) + p + post
				check([]byte(s))
				check([]byte(s + strings.Repeat(" ", 64)))
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var sb strings.Builder
		sb.WriteString(`"` + strings.Repeat("a", longString))
		for range r.IntN(60) {
			p := pieces[r.IntN(len(pieces))]
			if r.IntN(4) > 0 && (p == `"` || p == "\x01" || p == "\x00" || p == "\x1f" || p == `\q` || p == `\` || p == `\u12`) {
				p = "z"
			}
			sb.WriteString(p)
		}
		sb.WriteString(`"` + `,"k":"v"}`[:r.IntN(10)])
		check([]byte(sb.String()))
	}
}
