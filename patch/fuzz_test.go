package patch

import (
	"strings"
	"testing"
)

// FuzzApply: any patch on any text gives an answer or an error, never a
// panic; a diff made by Diff applies back exactly.
func FuzzApply(f *testing.F) {
	for _, c := range []struct{ a, b string }{
		{"a\nb\nc\n", "a\nB\nc\n"}, {"", "x\n"}, {"x\n", ""}, {"a\nb", "a\nc"}, {"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\nfour\n5\n6\n7\n8\nnine\n"},
	} {
		f.Add(c.a, c.b, Diff("f", c.a, c.b, false))
	}
	f.Add("a\n", "b\n", "@@ -1 +1 @@\n-a\n+b\n")
	f.Add("a\n", "", "@@ -0,0 +1,2 @@\n+x\n\\ No newline at end of file\n")
	f.Fuzz(func(t *testing.T, before, after, p string) {
		Apply(p, before)
		FromDisplay("f", p)
		Count(p)
		Relabel(p, "x/y")
		if strings.Contains(before+after, "\r") {
			return // udiff splits lines on \n only; a bare \r is a line's text
		}
		d := Diff("f", before, after, false)
		got, err := Apply(d, before)
		if err != nil {
			t.Fatalf("a diff of its own does not apply: %v\n%s", err, d)
		}
		if got != after {
			t.Fatalf("applied %q, want %q\n%s", got, after, d)
		}
	})
}
