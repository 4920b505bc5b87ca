// Package suite keeps the slow test suites out of a plain `go test ./...`:
// the tests against pi itself (and ccusage-pi), the real-browser tests,
// the tests on large sessions, and the soak tests run only when asked for
// by their environment variable, or all of them by PIWEB_TEST_ALL=1 (as
// .ci/run does). A run that skips any says so in one line on the terminal.
package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Suites, each with the environment variable that asks for it.
const (
	Oracle  = "PIWEB_TEST_ORACLE"  // tests against pi (and ccusage-pi), installed by npm ci in conformance/
	Browser = "PIWEB_TEST_BROWSER" // tests in a real chromium
	Large   = "PIWEB_TEST_LARGE"   // tests on sessions of 100k entries and files of hundreds of MB
	Soak    = "PIWEB_TEST_SOAK"    // long runs of many clients
)

// On reports whether the suite of env is asked for.
func On(env string) bool { return os.Getenv(env) == "1" || os.Getenv("PIWEB_TEST_ALL") == "1" }

// Need skips t unless the suite of env is asked for.
func Need(t testing.TB, env string) {
	t.Helper()
	if On(env) {
		return
	}
	Announce()
	t.Skipf("a slow suite: %s=1 (or PIWEB_TEST_ALL=1) runs it", env)
}

// Announce tells the person running go test, once per run of go test,
// that slow suites were skipped and how to run them. go test shows a
// passing package's output only under -v, so the line goes to the terminal
// itself when there is one; without one (CI, where every suite runs)
// there is nobody to tell.
func Announce() {
	// Test binaries are children of the go command: its pid names the run.
	marker := filepath.Join(os.TempDir(), fmt.Sprintf("piweb-skipped-suites-%d", os.Getppid()))
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return // told already in this run
	}
	f.Close()
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer tty.Close()
	fmt.Fprintln(tty, "piweb: slow suites skipped (against pi, in chromium, large sessions, soak, PostgreSQL): PIWEB_TEST_ALL=1 PIWEB_TEST_POSTGRES=URL go test ./... runs them, as .ci/run does")
}
