package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/internal/sessiontest"
)

// BenchmarkInspectCommand times `piweb inspect FILE` as a user runs it (a
// process of its own, output to /dev/null) beside pi's reading of the same
// file (conformance/oracle.mjs, which reads a copy; when the oracle is
// installed), on two 100k-entry chains: "small", 636-byte entries as
// /work/shared/bench/mkroot.py writes them (63 MB), and "generated",
// sessiontest's chain (65 MB in larger entries). Besides the wall time it
// reports the process's CPU time (cpu-ms/op) and its peak resident memory
// (maxrss-MB, the largest of the runs).
func BenchmarkInspectCommand(b *testing.B) {
	bin := piwebBinary(b)
	for _, c := range []struct {
		name string
		file func(testing.TB) (string, int64)
	}{{"small", sessiontest.SmallChainFile}, {"generated", sessiontest.ChainFile}} {
		file, _ := c.file(b)
		b.Run(c.name+"/piweb", func(b *testing.B) {
			runCommand(b, exec.Command(bin, "inspect", file))
		})
		b.Run(c.name+"/pi", func(b *testing.B) {
			cmd := exec.Command("node", "oracle.mjs", file)
			cmd.Dir = oracle.Dir(b)
			runCommand(b, cmd)
		})
	}
}

// runCommand runs a copy of cmd b.N times with its output to /dev/null and
// reports its CPU time and peak memory.
func runCommand(b *testing.B, cmd *exec.Cmd) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	var cpu time.Duration
	var maxrss int64
	for b.Loop() {
		var stderr bytes.Buffer
		c := exec.Command(cmd.Path, cmd.Args[1:]...)
		c.Dir, c.Stdout, c.Stderr = cmd.Dir, null, &stderr
		if err := c.Run(); err != nil {
			b.Fatalf("%v: %v\n%s", c.Args, err, stderr.Bytes())
		}
		cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxrss = max(maxrss, ru.Maxrss) // KiB on Linux
		}
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	if maxrss > 0 {
		b.ReportMetric(float64(maxrss)/1024, "maxrss-MB")
	}
}

// piwebBinary builds piweb in a temporary folder.
func piwebBinary(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "piweb")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
