package js

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestMemberEdits(t *testing.T) {
	tests := []struct {
		name, in, op, key, val, want string
	}{
		{"set existing", `{"a":1,"b":2}`, "set", "b", "3", `{"a":1,"b":3}`},
		{"set keeps spacing", `{ "a" : 1 , "b" : 2 }`, "set", "b", "3", `{ "a" : 1 , "b" : 3 }`},
		{"set absent", `{"a":1}`, "set", "b", "3", `{"a":1,"b":3}`},
		{"set in empty", `{}`, "set", "b", "3", `{"b":3}`},
		{"set duplicates", `{"b":1,"a":0,"b":2}`, "set", "b", "9", `{"b":9,"a":0,"b":9}`},
		{"set escaped key", `{"\u0062":1}`, "set", "b", "2", `{"\u0062":2}`},
		{"del first", `{"a":1,"b":2}`, "del", "a", "", `{"b":2}`},
		{"del last", `{"a":1, "b":2}`, "del", "b", "", `{"a":1}`},
		{"del middle", `{"a":1,"b":2,"c":3}`, "del", "b", "", `{"a":1,"c":3}`},
		{"del only", `{"a":1}`, "del", "a", "", `{}`},
		{"del duplicates", `{"a":1,"b":2,"a":3}`, "del", "a", "", `{"b":2}`},
		{"del absent", `{"a":1}`, "del", "z", "", `{"a":1}`},
		{"get last duplicate", `{"a":1,"a":[2]}`, "get", "a", "", `[2]`},
		{"get nested is not top", `{"x":{"a":1}}`, "get", "a", "", `<absent>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			switch tt.op {
			case "set":
				got = string(SetMember([]byte(tt.in), tt.key, []byte(tt.val)))
			case "del":
				got = string(DelMember([]byte(tt.in), tt.key))
			case "get":
				v, ok := Lookup([]byte(tt.in), tt.key)
				got = string(v)
				if !ok {
					got = "<absent>"
				}
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if !json.Valid([]byte(got)) && tt.op != "get" {
				t.Errorf("invalid JSON %s", got)
			}
		})
	}
}

// indentValue returns the whole value src laid out by AppendIndent.
func indentValue(src []byte, indent string) []byte {
	return AppendIndent(make([]byte, 0, len(src)+len(src)/2), src, indent, 0)
}

// TestIndent lays values out as encoding/json does, and a value nested far
// deeper than encoding/json accepts without failing.
func TestIndent(t *testing.T) {
	for _, v := range []string{
		`{}`, `[]`, `{"a":[1,{"b":"x\"y,[]{}:"},[],{}],"c":null}`, `[ 1 , "2" , true ]`, `"s"`, `-1.5e3`,
		`{"k":{"l":{"m":[[[]]]}}}`, `{"é":"\u2028"}`,
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(v), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indentValue([]byte(v), "  "); string(got) != want.String() {
			t.Errorf("indentValue(%s):\n%s\nwant\n%s", v, got, want.String())
		}
	}
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	got := indentValue([]byte(`{"a":`+deep+`}`), " ")
	if len(got) > 3*len(deep) {
		t.Errorf("deep value: %d bytes from %d", len(got), len(deep))
	}
	if _, err := ScanValue(got, 0); err != nil {
		t.Errorf("deep value indented is not JSON: %v", err)
	}
}

// TestAppendIndent checks a value laid out at a depth is what it is
// laid out as inside a larger value, near maxIndent too.
func TestAppendIndent(t *testing.T) {
	for _, v := range []string{`{}`, `[ ]`, `"s"`, `{"a": [1, {"b": "x\"y,[]{}:"}, [ ], {}], "c" : null}`, `[[[[1]]]]`} {
		for _, depth := range []int{0, 1, 2, 62, 63, 64, 65, 70} {
			open, close := strings.Repeat("[", depth), strings.Repeat("]", depth)
			whole := indentValue([]byte(open+v+close), "  ")
			// The value starts after the opening brackets' lines and ends before the closing ones'.
			prefix := indentValue([]byte(open+"0"+close), "  ")
			k := bytes.IndexByte(prefix, '0')
			want := whole[k : len(whole)-(len(prefix)-k-1)]
			if got := AppendIndent([]byte("x"), []byte(v), "  ", depth); string(got) != "x"+string(want) {
				t.Errorf("AppendIndent(%s, %d) = %q, want %q", v, depth, got[1:], want)
			}
		}
	}
}
