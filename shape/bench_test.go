package shape

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// BenchmarkMap: laying out and drawing the 100k chain and a session of
// 10,000 branches (110,001 entries), beside indexing the same file (the
// baseline: the page has done that already). Targets: under 300 ms, under 500 KB.
func BenchmarkMap(b *testing.B) {
	chain, _ := sessiontest.ChainFile(b)
	var lines strings.Builder
	lines.WriteString(sessiontest.Header + "\n" + sessiontest.User("r", "", 1, "root") + "\n")
	for i := range 10_000 {
		parent := "r"
		for k := range 11 {
			id := fmt.Sprintf("b%d_%d", i, k)
			if k%2 == 0 {
				lines.WriteString(sessiontest.User(id, parent, 2, "try this way") + "\n")
			} else {
				lines.WriteString(sessiontest.Asst(id, parent, 2, "done") + "\n")
			}
			parent = id
		}
	}
	dir := b.TempDir()
	branches := sessiontest.File(b, dir, "b.jsonl", lines.String())
	// Rewinds: a 50,000-entry path with a 5-entry abandoned attempt every
	// 5 entries (10,000 branches): the attempts share one lane.
	lines.Reset()
	lines.WriteString(sessiontest.Header + "\n")
	parent := ""
	for i := range 50_000 {
		id := fmt.Sprintf("m%d", i)
		lines.WriteString(sessiontest.User(id, parent, 2, "go on") + "\n")
		parent = id
		if i%5 == 4 {
			p := fmt.Sprintf("m%d", i-1)
			for k := range 5 {
				bid := fmt.Sprintf("x%d_%d", i, k)
				lines.WriteString(sessiontest.Asst(bid, p, 2, "an attempt") + "\n")
				p = bid
			}
		}
	}
	rewinds := sessiontest.File(b, dir, "r.jsonl", lines.String())
	for _, c := range []struct {
		name string
		load func() (*sessions.Session, error)
	}{
		{"chain100k", func() (*sessions.Session, error) { return sessions.Load(chain) }},
		{"branches10k", func() (*sessions.Session, error) { return sessions.Load(branches) }},
		{"rewinds10k", func() (*sessions.Session, error) { return sessions.Load(rewinds) }},
	} {
		s, err := c.load()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/baseline-index", func(b *testing.B) {
			for b.Loop() {
				if _, err := c.load(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/layout+svg", func(b *testing.B) {
			var n countWriter
			for b.Loop() {
				n = countWriter{}
				if _, err := New(s).Render(&n, Options{Leaf: s.Leaf(), Select: -1, Focus: -1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n.bytes)/1024, "svg-KB")
			b.ReportMetric(float64(n.elements), "elements")
		})
	}
}

// countWriter counts the bytes and the elements (opening tags) written.
type countWriter struct{ bytes, elements int }

func (c *countWriter) Write(p []byte) (int, error) {
	c.bytes += len(p)
	for k, b := range p {
		if b == '<' && k+1 < len(p) && p[k+1] != '/' {
			c.elements++
		}
	}
	return len(p), nil
}

var _ io.Writer = (*countWriter)(nil)
