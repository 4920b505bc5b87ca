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
	branches := lines.String()
	for _, c := range []struct {
		name string
		load func() (*sessions.Session, error)
	}{
		{"chain100k", func() (*sessions.Session, error) { return sessions.Load(chain) }},
		{"branches10k", func() (*sessions.Session, error) { return sessions.Parse(strings.NewReader(branches), "b.jsonl") }},
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
				n = 0
				if _, err := New(s).Render(&n, Options{Leaf: s.Leaf(), Select: -1, Focus: -1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/1024, "svg-KB")
		})
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)
