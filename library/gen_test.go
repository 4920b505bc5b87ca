package library

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
)

func TestGenTree(t *testing.T) {
	dir := t.TempDir()
	files, total, err := sessiontest.Tree(dir, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	if total < 8<<20 || len(files) < 5 {
		t.Fatalf("%d files, %d bytes", len(files), total)
	}
	l, err := OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != len(files) || len(l.Problems()) != 0 {
		t.Fatalf("library holds %d of %d files; problems %v", l.Len(), len(files), l.Problems())
	}
	var sum int64
	for _, m := range l.List() {
		sum += m.Size
		if m.Diagnostics != 0 {
			t.Errorf("%s: %d diagnostics", m.File, m.Diagnostics)
		}
		if m.Project != projectDir(m.Cwd) || !strings.HasSuffix(m.File, "_"+m.ID+".jsonl") {
			t.Errorf("%s: project %s, cwd %s, id %s", m.File, m.Project, m.Cwd, m.ID)
		}
	}
	if sum != total {
		t.Errorf("sessions hold %d bytes, sessiontest.Tree wrote %d", sum, total)
	}
	// The same size gives the same tree.
	dir2 := t.TempDir()
	files2, total2, err := sessiontest.Tree(dir2, 8<<20)
	if err != nil || total2 != total || len(files2) != len(files) {
		t.Fatalf("second tree: %d files, %d bytes, %v", len(files2), total2, err)
	}
	for _, f := range files {
		a, _ := os.ReadFile(f)
		rel, _ := filepath.Rel(dir, f)
		b, _ := os.ReadFile(filepath.Join(dir2, rel))
		if string(a) != string(b) {
			t.Fatalf("%s differs between two generations", rel)
		}
	}
}

// projectDir returns the folder name pi uses for a working directory ("--home-user-x--").
func projectDir(cwd string) string {
	s := cwd
	if len(s) > 0 && (s[0] == '/' || s[0] == '\\') {
		s = s[1:] // pi removes one leading separator
	}
	s = strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(s)
	return "--" + s + "--"
}
