package web

import (
	"bytes"
	"html"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// markdown renders message text as pi's HTML export does (GitHub-flavoured
// markdown) and sanitises the result.
//
// goldmark: CommonMark-compliant, pure Go, no cgo, and it leaves raw HTML
// out unless told otherwise. bluemonday: an allowlist sanitiser run on its
// output anyway, since session text is untrusted and a renderer bug or
// option change must not become script execution in the page.
type markdown struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

func newMarkdown() *markdown {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w+#.-]+$`)).OnElements("code")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^[a-z0-9]{1,4}$`)).OnElements("span") // chroma's token classes
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^chroma$`)).OnElements("pre")
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return &markdown{
		md: goldmark.New(goldmark.WithExtensions(extension.GFM),
			goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(fencedCode{}, 100)))),
		policy: p,
	}
}

// html renders src to sanitised HTML. On a renderer error it falls back to
// the escaped text in a <pre>.
func (m *markdown) render(src string) string {
	var b bytes.Buffer
	if err := m.md.Convert([]byte(src), &b); err != nil {
		b.Reset()
		b.WriteString("<pre>")
		b.WriteString(html.EscapeString(src))
		b.WriteString("</pre>")
	}
	return m.policy.Sanitize(b.String())
}
