package sessions

import (
	"strings"
	"testing"
)

func TestHasText(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want bool
	}{
		{`"x"`, true}, {`"  "`, false}, {`" \u00a0\n\t\u2003 "`, false}, {`"\\n"`, true}, {`""`, false},
		{`[]`, false}, {`null`, false}, {`{}`, false}, {`5`, false},
		{`[{"type":"text","text":"hi"}]`, true},
		{`[{"text":"hi","type":"text"}]`, true},
		{`[{"type":"te\u0078t","text":"hi"}]`, true},
		{`[{"type":"text","text":" "},{"type":"text","text":"\u0041"}]`, true},
		{`[{"type":"thinking","thinking":"a \"quoted\" \\ text"},{"type":"toolCall","id":"c","name":"x","arguments":{"a":["]"]}}]`, false},
		{`[{"type":"text","text":5}]`, false},
		{`[{"type":"text"}]`, false},
		{`["text",null,7,{"type":"image"}]`, false},
		{`[ { "type" : "text" , "text" : "a\"b" } ]`, true},
		{`[{"type":"text","text":"x","type":"image"}]`, false}, // JSON.parse keeps the last "type"
	} {
		if got := hasText([]byte(tt.raw)); got != tt.want {
			t.Errorf("hasText(%s) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}

func TestContentPrefix(t *testing.T) {
	long := strings.Repeat("é", 700)
	if got := NewContent([]byte(`[{"type":"text","text":"` + long + `"},{"type":"text","text":"more"}]`)).Prefix(200); got != strings.Repeat("é", 200) {
		t.Errorf("Prefix of long blocks: %d runes", len([]rune(got)))
	}
	if got := NewContent([]byte(`"` + long + `"`)).Prefix(3); got != "ééé" {
		t.Errorf("Prefix of a string: %q", got)
	}
}

// TestContentOnGarbage feeds content readers broken JSON, as a file
// rewritten under a Reader might hold: they must stop, not panic or spin.
func TestContentOnGarbage(t *testing.T) {
	for _, raw := range []string{
		``, `{`, `[`, `{"`, `{"a`, `{"a"`, `{"a":`, `{"a":}`, `{"a" 1}`, `{"a":1,}`, `{"a":"\`, `{"a":"x\"`,
		`[}]`, `[1,`, `["a`, `[,]`, `[1 2]`, `{"a":[{"b":}]}`, `{}}`, `{"\":1}`, `]`, `}`, `"`, `-`,
	} {
		c := NewContent([]byte(raw))
		_ = c.Prefix(200)
		_ = c.Blocks()
		_ = c.FullText()
		_ = hasText([]byte(raw))
		_ = DecodeMessage([]byte(raw))
	}
}

// TestContentJoinsHalves checks an emoji whose halves are in two text
// blocks reads whole, as pi joins the blocks before it shows or searches them.
func TestContentJoinsHalves(t *testing.T) {
	c := Content{raw: []byte(`[{"type":"text","text":"\ud83d"},{"type":"text","text":"\ude00!"}]`)}
	if got := c.Prefix(200); got != "😀!" {
		t.Errorf("Prefix: %+q", got)
	}
	if got := c.Prefix(1); got != "\uFFFD" {
		t.Errorf("Prefix cut inside the pair: %+q", got)
	}
	if got := c.FullText(); got != "😀!" {
		t.Errorf("FullText: %+q", got)
	}
}

// newContent returns content as written.

// TestBlockText: a block's text is its "text", or for a thinking block its
// "thinking", wherever the type comes and whatever other key it carries.
func TestBlockText(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{`{"type":"text","text":"a"}`, "a"},
		{`{"type":"text","thinking":"no"}`, ""},
		{`{"thinking":"no","type":"text","text":"a"}`, "a"},
		{`{"type":"thinking","thinking":"t"}`, "t"},
		{`{"text":"no","type":"thinking","thinking":"t"}`, "t"},
		{`{"type":"thinking","text":"no"}`, ""},
		{`{"type":"text","text":"a","text":"b"}`, "b"}, // JSON.parse keeps the last
	} {
		if got := decodeBlock([]byte(tt.raw)).Text; got != tt.want {
			t.Errorf("%s: %q, want %q", tt.raw, got, tt.want)
		}
	}
}
