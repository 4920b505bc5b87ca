package library

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
)

// BenchmarkRefreshAppend: one line appended to the 100k-entry chain, read
// by the library (Next: a new snapshot sharing the rest).
func BenchmarkRefreshAppend(b *testing.B) {
	p, _ := sessiontest.ChainFile(b)
	file := copyToTemp(b, p)
	l := NewLibrary("")
	if _, err := l.Refresh(file); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		sessiontest.Append(b, file, sessiontest.Lines(sessiontest.User(fmt.Sprintf("ap%d", n), "", 2_000_000+n, "appended")))
		b.StartTimer()
		if _, err := l.Refresh(file); err != nil {
			b.Fatal(err)
		}
	}
}

// copyToTemp copies file into the test's temporary folder.
func copyToTemp(b *testing.B, file string) string {
	b.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(b.TempDir(), filepath.Base(file))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}
