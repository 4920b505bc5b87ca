package web

import "testing"

func TestPlainPreview(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"**Fix** the `parser` bug", "Fix the parser bug"},
		{"# Title\n\nSome *text* with [a link](http://x.example)", "Title Some text with a link"},
		{"- one\n- two", "one two"},
		{"see <https://pi.dev>", "see https://pi.dev"},
		{"```go\nfunc main() {}\n```\nafter", "func main() {} after"},
		{"a <b>bold</b> claim", "a bold claim"},
		{"plain", "plain"},
		{"", ""},
	} {
		if got := plainPreview(c.in); got != c.want {
			t.Errorf("plainPreview(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
