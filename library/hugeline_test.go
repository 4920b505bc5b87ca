package library

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/suite"
	"github.com/piweb/piweb/sessions"
)

// TestHugeLineFile: a file that is one line of 300 MB (damaged, or made by
// hand) is read in bounded memory and kept as a problem that says why; so
// is a file piweb may not read.
func TestHugeLineFile(t *testing.T) {
	suite.Need(t, suite.Large)
	root := t.TempDir()
	dir := filepath.Join(root, "--p--")
	os.MkdirAll(dir, 0o755)
	huge := filepath.Join(dir, "2026-01-01T00-00-00-000Z_huge.jsonl")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(300 << 20); err != nil { // sparse: zeros, no newline
		t.Fatal(err)
	}
	f.Close()
	secret := filepath.Join(dir, "2026-01-01T00-00-00-000Z_secret.jsonl")
	os.WriteFile(secret, []byte(`{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`+"\n"), 0o000)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	l, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 2*sessions.MaxLine+64<<20 {
		t.Errorf("reading a 300 MB line allocated %d MB", grew>>20)
	}
	p := l.Problems()
	if e := p[huge]; e == nil || !strings.Contains(e.Error(), "longer than 128 MB") {
		t.Errorf("the huge file's problem: %v", e)
	}
	if os.Geteuid() != 0 { // root reads anything
		if e := p[secret]; e == nil || !strings.Contains(e.Error(), "permission denied") {
			t.Errorf("the unreadable file's problem: %v", e)
		}
	}
}
