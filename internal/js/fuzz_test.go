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

// FuzzScan checks the scanner accepts exactly what JSON.parse accepts, and
// that the helpers reading its spans agree with encoding/json.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2,{"b":null}],"c":"\u00e9\n"}`, `[1e400,-0,0.5]`, `"\ud800"`, "\"\xff\"", `01`, `{"a":1,}`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, want := tScanValid(data), tJSValid(data)
		if got != want {
			t.Fatalf("scanner says %v, JSON.parse would say %v, for %q", got, want, data)
		}
		if !got {
			return
		}
		v := bytes.TrimLeft(data, " \t\r\n")
		v = bytes.TrimRight(v, " \t\r\n")
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

// FuzzAppendString: AppendString appends what String decodes, and so
// does AppendValidString given valid UTF-8.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{`"a\nb"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\u00e9\t\\\/"`, "\"\xff\"", `"\q"`,
		"\"a\x01\"", `"\"`, `"\'"`, `"x\"y"`, `"plain"`, `x`, `"`, `""`, "\"a\\nb\xe6\"", "\"\\u12\"", `"\u0000\b\f\r"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, wok := String(raw)
		got, ok := AppendString([]byte("prefix"), raw)
		if ok != wok || string(got) != "prefix"+want {
			t.Fatalf("%q: AppendString %q %v, String %q %v", raw, got, ok, want, wok)
		}
		if utf8.Valid(raw) {
			got, ok = AppendValidString([]byte("prefix"), raw)
			if ok != wok || string(got) != "prefix"+want {
				t.Fatalf("%q: AppendValidString %q %v, String %q %v", raw, got, ok, want, wok)
			}
		}
	})
}
