package web

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

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
