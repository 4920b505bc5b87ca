package web

// Syntax highlighting of code: markdown code blocks, read results (by the
// file's extension), write contents and edit diffs. chroma does it on the
// server, writing classes only (the page's CSP allows no inline styles);
// static/css/chroma.css holds the colours for light and dark (made by
// TestChromaCSS from chroma's styles). Every piece goes through the same
// sanitiser as markdown does.

import (
	"bytes"
	"html"
	"path"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// fencedCode renders markdown's fenced code blocks highlighted for their language.
type fencedCode struct{}

func (fencedCode) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindFencedCodeBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		fc := n.(*ast.FencedCodeBlock)
		var text bytes.Buffer
		for i := 0; i < fc.Lines().Len(); i++ {
			seg := fc.Lines().At(i)
			text.Write(seg.Value(src))
		}
		lang := string(fc.Language(src))
		code, _ := codeHTML(text.String(), lang, "")
		w.WriteString(`<pre class="chroma"><code`)
		if lang != "" {
			w.WriteString(` class="language-` + html.EscapeString(lang) + `"`)
		}
		w.WriteString(">" + code + "</code></pre>\n")
		return ast.WalkSkipChildren, nil
	})
}

// maxHighlight is the longest text highlighted; longer ones are shown plain.
const maxHighlight = 256 << 10

// codeFormatter writes chroma's tokens as spans with classes.
var codeFormatter = chromahtml.New(chromahtml.WithClasses(true), chromahtml.PreventSurroundingPre(true))

// lexerFor finds a lexer by a code block's language or a file's name; nil when none fits.
func lexerFor(lang, file string) chroma.Lexer {
	var l chroma.Lexer
	if lang != "" {
		l = lexers.Get(strings.ToLower(lang))
	}
	if l == nil && file != "" {
		l = lexers.Match(path.Base(file))
	}
	if l == nil {
		return nil
	}
	return chroma.Coalesce(l)
}

// highlight returns text as HTML spans coloured for the language or file
// name ("" when nothing fits or the text is too long: show it plain).
func highlight(text, lang, file string) string {
	if len(text) > maxHighlight {
		return ""
	}
	l := lexerFor(lang, file)
	if l == nil {
		return ""
	}
	it, err := l.Tokenise(nil, text)
	if err != nil {
		return ""
	}
	var b bytes.Buffer
	if err := codeFormatter.Format(&b, styles.Fallback, it); err != nil {
		return ""
	}
	return b.String()
}

// codeHTML is text highlighted for lang or file, or escaped when nothing fits.
func codeHTML(text, lang, file string) (string, bool) {
	if h := highlight(text, lang, file); h != "" {
		return h, true
	}
	return html.EscapeString(text), false
}
