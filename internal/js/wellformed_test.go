package js

import "testing"

// TestWellFormed checks one U+FFFD per maximal invalid subpart, as Node's
// (WHATWG) UTF-8 decoder gives: Buffer.from(bytes).toString("utf8").
func TestWellFormed(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"a\xffb", "a\uFFFDb"},
		{"\xe2\x82", "\uFFFD"},                           // a cut 3-byte sequence: one
		{"\xe2\x82message", "\uFFFDmessage"},             // the example
		{"\xf0\x9f\x98", "\uFFFD"},                       // a cut emoji: one
		{"\xc0\x80", "\uFFFD\uFFFD"},                     // overlong: C0 is never a lead
		{"\xe0\x80\xaf", "\uFFFD\uFFFD\uFFFD"},           // E0 needs A0..BF next
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},           // an encoded surrogate
		{"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"}, // past U+10FFFF
		{"\xf8\x88\x80\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"\xe2\x28\xa1", "\uFFFD(\uFFFD"},
		{"\x80\x80", "\uFFFD\uFFFD"},
		{"é\xc3", "é\uFFFD"},
	} {
		if got := string(WellFormed([]byte(c.in))); got != c.want {
			t.Errorf("WellFormed(%+q) = %+q, want %+q", c.in, got, c.want)
		}
	}
	// String decodes JSON strings the same way.
	if s, _ := String([]byte("\"\xf4\x90\x80\x80x\"")); s != "\uFFFD\uFFFD\uFFFD\uFFFDx" {
		t.Errorf("String: %+q", s)
	}
}

// TestLoneSurrogates checks that an escaped lone surrogate survives
// StringWTF8 and comes out of Quote and Stringify as JSON.stringify writes it.
func TestLoneSurrogates(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`"S\ud800>~/"`, `"S\ud800>~/"`},     // the label
		{`"\uD83D"`, `"\ud83d"`},             // lower-case hex, as JSON.stringify
		{`"ab\ud83d\ude00c"`, `"ab😀c"`},      // a pair is a character
		{`"\ude00\ud83d"`, `"\ude00\ud83d"`}, // reversed: two lone ones
		{`"x\\ud83d"`, `"x\\ud83d"`},         // an escaped backslash, no surrogate
		{`"\u00e9\n\u0001"`, `"é\n\u0001"`},
	} {
		s, ok := StringWTF8([]byte(c.raw))
		if !ok {
			t.Fatalf("StringWTF8(%s) failed", c.raw)
		}
		if got := string(Quote(s)); got != c.want {
			t.Errorf("Quote(StringWTF8(%s)) = %s, want %s", c.raw, got, c.want)
		}
		if got := Stringify([]byte(`{"a":[` + c.raw + `]}`)); got != `{"a":[`+c.want+`]}` {
			t.Errorf("Stringify(%s) = %s", c.raw, got)
		}
	}
	if !HasLoneSurrogate([]byte(`"a\ud83d"`)) || HasLoneSurrogate([]byte(`"a\ud83d\ude00"`)) || HasLoneSurrogate([]byte(`"x\\ud83d"`)) {
		t.Error("HasLoneSurrogate")
	}
	// String still gives U+FFFD, for pages and search.
	if s, _ := String([]byte(`"a\ud83d"`)); s != "a\uFFFD" {
		t.Errorf("String: %+q", s)
	}
}

// TestFromWTF8 checks halves of a surrogate pair kept apart (PrefixWTF8)
// make the character again once joined, as in JavaScript, and lone ones
// are U+FFFD.
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
}
