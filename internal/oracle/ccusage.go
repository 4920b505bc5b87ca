package oracle

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// CCUsage returns the command line that runs @ccusage/pi (ccusage-pi), as
// conformance/ installs it next to pi. Without node or the package the
// test is skipped, unless PIWEB_REQUIRE_ORACLE=1 makes that a failure.
func CCUsage(t testing.TB) []string {
	t.Helper()
	bin := filepath.Join(moduleRoot(t), "conformance", "node_modules", "@ccusage", "pi", "dist", "index.js")
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(bin); err != nil {
		missing = "@ccusage/pi is not installed in conformance/ (run: cd conformance && npm ci)"
	}
	if missing != "" {
		if os.Getenv("PIWEB_REQUIRE_ORACLE") == "1" {
			t.Fatalf("PIWEB_REQUIRE_ORACLE=1 but %s", missing)
		}
		Announce("ccusage", "piweb: the tests against ccusage-pi were skipped: "+missing)
		t.Skip(missing)
	}
	return []string{"node", bin}
}
