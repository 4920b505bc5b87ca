package web

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGolden compares key fragments with testdata/*.golden.html; run with
// -update to rewrite them, then read the diff.
func TestGolden(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	tests := []struct {
		file   string
		target string
	}{
		{"list.golden.html", "/"},
		{"list-by-name.golden.html", "/?sort=name"},
		{"tree.golden.html", "/s/" + mainID + "/rows"},
		{"tree-all.golden.html", "/s/" + mainID + "/rows?filter=all&target=4a76b713"},
		{"tree-folded.golden.html", "/s/" + mainID + "/rows?fold=08fbeb03&leaf=09b043aa"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			rec := get(t, srv, tt.target, "HX-Request", "true")
			if rec.Code != 200 {
				t.Fatalf("status %d\n%s", rec.Code, rec.Body)
			}
			checkGolden(t, tt.file, lines(rec.Body.String()))
		})
	}
}

// checkGolden compares got with testdata/name, rewriting the file with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./web -run %s -update to create it)", err, top)
	}
	if got != string(want) {
		t.Errorf("%s differs; run go test ./web -run %s -update and review the diff\n%s", path, top, firstDiff(got, string(want)))
	}
}

// lines puts each row, table row, section and heading on its own line, for readable diffs.
func lines(s string) string {
	return regexp.MustCompile(`<(div|tr|section|h2|p|button|table) `).ReplaceAllString(s, "\n$0") + "\n"
}

func firstDiff(a, b string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			lo, hi := max(0, i-80), min(len(a), i+80)
			return "got:  …" + a[lo:hi] + "…\nwant: …" + b[lo:min(len(b), hi)] + "…"
		}
	}
	return "one is a prefix of the other"
}
