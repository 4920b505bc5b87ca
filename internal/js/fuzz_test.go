package js

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzScan's seed corpus lives in testdata/fuzz/FuzzScan. Run it with
//
//	go test -run '^$' -fuzz '^FuzzScan$' -fuzztime 200000x ./internal/js/

// FuzzScan checks the scanner accepts exactly what JSON.parse accepts,
// and that the helpers reading its spans agree with encoding/json.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2,{"b":null}],"c":"\u00e9\n"}`, `{"m":{"x":[1]},"e":[{"a":1},2,{"b":{"c":3}}]}`, `[1e400,-0,0.5]`, `"\ud800"`, "\"\xff\"", `01`, `{"a":1,}`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, want := tScanValid(data), tJSValid(data)
		if got != want {
			t.Fatalf("scanner says %v, JSON.parse would say %v, for %q", got, want, data)
		}
		v := bytes.TrimLeft(data, " \t\r\n")
		v = bytes.TrimRight(v, " \t\r\n")
		if len(v) > 0 && v[0] == '{' {
			// Read with nested objects: the same verdict.
			end, err := EachMemberNested(v, 0, func(Member) {}, []*Nested{
				{Key: "m", Fn: func(Member) {}},
				{Key: "e", Each: true, Fn: func(Member) {}}})
			if (err == nil && end == len(v)) != got {
				t.Fatalf("EachMemberNested(%q) = %d, %v; the scanner says %v", v, end, err, got)
			}
		}
		if !got {
			return
		}
		// A nested walk finds the members the trusted walk finds in the value.
		if v[0] == '{' {
			var nested, elems []string
			var top, arr string
			member := func(to *[]string) func(m Member) {
				return func(m Member) { *to = append(*to, string(m.Key)+"="+string(m.Val)) }
			}
			end, err := EachMemberNested(v, 0, func(m Member) {
				if string(m.Key) == `"m"` && m.Val[0] == '{' {
					top = string(m.Val)
				}
				if string(m.Key) == `"e"` && m.Val[0] == '[' {
					arr = string(m.Val)
				}
			}, []*Nested{
				{Key: "m", Start: func() { nested = nested[:0] }, Fn: member(&nested)},
				{Key: "e", Each: true, Start: func() { elems = elems[:0] }, Begin: func() { elems = append(elems, "{") }, Fn: member(&elems)},
			})
			if err != nil || end != len(v) {
				t.Fatalf("EachMemberNested(%q) = %d, %v", v, end, err)
			}
			if top != "" {
				if want := tTrustedMembers([]byte(top)); strings.Join(nested, "\x00") != strings.Join(want, "\x00") {
					t.Fatalf("nested members of %q: %q, want %q", top, nested, want)
				}
			}
			if arr != "" {
				var want []string
				Elems([]byte(arr), func(el []byte) bool {
					if el[0] == '{' {
						want = append(append(want, "{"), tTrustedMembers(el)...)
					}
					return true
				})
				if strings.Join(elems, "\x00") != strings.Join(want, "\x00") {
					t.Fatalf("nested elements of %q: %q, want %q", arr, elems, want)
				}
			}
		}
		valid := bytes.ToValidUTF8(v, []byte("\uFFFD"))
		var ref any
		refErr := json.Unmarshal(valid, &ref)

		// Objects: EachMember agrees on the extent and every member is a key and a value.
		if v[0] == '{' {
			var keys []string
			end, err := EachMember(v, 0, func(m Member) {
				if !tScanValid(m.Key) || m.Key[0] != '"' || !tScanValid(m.Val) {
					t.Fatalf("member %q: %q", m.Key, m.Val)
				}
				keys = append(keys, Key(m.Key))
			})
			if err != nil || end != len(v) {
				t.Fatalf("EachMember: end %d of %d, %v", end, len(v), err)
			}
			if obj, ok := ref.(map[string]any); ok && refErr == nil && utf8.Valid(v) {
				for _, k := range keys {
					if _, ok := obj[k]; !ok {
						t.Fatalf("key %q not in the decoded object %v", k, obj)
					}
				}
			}
		} else if _, err := EachMember(v, 0, func(Member) {}); err != ErrNotObject {
			t.Fatalf("EachMember on a non-object: %v", err)
		}
		// The trusted walk finds the same members.
		if v[0] == '{' {
			var want []string
			EachMember(v, 0, func(m Member) { want = append(want, string(m.Key)+"="+string(m.Val)) })
			if got := tTrustedMembers(v); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("EachMemberTrusted: %q, want %q", got, want)
			}
		}
		// Strings decode as encoding/json decodes them. (With invalid UTF-8,
		// ToValidUTF8 above merges runs that String replaces byte by byte.)
		if s, ok := String(v); ok != (v[0] == '"') || (ok && refErr == nil && utf8.Valid(v) && s != ref.(string)) {
			t.Fatalf("String(%q) = %q, %v; encoding/json gives %q", v, s, ok, ref)
		}
		// Truthiness as JavaScript's Boolean(value).
		if refErr == nil {
			want := true
			switch r := ref.(type) {
			case nil:
				want = false
			case bool:
				want = r
			case float64:
				want = r != 0
			case string:
				want = r != ""
			}
			if Truthy(v) != want {
				t.Fatalf("Truthy(%q) = %v, want %v", v, !want, want)
			}
		}
	})
}

// FuzzUnquote: String decodes every string as encoding/json does.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a\nb"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\u00e9\t\\\/"`, "\"\xff\"", `"\q"`, "\"a\x01\"", `"\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
			return
		}
		var want string
		werr := json.Unmarshal(raw, &want)
		got, ok := unquote(raw[1 : len(raw)-1])
		if ok && (werr != nil || got != want) {
			t.Fatalf("%q: unquote %q, encoding/json %q (%v)", raw, got, want, werr)
		}
	})
}

// FuzzLongString reads data as the inside of a long string, so that the
// 64-byte blocks of ScanString see it at every offset, and checks they
// agree with the reading one special byte at a time: end, escapes, error.
func FuzzLongString(f *testing.F) {
	for _, s := range []string{`a\"b`, `\\\\"`, "\x01", `\u00e9\u12`, "é\xff\"", strings.Repeat(`\\`, 40) + `"`} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, pad uint8) {
		b := append([]byte{'"'}, bytes.Repeat([]byte{'a'}, longString+int(pad%64))...)
		b = append(append(b, data...), '"')
		b = append(b, bytes.Repeat([]byte{' '}, 64)...)
		end, esc, err := ScanString(b, 0)
		wend, wesc, werr := scanFrom(b, 1, 0, false, false)
		if end != wend || esc != wesc || (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("ScanString(%q) = %d, %v, %v; one byte at a time: %d, %v, %v", b, end, esc, err, wend, wesc, werr)
		}
	})
}

// FuzzSkipString: skipString ends a string where the first quote that
// an even run of backslashes precedes ends it, as it did before it read
// the first bytes 8 at a time, whatever follows.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"a"`, `"0123456789abcdefghij"x`, `"abc\"def"`, `"ab\\"cd"`, `"`, `"\`, strings.Repeat(`\"`, 20) + `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b := append([]byte{'"'}, data...)
		want := len(b)
		for j := 1; j < len(b); j++ {
			if b[j] == '"' {
				n := 0
				for p := j - 1; p > 0 && b[p] == '\\'; p-- {
					n++
				}
				if n%2 == 0 {
					want = j + 1
					break
				}
			}
		}
		if got := skipString(b, 0); got != want {
			t.Fatalf("skipString(%q) = %d, want %d", b, got, want)
		}
	})
}
