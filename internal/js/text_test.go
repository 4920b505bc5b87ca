package js

import (
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

func TestJSConversions(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {123, "123"}, {1.5, "1.5"}, {-2.25, "-2.25"},
		{1e21, "1e+21"}, {1.5e-7, "1.5e-7"}, {0.000001, "0.000001"}, {1e20, "100000000000000000000"},
		{math.NaN(), "NaN"}, {math.Inf(-1), "-Infinity"}, {point1 + 0.2, "0.30000000000000004"},
	} {
		if got := FormatNumber(tt.f); got != tt.want {
			t.Errorf("FormatNumber(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
	for _, tt := range []struct {
		s    string
		want float64
	}{
		{"", 0}, {"  12 ", 12}, {"0x10", 16}, {"0b11", 3}, {"1e3", 1000}, {".5", 0.5}, {"5.", 5},
		{"+5", 5}, {"-Infinity", math.Inf(-1)}, {"\u00a07\n", 7},
	} {
		if got := NumberOf(tt.s); got != tt.want {
			t.Errorf("Number(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
	for _, s := range []string{"abc", "1_000", "inf", "NaN", "-0x10", "1e", "e5", "0x", "1.2.3", "--1"} {
		if got := NumberOf(s); !math.IsNaN(got) {
			t.Errorf("Number(%q) = %v, want NaN", s, got)
		}
	}
	for _, tt := range []struct{ x, want float64 }{{2.5, 3}, {-2.5, -2}, {0.49999999999999994, 0}, {48.5, 49}, {-0.4, 0}} {
		if got := Round(tt.x); got != tt.want {
			t.Errorf("Math.round(%v) = %v, want %v", tt.x, got, tt.want)
		}
	}
	for _, tt := range []struct{ raw, str, join string }{
		{``, "undefined", ""}, {`null`, "null", ""}, {`"a\nb"`, "a\nb", "a\nb"}, {`1.50`, "1.5", "1.5"},
		{`{"a":1}`, "[object Object]", "[object Object]"}, {`[1,[2,[]],null,"x",{}]`, "1,2,,,x,[object Object]", "1,2,,,x,[object Object]"},
		{`true`, "true", "true"}, {`false`, "false", "false"},
	} {
		if got := ToString([]byte(tt.raw)); got != tt.str {
			t.Errorf("String(%s) = %q, want %q", tt.raw, got, tt.str)
		}
		if got := Join([]byte(tt.raw)); got != tt.join {
			t.Errorf("join(%s) = %q, want %q", tt.raw, got, tt.join)
		}
	}
	for _, tt := range []struct{ raw, want string }{
		{`{ "a" : [ 1.0 , 2e2 ] , "b":"\u00e9\/\u0001\"" }`, `{"a":[1,200],"b":"é/\u0001\""}`},
		{`{"t":"tab\there","n":null,"big":1e400}`, `{"t":"tab\there","n":null,"big":null}`},
	} {
		if got := Stringify([]byte(tt.raw)); got != tt.want {
			t.Errorf("JSON.stringify(%s) = %s, want %s", tt.raw, got, tt.want)
		}
	}
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 2, "ab"}, {"abc", 5, "abc"}, {"a😀b", 2, "a\uFFFD"}, {"a😀b", 3, "a😀"}, {"é", 1, "é"},
	} {
		if got := UTF16Prefix(tt.s, tt.n); got != tt.want {
			t.Errorf("%q.slice(0, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
	if n := UTF16Len("a😀é"); n != 4 {
		t.Errorf("utf16Len = %d", n)
	}
}

func TestJSONPrefix(t *testing.T) {
	long := strings.Repeat("é", 700) // 2 bytes a rune: the 3n-byte cut lands mid-rune
	for _, tt := range []struct {
		raw  string
		n    int
		want string
	}{
		{`"abc"`, 200, "abc"},
		{`"abc"`, 2, "abc"}, // short strings are taken whole
		{`"abc"`, 0, ""},
		{`"a\nb\t\"c\\\/\u00e9\ud83d\ude00"`, 200, "a\nb\t\"c\\/é😀"},
		{`"\ud83d"`, 200, "\uFFFD"},
		{`"\ude00x"`, 200, "\uFFFDx"},
		{`"\ud83dx"`, 200, "\uFFFDx"},
		{`"x\u12"`, 200, "x"},
		{`"abc`, 200, "abc"},
		{`""`, 200, ""},
		{`5`, 200, ""},
		{`"` + long + `"`, 200, strings.Repeat("é", 300)},
		{`"\n` + long + `"`, 5, "\n" + strings.Repeat("é", 4)},
	} {
		if got := Prefix([]byte(tt.raw), tt.n); got != tt.want {
			t.Errorf("Prefix(%.40s, %d) = %.40q (%d runes), want %.40q", tt.raw, tt.n, got, len([]rune(got)), tt.want)
		}
	}
}

// point1 is a variable so that point1+0.2 is computed in float64 at run time.
var point1 = 0.1

// escapedText is a JSON string as session lines hold them: prose and code
// with newlines, tabs, quotes and backslashes escaped.
var escapedText = []byte(`"` + strings.Repeat(`The handler said \"no\":\n\tfunc (s *Store) Batch() {\n\t\treturn \\\\ x \u00e9 → ok\n}\n`, 100) + `"`)

func BenchmarkString(b *testing.B) {
	b.SetBytes(int64(len(escapedText)))
	for range b.N {
		String(escapedText)
	}
}

// proseText is a JSON string of prose with a newline now and then, as
// most of the text in sessions is.
var proseText = []byte(`"` + strings.Repeat(`The tree is read once; every entry names its parent, and the leaf is the last one.\n`, 200) + `"`)

// TestNumberShort checks the short-decimal path of Number against strconv,
// on listed and random numbers.
func TestNumberShort(t *testing.T) {
	cases := []string{"0", "-0", "7", "42", "999999999999999", "1000000000000000", "123456789012345678", "-5", "1.5", "0.1", "0.3",
		"0.000123", "-0.0", "1e3", "1.", "null", `"1"`, "9007199254740993", "0.123456789012345", "0.1234567890123456", "3.14159265358979"}
	r := rand.New(rand.NewSource(4))
	for range 200_000 {
		n := strconv.FormatUint(r.Uint64()%1_000_000_000_000_000, 10)
		if d := r.Intn(len(n) + 1); d < len(n) && r.Intn(2) == 0 {
			n = n[:d] + "." + n[d:]
			if n[0] == '.' {
				n = "0" + n
			}
		}
		if r.Intn(4) == 0 {
			n = "-" + n
		}
		cases = append(cases, n)
	}
	for _, s := range cases {
		got, ok := Number([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		if s == "null" {
			want, err = 0, nil
		}
		if ok != (err == nil) || (ok && (got != want || math.Signbit(got) != math.Signbit(want))) {
			t.Fatalf("Number(%s) = %v, %v; want %v, %v", s, got, ok, want, err)
		}
	}
}
