package js

import "testing"

// TestToLower checks JavaScript's toLowerCase on what pi's searches meet
// (results from Node 20: "ΣΑΣ".toLowerCase() is "σας", and so on).
func TestToLower(t *testing.T) {
	for in, want := range map[string]string{
		"ASCII Text": "ascii text",
		"ΣΑΣ":        "σας",
		"Σ":          "σ",
		"ΑΣ.":        "ας.",
		"ΑΣ'Α":       "ασ'α",
		"ΑΣ΄ Σ":      "ας΄ σ",
		"İ":          "i̇",
		"İSTANBUL":   "i̇stanbul",
		"ǅ":          "ǆ",
		"STRASSE ß":  "strasse ß",
		"Ω 日本 😀":     "ω 日本 😀",
		"AΣ\u0301":   "aς\u0301",
		"aΣb":        "aσb",
		"I\u0307":    "i\u0307",
	} {
		if got := ToLower(in); got != want {
			t.Errorf("ToLower(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRestringify checks JSON.stringify(JSON.parse(raw)) on strings (Node 20's answers).
func TestRestringify(t *testing.T) {
	for _, c := range []struct {
		raw, want string
		trim      bool
	}{
		{`"S\ud800>~/"`, `"S\ud800>~/"`, false},
		{`"\ud83d\ude00 \ud83d"`, `"😀 \ud83d"`, false},
		{`"\u00e9\u0026\/"`, `"é&/"`, false},
		{`"  \u2028name\t "`, `"name"`, true},
		{`"\u0001\n\""`, `"\u0001\n\""`, false},
		{`"\udc00\ud800"`, `"\udc00\ud800"`, false},
	} {
		got, ok := Restringify([]byte(c.raw), c.trim)
		if !ok || string(got) != c.want {
			t.Errorf("Restringify(%s, %v) = %s, %v; want %s", c.raw, c.trim, got, ok, c.want)
		}
	}
	if _, ok := Restringify([]byte(`42`), false); ok {
		t.Error("a number restringified")
	}
}

// TestToValidUTF8 checks the WHATWG decoder's replacements (Node 20:
// Buffer.from([...]).toString("utf8")).
func TestToValidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"ok":                   "ok",
		"\xe2\x82message":      "\uFFFDmessage",
		"\x80\x80":             "\uFFFD\uFFFD",
		"a\xffb":               "a\uFFFDb",
		"\xed\xa0\x80":         "\uFFFD\uFFFD\uFFFD",
		"\xf0\x9f\x98":         "\uFFFD",
		"\xf0\x9f\x98\x80":     "😀",
		"\xc3":                 "\uFFFD",
		"\xe0\x80\x80":         "\uFFFD\uFFFD\uFFFD",
		"\xf4\x90\x80\x80":     "\uFFFD\uFFFD\uFFFD\uFFFD",
		"\xe2\x82\xe2\x82\xac": "\uFFFD€",
	} {
		if got := string(ToValidUTF8([]byte(in))); got != want {
			t.Errorf("ToValidUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}
