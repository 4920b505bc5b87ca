package js

import "unicode/utf8"

// ToValidUTF8 decodes b as the WHATWG "utf-8" decoder does (Node's
// readFileSync(…, "utf8") and TextDecoder): every maximal subpart of an
// invalid sequence becomes one U+FFFD. bytes.ToValidUTF8 makes one of a
// whole run, Go's decoder one per byte; pi sees neither. b is returned as
// it is when it is valid.
func ToValidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			out = append(out, c)
			i++
			continue
		}
		need, lo, hi := 0, byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c == 0xE0:
			need, lo = 2, 0xA0
		case c == 0xED:
			need, hi = 2, 0x9F
		case c >= 0xE1 && c <= 0xEF:
			need = 2
		case c == 0xF0:
			need, lo = 3, 0x90
		case c == 0xF4:
			need, hi = 3, 0x8F
		case c >= 0xF1 && c <= 0xF3:
			need = 3
		default:
			out = append(out, "\uFFFD"...)
			i++
			continue
		}
		j := i + 1
		for seen := 0; seen < need; seen++ {
			if j >= len(b) || b[j] < lo || b[j] > hi {
				break
			}
			lo, hi = 0x80, 0xBF
			j++
		}
		if j-i == need+1 {
			out = append(out, b[i:j]...)
		} else {
			out = append(out, "\uFFFD"...) // the maximal subpart b[i:j]; b[j] starts afresh
		}
		i = j
	}
	return out
}
