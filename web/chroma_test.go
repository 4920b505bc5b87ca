package web

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/styles"
)

// TestChromaCSS keeps static/css/chroma.css, the colours of highlighted
// code, made from chroma's github (light) and github-dark styles; with
// -update it writes the file.
func TestChromaCSS(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("/* Highlighted code (web/highlight.go): chroma's github and github-dark styles, written by TestChromaCSS. */\n")
	if err := codeFormatter.WriteCSS(&b, styles.Get("github")); err != nil {
		t.Fatal(err)
	}
	b.WriteString("@media (prefers-color-scheme: dark) {\n")
	if err := codeFormatter.WriteCSS(&b, styles.Get("github-dark")); err != nil {
		t.Fatal(err)
	}
	b.WriteString("}\n")
	file := filepath.Join("..", "static", "css", "chroma.css")
	if *update {
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil || !bytes.Equal(got, b.Bytes()) {
		t.Fatalf("%s is not what chroma makes (%v): run go test ./web -run TestChromaCSS -update", file, err)
	}
}

// TestClassStyle: highlighting with the colourless style writes the same
// HTML as with chroma's own styles (the formatter writes classes alone).
func TestClassStyle(t *testing.T) {
	for _, c := range []struct{ text, lang string }{
		{"package main\n\n// x says hi.\nfunc x() { println(\"hi\", 1+2) }\n", "go"},
		{"def f(a):\n    return a * 2  # twice\n", "python"},
		{"<a href=\"x\">&amp;</a>\n", "html"},
		{"- [ ] *one*\n\n```sh\nls -l\n```\n", "markdown"},
	} {
		l := lexerFor(c.lang, "")
		if l == nil {
			t.Fatalf("no lexer for %s", c.lang)
		}
		var want string
		for i, st := range []*chroma.Style{styles.Fallback, styles.Get("github"), styles.Get("github-dark"), classStyle} {
			it, err := l.Tokenise(nil, c.text)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := codeFormatter.Format(&b, st, it); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				want = b.String()
			} else if b.String() != want {
				t.Errorf("%s: style %s writes %q, %s %q", c.lang, st.Name, b.String(), styles.Fallback.Name, want)
			}
		}
		if h := highlight(c.text, c.lang, ""); h != want || !strings.Contains(h, "<span class=") {
			t.Errorf("%s: highlight = %q, want %q", c.lang, h, want)
		}
	}
}

// TestLexerForNames: names find their lexers through the cache as they do
// without it: by extension, by a whole name, and none for an unknown one.
func TestLexerForNames(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"src/a.go", "Go"}, {"b.go", "Go"}, {"/x/Makefile", "Makefile"}, {"Dockerfile", "Docker"},
		{"x.PY", "Python"}, {"notes", ""}, {"src/zz9", ""}, {"a.tsx", "TypeScript"},
	} {
		for range 2 { // the second answer comes from the cache
			l := lexerFor("", c.file)
			got := ""
			if l != nil {
				got = l.Config().Name
			}
			if got != c.want {
				t.Errorf("lexerFor(%q) = %q, want %q", c.file, got, c.want)
			}
		}
	}
}
