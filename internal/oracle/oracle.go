// Package oracle finds and runs the pi package that conformance/ installs,
// for the tests that compare piweb with pi itself.
//
// Its tests run when asked for (PIWEB_TEST_ORACLE=1, see internal/suite).
// Without node or the package a test using it is skipped, unless
// PIWEB_REQUIRE_ORACLE=1 (as in CI) makes that a failure.
package oracle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/piweb/piweb/internal/suite"
)

// Dir returns the absolute path of conformance/, where oracle.mjs, gen.mjs
// and after-write.mjs live, once node and pi's package are found.
func Dir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(moduleRoot(t), "conformance")
	require(t, dir, filepath.Join(dir, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core", "session-manager.js"))
	return dir
}

// Package returns the pi-coding-agent package folder: $PIWEB_PI_PKG, else
// the one conformance/ installs.
func Package(t testing.TB) string {
	t.Helper()
	pkg := os.Getenv("PIWEB_PI_PKG")
	if pkg == "" {
		pkg = filepath.Join(moduleRoot(t), "conformance", "node_modules", "@earendil-works", "pi-coding-agent")
	}
	require(t, pkg, filepath.Join(pkg, "dist", "modes", "interactive", "components", "tree-selector.js"))
	return pkg
}

// Reading is what after-write.mjs prints: how pi's own SessionManager reads
// a copy of a file piweb wrote to.
type Reading struct {
	Version       any               `json:"version"`
	SessionID     string            `json:"sessionId"`
	Cwd           *string           `json:"cwd"`
	ParentSession *string           `json:"parentSession"`
	LeafID        *string           `json:"leafId"`
	Labels        map[string]string `json:"labels"`
	Name          *string           `json:"name"`
	Path          []string          `json:"path"`
	Context       json.RawMessage   `json:"context"`
	File          string            `json:"file"` // the copy's bytes after pi opened it
	Fork          *string           `json:"fork"`
	Export        *string           `json:"export"`
}

// AfterWrite returns a function that runs after-write.mjs on a file (args
// are passed on) and returns pi's reading of it.
func AfterWrite(t testing.TB) func(file string, args ...string) Reading {
	t.Helper()
	script := filepath.Join(Dir(t), "after-write.mjs")
	return func(file string, args ...string) Reading {
		t.Helper()
		cmd := exec.Command("node", append([]string{script, file}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("after-write.mjs %s: %v\n%s%s", file, err, out, stderr.Bytes())
		}
		var r Reading
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("after-write.mjs output: %v\n%s", err, out)
		}
		return r
	}
}

// require skips t unless the suite against pi is asked for (suite.Oracle),
// and skips (or fails) it unless node is on PATH and file exists.
func require(t testing.TB, what, file string) {
	t.Helper()
	if os.Getenv("PIWEB_REQUIRE_ORACLE") != "1" {
		suite.Need(t, suite.Oracle)
	}
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(file); err != nil {
		missing = "pi's package is not installed at " + what + " (run: cd conformance && npm ci)"
	}
	if missing == "" {
		return
	}
	if os.Getenv("PIWEB_REQUIRE_ORACLE") == "1" {
		t.Fatalf("PIWEB_REQUIRE_ORACLE=1 but %s", missing)
	}
	Announce("pi", "piweb: the tests against pi were skipped: "+missing)
	t.Skip(missing)
}

// Announce tells the person running go test, once per run of go test and
// key, that a suite was skipped. go test shows a passing package's output
// only under -v, so the line goes to the terminal itself when there is one;
// without one (CI, where the suites are required) there is nobody to tell.
func Announce(key, line string) {
	// Test binaries are children of the go command: its pid names the run.
	marker := filepath.Join(os.TempDir(), fmt.Sprintf("piweb-skipped-%s-%d", key, os.Getppid()))
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
	fmt.Fprintln(tty, line)
}

// moduleRoot returns the folder holding go.mod, above the test's package folder.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = up
	}
}

// Scenario is one file conformance/gen.mjs wrote.
type Scenario struct {
	Scenario    string `json:"scenario"`
	File        string `json:"file"`
	NoOracle    bool   `json:"noOracle"`
	ExpectError bool   `json:"expectError"`
}

// Scenarios runs conformance/gen.mjs, which writes sessions with pi's own
// SessionManager (and hand-made edge files), in a temporary folder.
func Scenarios(t testing.TB) []Scenario {
	t.Helper()
	dir := Dir(t)
	out := filepath.Join(t.TempDir(), "sessions")
	cmd := exec.Command("node", "gen.mjs", out)
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("gen.mjs: %v\n%s", err, Stderr(err))
	}
	var list []Scenario
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatalf("gen.mjs output: %v", err)
	}
	if len(list) < 20 {
		t.Fatalf("gen.mjs wrote only %d scenarios", len(list))
	}
	return list
}

// Stderr returns what a failed command wrote to stderr.
func Stderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// TreeHome is the home directory pitree.mjs runs pi's tree with (paths in
// it are shown as "~/…").
const TreeHome = "/home/u"

// TreeJob is one job for conformance/pitree.mjs.
type TreeJob struct {
	File   string   `json:"file"`
	Leaf   string   `json:"leaf,omitempty"`
	Filter string   `json:"filter,omitempty"`
	Search string   `json:"search,omitempty"`
	Fold   []string `json:"fold,omitempty"`
	Copy   bool     `json:"copy,omitempty"` // what ctrl+x copies per entry, not the tree
}

// Tree renders jobs with pi's own /tree component (TreeSelectorComponent),
// colorless, with HOME set to TreeHome, and returns one text per job.
func Tree(t testing.TB, jobs []TreeJob) []string {
	t.Helper()
	pkg := Package(t)
	in, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(Dir(t), "pitree.mjs"), pkg)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Env = append(os.Environ(), "HOME="+TreeHome)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pitree.mjs: %v\n%s", err, stderr.String())
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(jobs) {
		t.Fatalf("pitree.mjs output: %v (%d results for %d jobs)", err, len(got), len(jobs))
	}
	return got
}
