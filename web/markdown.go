package web

import (
	"bufio"
	"bytes"
	"html"
	"regexp"
	"strings"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders message text as pi's HTML export does (GitHub-flavoured
// markdown) and sanitises the result.
//
// goldmark: CommonMark-compliant, pure Go, no cgo. HTML written in a
// message is shown as the text it is, escaped (rawHTML), never dropped with
// the words inside it; task list items are read-only checkboxes.
// bluemonday: an allowlist sanitiser run on its output anyway, since session
// text is untrusted and a renderer bug or option change must not become
// script execution in the page.
type markdown struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

func newMarkdown() *markdown {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w+#.-]+$`)).OnElements("code")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^[a-z0-9]{1,4}$`)).OnElements("span") // chroma's token classes
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^(chroma|html-text)$`)).OnElements("pre")
	// GFM task lists: goldmark's checkbox, which it always writes disabled
	// (raw HTML never gets here: rawHTML escapes it).
	p.AllowElements("input")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^$`)).OnElements("input")
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return &markdown{
		md: goldmark.New(goldmark.WithExtensions(extension.GFM),
			goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(fencedCode{}, 100), util.Prioritized(rawHTML{}, 100)))),
		policy: p,
	}
}

// html renders src to sanitised HTML. On a renderer error it falls back to
// the escaped text in a <pre>.
func (m *markdown) render(src string) string {
	mb := mdBuffers.Get().(*mdBuffer)
	defer mb.put()
	b := &mb.out
	mb.w.Reset(b) // goldmark writes through the buffered writer it is given, or makes one
	err := m.md.Convert([]byte(src), mb.w)
	if err == nil {
		err = mb.w.Flush()
	}
	if err != nil {
		b.Reset()
		b.WriteString("<pre>")
		b.WriteString(html.EscapeString(src))
		b.WriteString("</pre>")
	}
	return m.policy.Sanitize(b.String())
}

// mdBuffer is what rendering one message's markdown writes through: kept
// between messages (a page renders a hundred).
type mdBuffer struct {
	out bytes.Buffer
	w   *bufio.Writer
}

var mdBuffers = sync.Pool{New: func() any { return &mdBuffer{w: bufio.NewWriter(nil)} }}

// put gives mb back for the next message, unless a long one grew it.
func (mb *mdBuffer) put() {
	if mb.out.Cap() <= 1<<20 {
		mb.out.Reset()
		mdBuffers.Put(mb)
	}
}

// rawHTML renders HTML written in markdown as text: inline tags and HTML
// blocks are escaped where they stand, so "<b>bold</b>" reads as typed and
// a <details> block keeps its words (goldmark's safe mode drops both).
type rawHTML struct{}

func (rawHTML) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		segs := n.(*ast.RawHTML).Segments
		for i := 0; i < segs.Len(); i++ {
			s := segs.At(i)
			w.WriteString(html.EscapeString(string(s.Value(src))))
		}
		return ast.WalkSkipChildren, nil
	})
	r.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.HTMLBlock)
		w.WriteString(`<pre class="html-text">`)
		for i := 0; i < b.Lines().Len(); i++ {
			s := b.Lines().At(i)
			w.WriteString(html.EscapeString(string(s.Value(src))))
		}
		if b.HasClosure() {
			w.WriteString(html.EscapeString(string(b.ClosureLine.Value(src))))
		}
		w.WriteString("</pre>\n")
		return ast.WalkSkipChildren, nil
	})
}

// plain returns the text a reader sees in markdown src, without its
// syntax (`**`, `#`, backticks, link targets), for one-line previews. Only
// the first 4 KB are read.
func (m *markdown) plain(src string) string {
	if len(src) > 4096 {
		src = src[:4096]
	}
	b := []byte(src)
	doc := m.md.Parser().Parse(text.NewReader(b))
	var out strings.Builder
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			if n.Type() == ast.TypeBlock && out.Len() > 0 {
				out.WriteByte(' ')
			}
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Text:
			out.Write(n.Segment.Value(b))
			if n.SoftLineBreak() || n.HardLineBreak() {
				out.WriteByte(' ')
			}
		case *ast.String:
			out.Write(n.Value)
		case *ast.AutoLink:
			out.Write(n.URL(b))
		case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
			l := n.Lines()
			for i := 0; i < l.Len(); i++ {
				s := l.At(i)
				out.Write(s.Value(b))
			}
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return strings.Join(strings.Fields(out.String()), " ")
}

// previews caches plain previews of first messages: the list renders every
// session's on each keystroke of its search.
var previews struct {
	sync.Mutex
	md   *markdown // made on first use, not when a program starts
	seen map[string]string
}

// plainPreview is md.plain, remembered for the strings seen lately.
func plainPreview(s string) string {
	previews.Lock()
	defer previews.Unlock()
	if p, ok := previews.seen[s]; ok {
		return p
	}
	if previews.md == nil {
		previews.md, previews.seen = newMarkdown(), map[string]string{}
	}
	if len(previews.seen) > 20000 {
		clear(previews.seen)
	}
	p := previews.md.plain(s)
	previews.seen[s] = p
	return p
}
