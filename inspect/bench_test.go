package inspect

import (
	"io"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// BenchmarkInspect: `piweb inspect`'s work in process (load the file,
// write pi's reading to io.Discard) on two 100k-entry chains: "small", 636-
// byte entries as mkroot.py writes them (63 MB, the per-entry costs weigh
// most), and "generated", sessiontest's chain (65 MB in larger, varied
// entries). cmd/piweb's BenchmarkInspectCommand times the command itself
// and its memory, beside pi's.
func BenchmarkInspect(b *testing.B) {
	for _, c := range []struct {
		name string
		file func(testing.TB) (string, int64)
	}{{"small", sessiontest.SmallChainFile}, {"generated", sessiontest.ChainFile}} {
		p, size := c.file(b)
		b.Run(c.name+"/load", func(b *testing.B) {
			b.SetBytes(size)
			defer sessiontest.ReportCPU(b)()
			for b.Loop() {
				if _, err := sessions.Load(p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/load+write", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			defer sessiontest.ReportCPU(b)()
			for b.Loop() {
				s, err := sessions.Load(p)
				if err != nil {
					b.Fatal(err)
				}
				if err := Write(io.Discard, s, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
