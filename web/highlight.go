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
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
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
// (A variable for tests: chroma gives up on a regular expression after
// 250 ms of wall time, so output compared byte for byte is kept to texts far
// too short for that to happen, even under the race detector.)
var maxHighlight = 256 << 10

// codeFormatter writes chroma's tokens as spans with classes.
var codeFormatter = chromahtml.New(chromahtml.WithClasses(true), chromahtml.PreventSurroundingPre(true))

// classStyle is the style codeFormatter is given: one with no colours.
// Writing classes, the formatter takes nothing from a style but what it
// caches as CSS, which no page uses (chroma.css holds the colours), so
// chroma's styles package, which parses every style it holds when a
// program starts, stays out of the binary.
var classStyle = chroma.MustNewStyle("piweb-classes", chroma.StyleEntries{})

// lexerFor finds a lexer by a code block's language or a file's name; nil when none fits.
func lexerFor(lang, file string) chroma.Lexer {
	key := "lang:" + strings.ToLower(lang)
	name := path.Base(file)
	if lang == "" {
		if file == "" {
			return nil
		}
		// By extension: names differ far more often than their types do.
		// A name with no extension (Makefile, Dockerfile) is its own key.
		key = "file:" + name
		if ext := path.Ext(name); ext != "" && ext != name {
			key, name = "ext:"+strings.ToLower(ext), "x"+strings.ToLower(ext)
		}
		if !plainName(name) {
			return nil // no lexer's pattern takes spaces or symbols: not worth a Match
		}
	}
	if v, ok := lexerCache.Load(key); ok {
		l, _ := v.(chroma.Lexer) // nil: nothing fits
		return l
	}
	var l chroma.Lexer
	if lang != "" {
		l = lexers.Get(strings.ToLower(lang))
	}
	if l == nil && file != "" {
		// Match tries every lexer's file name patterns: costly enough to remember.
		if strings.HasPrefix(key, "file:") {
			l = noExtLexers().Match(name) // the few lexers a name without extension can match
		} else {
			l = lexers.Match(name)
		}
	}
	if l != nil {
		l = chroma.Coalesce(l)
	}
	if lexerCached.Add(1) <= maxLexerCache {
		lexerCache.Store(key, l)
	}
	return l
}

// lexerCache remembers lexerFor's answers (nil too), by language or file
// name, up to maxLexerCache names.
var (
	lexerCache  sync.Map
	lexerCached atomic.Int64
)

const maxLexerCache = 8192

// plainName reports whether a file name (or "x.ext") is made of the
// characters lexers' patterns use.
func plainName(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '+') {
			return false
		}
	}
	return s != ""
}

// noExtLexers holds the lexers with a file name pattern other than "*.ext":
// the only ones a name without an extension can match (Makefile, Dockerfile).
var noExtLexers = sync.OnceValue(func() *chroma.LexerRegistry {
	r := chroma.NewLexerRegistry()
	for _, l := range lexers.GlobalLexerRegistry.Lexers {
		c := l.Config()
		for _, g := range append(slices.Clone(c.Filenames), c.AliasFilenames...) {
			if !strings.HasPrefix(g, "*.") || strings.ContainsAny(g[2:], "*?[") {
				r.Register(l)
				break
			}
		}
	}
	return r
})

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
	if err := codeFormatter.Format(&b, classStyle, it); err != nil {
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
