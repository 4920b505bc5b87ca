package js

import "testing"

// TestStringWHATWG checks String decodes invalid UTF-8 as Node does (one
// U+FFFD per maximal invalid subpart), escapes or not: ids and types are
// read with it.
func TestStringWHATWG(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"\"\xe2\x82message\"", "\uFFFDmessage"},
		{"\"\xf4\x90\x80\x80x\"", "\uFFFD\uFFFD\uFFFD\uFFFDx"},
		{"\"\xe2\x82\\n\"", "\uFFFD\n"},
	} {
		if got, _ := String([]byte(c.raw)); got != c.want {
			t.Errorf("String(%+q) = %+q, want %+q", c.raw, got, c.want)
		}
	}
}

// TestStringifyKeepsLoneSurrogates checks tool-call arguments come out of
// Stringify as JSON.stringify writes them: a lone surrogate escaped.
func TestStringifyKeepsLoneSurrogates(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`{"q": "\udfff", "n": 5}`, `{"q":"\udfff","n":5}`},
		{`["a\uD83D", "\ud83d\ude00"]`, `["a\ud83d","😀"]`},
		{`{"p":"x\\ud83d"}`, `{"p":"x\\ud83d"}`},
		{"[\"\xe2\x82\"]", "[\"\uFFFD\"]"},
	} {
		if got := Stringify([]byte(c.raw)); got != c.want {
			t.Errorf("Stringify(%s) = %s, want %s", c.raw, got, c.want)
		}
	}
}

// TestFromWTF8 checks halves of a pair kept apart (PrefixWTF8) make the
// character again once joined, as JavaScript's strings do, and that lone
// ones are U+FFFD.
func TestFromWTF8(t *testing.T) {
	hi, _ := StringWTF8([]byte(`"a\ud83d"`))
	lo := PrefixWTF8([]byte(`"\ude00b"`), 10)
	if got := FromWTF8(hi + lo); got != "a😀b" {
		t.Errorf("joined halves: %+q", got)
	}
	if got := FromWTF8(lo + hi); got != "\uFFFDba\uFFFD" {
		t.Errorf("reversed halves: %+q", got)
	}
	if got := Prefix([]byte(`"\ud83d"`), 5); got != "\uFFFD" {
		t.Errorf("Prefix: %+q", got)
	}
	if got := FromWTF8("plain é"); got != "plain é" {
		t.Errorf("plain: %+q", got)
	}
}
