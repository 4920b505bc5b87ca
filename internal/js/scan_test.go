package js

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// tScanValid reports whether b is one JSON value (with surrounding
// whitespace) according to the scanner.
func tScanValid(b []byte) bool {
	end, err := ScanValue(b, SkipWS(b, 0))
	return err == nil && SkipWS(b, end) == len(b)
}

// tJSValid is the reference: JSON.parse after Node's UTF-8 decoding, which
// turns invalid bytes into U+FFFD. Inside a string that is a valid
// character; outside one it is a syntax error either way.
func tJSValid(b []byte) bool {
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	if json.Valid(b) {
		return true
	}
	// encoding/json stops at 10,000 levels where JSON.parse has no limit:
	// past that depth there is no reference here, so defer to the scanner,
	// whose deep inputs TestScanDeepNesting checks on their own.
	var v any
	if err := json.Unmarshal(b, &v); err != nil && strings.Contains(err.Error(), "exceeded max depth") {
		return tScanValid(b)
	}
	return false
}

func TestScanAgainstJSONValid(t *testing.T) {
	cases := []string{
		// Scalars.
		`0`, `-0`, `1`, `-1`, `123`, `1.5`, `-1.5e10`, `1E+2`, `1e-2`, `0.0`, `0e0`, `1e400`, `-1e-400`,
		`01`, `-01`, `00`, `1.`, `-`, `+1`, `.5`, `1e`, `1e+`, `1E-`, `0x10`, `1.e5`, `--1`, `1..2`, `1ee2`,
		`Infinity`, `NaN`, `-Infinity`, `1_000`,
		`true`, `false`, `null`, `tru`, `nul`, `fals`, `True`, `NULL`, `nulll`, `truefalse`, `t`, `n`, `f`,
		// Strings and escapes.
		`""`, `"a"`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u0041"`, `"\u00e9\uD83D\uDE00"`, `"\uD800"`,
		`"\uDFFF\uD800"`, `"\x41"`, `"\'"`, `"\a"`, `"\u12"`, `"\u12G4"`, `"\u"`, `"\U0041"`, `"\`, `"\"`,
		`"abc`, `"`, `'a'`, "\"a\tb\"", "\"a\nb\"", "\"\x00\"", "\"\x1f\"", "\"\x7f\"", "\"é日本😀\"",
		`"\u0000"`, `"a\\"b"`,
		// Arrays and objects.
		`[]`, `[ ]`, `[1]`, `[1,2]`, `[1,]`, `[,1]`, `[,]`, `[1 2]`, `[`, `]`, `[1`, `[1,`, `[[]]`, `[[]`, `[]]`,
		`{}`, `{ }`, `{"a":1}`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `{"a" 1}`, `{a:1}`, `{'a':1}`, `{1:1}`,
		`{"a":1 "b":2}`, `{"a":1,"a":2}`, `{"a":{"b":[1,{"c":null}]}}`, `{"a":[}`, `{"a":1]`, `[1}`, `{`,
		`{"a":1`, `{"a":1,`, `{"a":1,"`, `{"a":"b"`, `{"":0}`, `{"\u0069d":"x"}`, `{"a":[1,2,{"b":"c"}],"d":-0.5e-3}`,
		// Whitespace and trailing data.
		` 1 `, "\t\n\r 1\r\n", "\v1", "\f1", "1\v", "\u00a01", "\ufeff{}", `1 2`, `{} x`, `{}}`, `[]]`, `{}{}`,
		`"a" "b"`, `nullx`, `1/`, `1 //c`, `/*c*/1`, ``, ` `, "\n",
		// Invalid UTF-8: accepted inside strings (Node decodes it to U+FFFD), rejected outside.
		"\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "{\"\xff\":1}", "\xff", "[1,\xff]", "{\"a\":1}\xff",
		"\"\\\xff\"",
	}
	for _, c := range cases {
		b := []byte(c)
		if got, want := tScanValid(b), tJSValid(b); got != want {
			t.Errorf("tScanValid(%q) = %v, JSON.parse would say %v", c, got, want)
		}
	}
}

// TestScanDeepNesting checks nesting has no depth limit, as in V8's
// JSON.parse (which accepts millions of levels), and that nothing recurses.
func TestScanDeepNesting(t *testing.T) {
	for _, depth := range []int{1, 100, 10_000, 10_001, 100_000, 1_000_000} {
		for _, open := range []string{"[", `{"a":`, `[{"k":`} {
			var b bytes.Buffer
			for range depth {
				b.WriteString(open)
			}
			b.WriteString("1")
			for range depth {
				for k := len(open) - 1; k >= 0; k-- {
					switch open[k] {
					case '[':
						b.WriteByte(']')
					case '{':
						b.WriteByte('}')
					}
				}
			}
			in := b.Bytes()
			if !tScanValid(in) {
				t.Errorf("depth %d of %q: rejected, but JSON.parse accepts it", depth, open)
			}
			// Unterminated at depth: always invalid, and must not recurse.
			if tScanValid(in[:len(in)-1]) {
				t.Errorf("depth %d of %q: truncated input accepted", depth, open)
			}
		}
	}
}

func TestScanPrefixesOfValidJSON(t *testing.T) {
	// Every proper prefix of a container is invalid; numbers and literals
	// have valid prefixes only where the prefix is itself a value.
	docs := []string{
		`{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"h\u00e9\n"}]},"n":[1,-2.5e3,true,false,null]}`,
		`[[],{},[{}],{"a":[]}," ",0]`,
	}
	for _, d := range docs {
		for n := 0; n <= len(d); n++ {
			p := []byte(d[:n])
			if got, want := tScanValid(p), json.Valid(p); got != want {
				t.Errorf("prefix %q: tScanValid = %v, json.Valid = %v", p, got, want)
			}
		}
	}
}

func TestScanStringEscapedFlag(t *testing.T) {
	for _, c := range []struct {
		in      string
		escaped bool
	}{
		{`"plain"`, false},
		{`"a\nb"`, true},
		{`"\u0041"`, true},
		{`""`, false},
	} {
		end, esc, err := ScanString([]byte(c.in+"tail"), 0)
		if err != nil || end != len(c.in) || esc != c.escaped {
			t.Errorf("ScanString(%q) = %d, %v, %v; want %d, %v, nil", c.in, end, esc, err, len(c.in), c.escaped)
		}
	}
}

func TestEachMember(t *testing.T) {
	in := ` { "type" : "message" , "id":"a\u0031", "n" : [1, {"x":2}] , "s":"x\"y", "type":"again" } `
	var got []string
	end, err := EachMember([]byte(in), 0, func(m Member) {
		got = append(got, Key(m.Key)+"="+string(m.Val))
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(in[end:]) != "" || in[end-1] != '}' {
		t.Errorf("end = %d, want just past the closing brace", end)
	}
	want := []string{`type="message"`, `id="a\u0031"`, `n=[1, {"x":2}]`, `s="x\"y"`, `type="again"`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("members:\n got %q\nwant %q", got, want)
	}

	if _, err := EachMember([]byte(`[1]`), 0, func(Member) {}); err != ErrNotObject {
		t.Errorf("array: err = %v, want ErrNotObject", err)
	}
	for _, bad := range []string{`{"a":1,}`, `{"a":01}`, `{"a"`, `{"a":1 "b":2}`, `{"a":"\x"}`, `{`, ``, `{"a":[}`} {
		if _, err := EachMember([]byte(bad), 0, func(Member) {}); err == nil || err == ErrNotObject {
			t.Errorf("EachMember(%q): err = %v, want a syntax error", bad, err)
		}
	}
}

func TestKeyDecoding(t *testing.T) {
	for _, c := range []struct {
		raw, name string
		is        bool
	}{
		{`"id"`, "id", true},
		{`"\u0069d"`, "id", true},
		{`"\u0069\u0064"`, "id", true},
		{`"ids"`, "id", false},
		{`"i"`, "id", false},
		{`"\"id"`, "id", false},
	} {
		if got := KeyIs([]byte(c.raw), c.name); got != c.is {
			t.Errorf("KeyIs(%s, %q) = %v, want %v", c.raw, c.name, got, c.is)
		}
	}
	if got := string(KeyBytes([]byte(`"\u0070arentId"`))); got != "parentId" {
		t.Errorf("keyName2 = %q, want parentId", got)
	}
}

func TestJSONString(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want string
		ok   bool
	}{
		{`"abc"`, "abc", true},
		{`""`, "", true},
		{`"a\nb\u00e9"`, "a\nbé", true},
		{`"\uD83D\uDE00"`, "😀", true},
		{"\"a\xffb\"", "a\uFFFDb", true},
		{`"\uD800"`, "\uFFFD", true}, // a lone surrogate, as Go decodes it
		{`1`, "", false},
		{`null`, "", false},
		{`["a"]`, "", false},
		{`{"a":1}`, "", false},
		{``, "", false},
	} {
		got, ok := String([]byte(c.raw))
		if got != c.want || ok != c.ok {
			t.Errorf("String(%q) = %q, %v; want %q, %v", c.raw, got, ok, c.want, c.ok)
		}
	}
}

func TestTruthy(t *testing.T) {
	// As JavaScript's Boolean(JSON.parse(raw)).
	for raw, want := range map[string]bool{
		`null`: false, `false`: false, `true`: true,
		`0`: false, `-0`: false, `0.0`: false, `0e10`: false, `-0.0e-5`: false, `1e-400`: false,
		`1`: true, `-1`: true, `0.5`: true, `1e400`: true, `-1e400`: true,
		`""`: false, `"0"`: true, `"false"`: true, `" "`: true,
		`[]`: true, `{}`: true, `[0]`: true,
	} {
		if got := Truthy([]byte(raw)); got != want {
			t.Errorf("Truthy(%s) = %v, want %v", raw, got, want)
		}
	}
}

func TestSpecial8(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }
	first := func(w []byte) int { // the index of the first special byte, or 8
		for k, c := range w {
			if special(c) {
				return k
			}
		}
		return 8
	}
	got := func(w []byte) int { return bits.TrailingZeros64(special8(binary.LittleEndian.Uint64(w))) >> 3 }
	for pos := range 8 {
		for c := range 256 {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			if g, want := got(w), first(w); g != want {
				t.Errorf("special8(%q) finds byte %d, want %d", w, g, want)
			}
		}
	}
	r := rand.New(rand.NewSource(1))
	alphabet := []byte{0, 0x01, 0x1f, 0x20, 0x21, '"', '\\', '!', '#', '[', ']', 0x5b, 0x5d, 0x7f, 0x80, 0x81, 0xa0, 0xbf, 0xc2, 0xdf, 0xff, 'a'}
	for range 500_000 {
		var w [8]byte
		for k := range w {
			w[k] = alphabet[r.Intn(len(alphabet))]
		}
		if g, want := got(w[:]), first(w[:]); g != want {
			t.Fatalf("special8(%q) finds byte %d, want %d", w, g, want)
		}
	}
}

// TestScanStringBlocks checks that long strings, read 64 bytes at a time,
// get what the scan one special byte at a time gets: the same end, escape
// flag and error, with escapes, quotes, control characters and bytes that
// are not ASCII at every offset of the first blocks, strings ending at
// every offset near a block's end, and random strings of the pieces.
func TestScanStringBlocks(t *testing.T) {
	pieces := []string{"a", "bcdefgh", "0123456789abcdef0123456789abcdef", " ", "é", "€", "😀", "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xf0\x9f", "\xc0\xaf", "\xdc", "\xa2", "\x80",
		`\n`, `\"`, `\\`, `\\\\`, `\\\"`, `\\\\"`, `\/`, `\b`, `\f`, `\r`, `\t`, `\u00e9`, `\uD83D`, `\ud83d\ude00`, `\u12`, `\x`, `\q`, `\é`, `\`,
		"\t", "\x00", "\x01", "\x1f", "\x7f", `"`}
	check := func(b []byte) {
		t.Helper()
		end, esc, err := ScanString(b, 0)
		wend, wesc, werr := scanFrom(b, 1, 0, false, false)
		if end != wend || esc != wesc || (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("ScanString(%q) = %d, %v, %v; one byte at a time: %d, %v, %v", b, end, esc, err, wend, wesc, werr)
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
	r := rand.New(rand.NewSource(3))
	for range 200_000 {
		var in []byte
		for range 8 + r.Intn(60) {
			p := pieces[r.Intn(len(pieces))]
			if p == `"` && r.Intn(4) > 0 {
				continue // a quote ends the string: keep most strings long
			}
			in = append(in, p...)
		}
		b := append(append([]byte{'"'}, in...), '"')
		check(append(b, bytes.Repeat([]byte{' '}, r.Intn(70))...))
	}
}

// TestEachMemberNested checks that the nested members are those of the
// objects under the key (each element's, for an array), read in the same
// pass, that other values and keys written with escapes are left to the
// caller, and that errors are EachMember's.
func TestEachMemberNested(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{`{"a":1,"message":{"role":"user","content":[{"x":"}"}]},"b":2}`, `start begin "role"="user" contents block "x"="}" blockend "content"=[{"x":"}"}] end`},
		{`{"message":{"role":"a"},"message":{"role":"b"}}`, `start begin "role"="a" end start begin "role"="b" end`},
		{`{"message":"text"}`, ``},
		{`{"mess\u0061ge":{"role":"a"}}`, ``},
		{`{"msg":{"role":"a"}}`, ``},
		{`{"message": { } }`, `start begin end`},
		{`{"message":{"content":[{"type":"text","text":"hi"}, 5, {"type":"x"} ,[{"type":"no"}]]}}`,
			`start begin contents block "type"="text" "text"="hi" blockend block "type"="x" blockend "content"=[{"type":"text","text":"hi"}, 5, {"type":"x"} ,[{"type":"no"}]] end`},
		{`{"message":{"content":[ ]}}`, `start begin contents "content"=[ ] end`},
		{`{"message":{"content":"plain","content":{"type":"x"}}}`, `start begin "content"="plain" "content"={"type":"x"} end`},
	} {
		var got []string
		add := func(s string) func() { return func() { got = append(got, s) } }
		member := func(m Member) { got = append(got, string(m.Key)+"="+string(m.Val)) }
		content := &Nested{Key: "content", Each: true, Start: add("contents"), Begin: add("block"), Fn: member, End: add("blockend")}
		nest := &Nested{Key: "message", Start: add("start"), Begin: add("begin"), Fn: member, End: add("end"), In: []*Nested{content}}
		var top []string
		end, err := EachMemberNested([]byte(c.in), 0, func(m Member) { top = append(top, string(m.Key)) }, []*Nested{nest})
		if err != nil || end != len(c.in) {
			t.Errorf("EachMemberNested(%s) = %d, %v", c.in, end, err)
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("EachMemberNested(%s) nested:\n got %s\nwant %s", c.in, g, c.want)
		}
		var plain []string
		EachMember([]byte(c.in), 0, func(m Member) { plain = append(plain, string(m.Key)) })
		if !slices.Equal(top, plain) {
			t.Errorf("EachMemberNested(%s) members %q, EachMember %q", c.in, top, plain)
		}
	}
	for _, bad := range []string{`{"message":{"role":}}`, `{"message":{"role":"a"}`, `{"message":{"a":"\x"}}`,
		`{"message":{"content":[{"a":1} {"b":2}]}}`, `{"message":{"content":[{"a":1},]}}`, `{"message":{"content":[{"a":1}`} {
		nest := &Nested{Key: "message", Fn: func(Member) {}, In: []*Nested{{Key: "content", Each: true, Fn: func(Member) {}}}}
		_, err := EachMemberNested([]byte(bad), 0, func(Member) {}, []*Nested{nest})
		_, want := EachMember([]byte(bad), 0, func(Member) {})
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("EachMemberNested(%s): %v, EachMember: %v", bad, err, want)
		}
	}
}

// tTrustedMembers lists the members eachMemberTrusted finds.
func tTrustedMembers(b []byte) []string {
	var out []string
	Members(b, func(m Member) { out = append(out, string(m.Key)+"="+string(m.Val)) })
	return out
}

func TestTrustedWalk(t *testing.T) {
	docs := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a" : "x\"y\\" , "b":[1,{"c":"]}"}],"d":{"e":[]},"f":-1.5e3,"g":true,"h":null}`,
		`{"\"":"\\","\\\"":"\\\\\""}`, `{"a":"` + strings.Repeat(`\\`, 9) + `\""}`, "{\"a\":\"\xff\",\"b\":\"é\"}",
	}
	files, _ := filepath.Glob("../../static/demo/*/*.jsonl") // real pi sessions
	if len(files) == 0 {
		t.Fatal("no demo sessions found")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line != "" {
				docs = append(docs, line)
			}
		}
	}
	for _, d := range docs {
		var want []string
		if _, err := EachMember([]byte(d), 0, func(m Member) { want = append(want, string(m.Key)+"="+string(m.Val)) }); err != nil {
			t.Fatalf("%q: %v", d, err)
		}
		if got := tTrustedMembers([]byte(strings.TrimSpace(d))); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("Members(%.200q):\n got %q\nwant %q", d, got, want)
		}
	}
	for _, d := range []string{``, `[]`, `"x"`, `{`, `{"a"`, `{"a":`, `{"a":"unterminated`, `{"a":[1,2`} {
		tTrustedMembers([]byte(d)) // must not panic on what it was not meant for
	}
}

// BenchmarkScanString: a long string of a line validated (scanBlocks).
func BenchmarkScanString(b *testing.B) {
	for _, bc := range []struct {
		name string
		raw  []byte
	}{{"code", escapedText}, {"prose", proseText}} {
		line := append(append([]byte(`{"text":`), bc.raw...), '}')
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.raw)))
			for range b.N {
				if _, _, err := ScanString(line, 8); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
