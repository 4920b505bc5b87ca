package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListUnreadable: files under the root that are not readable sessions
// are listed on the sessions page with why, not silently skipped.
func TestListUnreadable(t *testing.T) {
	root := demoRoot(t)
	dir := filepath.Join(root, "--home-dev-weather--")
	bad := filepath.Join(dir, "2026-05-14T00-00-00-000Z_broken.jsonl")
	os.WriteFile(bad, []byte("this is <not> json\n"), 0o644)
	lib := openLib(t, root)
	h := newServer(t, lib, nil).Handler()
	body := get(t, h, "/").Body.String()
	for _, want := range []string{`href="#unreadable">1 unreadable file</a>`, `id="unreadable"`,
		"--home-dev-weather--/2026-05-14T00-00-00-000Z_broken.jsonl", "not a pi session file"} {
		if !strings.Contains(body, want) {
			t.Errorf("the sessions page lacks %q", want)
		}
	}
}
