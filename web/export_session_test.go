package web

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// wholeFixtures are the odd files of sessions/testdata (fuzz seeds of
// FuzzLoad, whose single value is the file) shared whole in the golden
// test: cycles, orphans, duplicate and missing ids, lines that are not
// objects, old versions.
var wholeFixtures = []string{
	"cycle2", "cycle3", "cycle-dup", "self-parent", "orphans", "duplicate-ids", "no-ids", "non-objects",
	"v1", "v2-hook", "compaction", "edits", "labels-name", "labels-non-string", "invalid-utf8", "unterminated",
}

// wholeRoot is the demo's sessions root with sessions/testdata/branches.jsonl
// and the wholeFixtures beside them, and the keys of every session in it,
// sorted.
func wholeRoot(t testing.TB) (string, []string) {
	t.Helper()
	root := demoRoot(t)
	dir := filepath.Join(root, "--work-fixtures--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	b, err := os.ReadFile(filepath.Join("..", "sessions", "testdata", "branches.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	files["branches"] = b
	for _, name := range wholeFixtures {
		files[name] = fuzzSeed(t, filepath.Join("..", "sessions", "testdata", "fuzz", "FuzzLoad", name))
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00-000Z_"+name+".jsonl"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	for _, m := range openLib(t, root).List() {
		keys = append(keys, m.Key)
	}
	slices.Sort(keys)
	return root, keys
}

// fuzzSeed reads the []byte value of a Go fuzz corpus file.
func fuzzSeed(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if lit, ok := strings.CutPrefix(sc.Text(), "[]byte("); ok {
			s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return []byte(s)
		}
	}
	t.Fatalf("%s holds no []byte value", path)
	return nil
}

// wholeRedactions are the redactions the whole-session tests share with.
var wholeRedactions = []string{"", "secrets", "thinking,tools", "secrets,thinking,tools"}

// TestExportWholeGolden shares every demo and fixture session whole, with
// each set of redactions, and compares the pages with the ones piweb
// made when it built them in memory: the markup of the demo's main
// session in testdata/export-session.golden.html, and a SHA-256 of every
// page in testdata/export-session.sha256. Run with -update to rewrite them.
func TestExportWholeGolden(t *testing.T) {
	root, keys := wholeRoot(t)
	srv := newServer(t, openLib(t, root), nil).Handler()
	style := regexp.MustCompile(`(?s)<style>.*?</style>`)
	var sums strings.Builder
	for _, key := range keys {
		for _, red := range wholeRedactions {
			rec := get(t, srv, "/api/sessions/"+url.PathEscape(key)+"/export?format=html-session&redact="+red)
			if rec.Code != 200 {
				fmt.Fprintf(&sums, "%s %q status %d\n", key, red, rec.Code)
				continue
			}
			page := style.ReplaceAllString(rec.Body.String(), "<style>/* css/export.css */</style>")
			fmt.Fprintf(&sums, "%s %q %x\n", key, red, sha256.Sum256([]byte(page)))
			if key == mainID && red == "" {
				checkGolden(t, "export-session.golden.html", lines(page))
			}
		}
	}
	checkGolden(t, "export-session.sha256", sums.String())
}

// checkGolden compares got with testdata/name, rewriting it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./web -run TestExportWholeGolden -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs; run go test ./web -run TestExportWholeGolden -update and review the diff\n%s", path, firstDiff(got, string(want)))
	}
}
