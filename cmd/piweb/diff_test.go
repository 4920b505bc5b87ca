package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/piweb/piweb/internal/oracle"
)

// The randomised differential test: random session files written by pi's own
// SessionManager (conformance/random.mjs), some damaged, each read by
// `piweb inspect` and `piweb tree` at several leaves, with every filter,
// searches and folds, and by pi itself (conformance/pidiff.mjs, which also
// applies the deliberate differences of conformance/deliberate.json to pi's
// side). Texts must be equal byte for byte. A file that differs is shrunk
// to a few lines that still differ the same way.
//
// PIWEB_DIFF_N (default 100) files from PIWEB_DIFF_SEED (default "ci";
// "random" picks one and prints it), numbered from PIWEB_DIFF_FIRST (default
// 0): file k of a seed is the same on every run, so PIWEB_DIFF_FIRST=k
// PIWEB_DIFF_N=1 replays one. PIWEB_DIFF_KEEP=1 writes each shrunk file to
// testdata/diff as a fixed case.

const diffCases = "testdata/diff"

// diffSettings reads the environment.
func diffSettings(t *testing.T) (seed string, first, n int) {
	seed, n = "ci", 100
	if v := os.Getenv("PIWEB_DIFF_FIRST"); v != "" {
		var err error
		if first, err = strconv.Atoi(v); err != nil || first < 0 {
			t.Fatalf("PIWEB_DIFF_FIRST=%q", v)
		}
	}
	if v := os.Getenv("PIWEB_DIFF_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("PIWEB_DIFF_N=%q", v)
		}
	}
	if v := os.Getenv("PIWEB_DIFF_SEED"); v == "random" {
		seed = strconv.FormatInt(time.Now().UnixNano(), 36)
	} else if v != "" {
		seed = v
	}
	return seed, first, n
}

// diffMismatch is one job on which piweb and pi differ.
type diffMismatch struct {
	file  oracle.RandomFile
	job   oracle.DiffJob
	pi    oracle.DiffResult
	piweb oracle.DiffResult
	sig   string
}

// TestRandomAgainstPi is the randomised differential test (see above).
func TestRandomAgainstPi(t *testing.T) {
	oracle.Package(t) // skips without pi
	seed, first, n := diffSettings(t)
	fmt.Fprintf(os.Stderr, "piweb diff: %d random files from %d, seed %q (replay: PIWEB_DIFF_SEED=%s PIWEB_DIFF_FIRST=%d PIWEB_DIFF_N=%d go test -run TestRandomAgainstPi ./cmd/piweb/)\n", n, first, seed, seed, first, n)
	t.Setenv("HOME", oracle.TreeHome)
	dir := t.TempDir()
	workers := max(1, min(runtime.GOMAXPROCS(0), n))

	// Write the files, a share per worker, in parallel.
	files := make([][]oracle.RandomFile, workers)
	var wg sync.WaitGroup
	for w := range workers {
		from, to := first+w*n/workers, first+(w+1)*n/workers
		wg.Go(func() { files[w] = oracle.Random(t, dir, seed, from, to-from) })
	}
	wg.Wait()

	// Compare, one pi process per worker.
	var mu sync.Mutex
	var bad []diffMismatch
	jobs := 0
	for w := range workers {
		wg.Go(func() {
			pi := oracle.StartPi(t)
			for _, f := range files[w] {
				a := pi.Ask(t, f.File, f.Seed, nil)
				var here []diffMismatch
				for k, job := range a.Jobs {
					got := piwebRun(f.File, job)
					if sig := diffSig(job, a.Results[k], got); sig != "" {
						here = append(here, diffMismatch{f, job, a.Results[k], got, sig})
					}
				}
				mu.Lock()
				jobs += len(a.Jobs)
				bad = append(bad, here...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("%d files, %d readings compared, %d differ", n, jobs, len(bad))
	if len(bad) == 0 {
		return
	}

	// Report each kind of difference once, shrunk.
	pi := oracle.StartPi(t)
	seen := map[string]bool{}
	files2 := map[string]bool{}
	for _, m := range bad {
		files2[m.file.Seed] = true
	}
	for _, m := range bad {
		if seen[m.sig] {
			continue
		}
		seen[m.sig] = true
		orig, err := os.ReadFile(m.file.File)
		if err != nil {
			t.Fatal(err)
		}
		small := shrink(t, pi, orig, m.job, m.sig)
		where := ""
		if os.Getenv("PIWEB_DIFF_KEEP") == "1" {
			where = " (kept as " + keepCase(t, small, m.job, m.sig) + ")"
		}
		t.Errorf("%s differs from pi (%s, file %s, damage %v, %s):\n%sshrunk from %d to %d lines%s:\n%s\n%s",
			m.sig, jobArgs(m.job), m.file.Seed, m.file.Damage, m.file.File, diffText(m.pi, m.piweb),
			lineCount(orig), lineCount(small), where, small, describe(pi, t, small, m.job))
	}
	t.Errorf("%d readings of %d files differ from pi, in %d ways (seed %q)", len(bad), len(files2), len(seen), seed)
}

// TestDiffCases runs the fixed cases the shrinker kept (testdata/diff: a
// file and the job that once differed).
func TestDiffCases(t *testing.T) {
	cases, _ := filepath.Glob(filepath.Join(diffCases, "*.jsonl"))
	if len(cases) == 0 {
		t.Skip("no cases in " + diffCases)
	}
	oracle.Package(t) // skips without pi
	t.Setenv("HOME", oracle.TreeHome)
	pi := oracle.StartPi(t)
	for _, file := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".jsonl"), func(t *testing.T) {
			b, err := os.ReadFile(strings.TrimSuffix(file, ".jsonl") + ".job.json")
			if err != nil {
				t.Fatal(err)
			}
			var jobs []oracle.DiffJob
			if err := json.Unmarshal(b, &jobs); err != nil {
				t.Fatal(err)
			}
			abs, _ := filepath.Abs(file)
			a := pi.Ask(t, abs, "", jobs)
			for k, job := range jobs {
				got := piwebRun(abs, job)
				if sig := diffSig(job, a.Results[k], got); sig != "" {
					t.Errorf("%s (%s):\n%s", sig, jobArgs(job), diffText(a.Results[k], got))
				}
			}
		})
	}
}

// jobArgs is the piweb command line of a job, without the file.
func jobArgs(job oracle.DiffJob) string {
	args := []string{job.Kind}
	if job.Leaf != "" {
		args = append(args, "--leaf", job.Leaf)
	}
	if job.Kind == "tree" {
		args = append(args, "--filter", job.Filter)
		if job.Search != "" {
			args = append(args, "--search", strconv.Quote(job.Search))
		}
		if len(job.Fold) > 0 {
			args = append(args, "--fold", strings.Join(job.Fold, ","))
		}
	}
	return "piweb " + strings.Join(args, " ")
}

// piwebRun runs `piweb inspect` or `piweb tree` on file for job.
func piwebRun(file string, job oracle.DiffJob) oracle.DiffResult {
	var args []string
	if job.Leaf != "" {
		args = append(args, "--leaf", job.Leaf)
	}
	var out bytes.Buffer
	var err error
	switch job.Kind {
	case "inspect":
		err = inspect(&out, append(args, file))
	case "tree":
		args = append(args, "--filter", job.Filter, "--search", job.Search, "--fold", strings.Join(job.Fold, ","))
		err = tree(&out, append(args, file))
	default:
		err = fmt.Errorf("unknown job kind %q", job.Kind)
	}
	if err != nil {
		return oracle.DiffResult{Error: err.Error()}
	}
	s := out.String()
	return oracle.DiffResult{Text: &s}
}

// diffSig names how got differs from pi's want ("" when it does not):
// the job's kind and the first differing field (inspect) or whether rows
// are missing or differ (tree). The shrinker keeps the name.
func diffSig(job oracle.DiffJob, want, got oracle.DiffResult) string {
	switch {
	case want.Text == nil && got.Text == nil:
		return ""
	case want.Text == nil:
		return job.Kind + ": pi fails, piweb reads"
	case got.Text == nil:
		return job.Kind + ": piweb fails, pi reads"
	case *want.Text == *got.Text:
		return ""
	}
	w, g := strings.Split(*want.Text, "\n"), strings.Split(*got.Text, "\n")
	k := 0
	for k < len(w) && k < len(g) && w[k] == g[k] {
		k++
	}
	if job.Kind == "tree" {
		if len(w) != len(g) {
			return "tree: rows"
		}
		return "tree: row text (" + diffClass(w[k], g[k]) + ")"
	}
	if k >= len(w) || k >= len(g) {
		return "inspect: length"
	}
	// The key on the first differing line, e.g. "label", "text", "content".
	key := strings.TrimSpace(w[k])
	if i := strings.Index(key, `":`); strings.HasPrefix(key, `"`) && i > 0 {
		key = key[1:i]
	} else {
		key = "value"
	}
	return "inspect: " + key + " (" + diffClass(w[k], g[k]) + ")"
}

// loneEscape matches JSON.stringify's escape of a lone surrogate.
var loneEscape = regexp.MustCompile(`^\\u[dD][89abcdefABCDEF][0-9a-fA-F]{2}`)

// diffClass says what differs first between pi's line w and piweb's g: a
// lone surrogate pi escapes, a U+FFFD on one side only, or other text.
func diffClass(w, g string) string {
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	for i > 0 && i < len(w) && !utf8.RuneStart(w[i]) {
		i--
	}
	wr, _ := utf8.DecodeRuneInString(w[i:])
	gr, _ := utf8.DecodeRuneInString(g[min(i, len(g)):])
	switch {
	case loneEscape.MatchString(w[i:]):
		return "lone surrogate"
	case (wr == utf8.RuneError) != (gr == utf8.RuneError) || strings.Count(w, "\uFFFD") != strings.Count(g, "\uFFFD"):
		return "U+FFFD"
	case w[i:] == "" || g[min(i, len(g)):] == "":
		return "length"
	}
	return "text"
}

// diffText shows the first differing lines of two results.
func diffText(want, got oracle.DiffResult) string {
	if want.Text == nil || got.Text == nil {
		return fmt.Sprintf("pi: %s\npiweb: %s", resultShort(want), resultShort(got))
	}
	w, g := strings.Split(*want.Text, "\n"), strings.Split(*got.Text, "\n")
	var b strings.Builder
	shown := 0
	for k := 0; k < max(len(w), len(g)) && shown < 4; k++ {
		var wl, gl string
		if k < len(w) {
			wl = w[k]
		}
		if k < len(g) {
			gl = g[k]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d\n  pi    %+q\n  piweb %+q\n", k+1, wl, gl)
			shown++
		}
	}
	return b.String()
}

func resultShort(r oracle.DiffResult) string {
	if r.Text == nil {
		return "error: " + r.Error
	}
	s := *r.Text
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strconv.Quote(s)
}

// describe shows pi's and piweb's results for job on the file content b.
func describe(pi *oracle.Pi, t *testing.T, b []byte, job oracle.DiffJob) string {
	file := filepath.Join(t.TempDir(), "case.jsonl")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	a := pi.Ask(t, file, "", []oracle.DiffJob{job})
	return diffText(a.Results[0], piwebRun(file, job))
}

// keepCase writes a shrunk file and its job to testdata/diff, named after
// the difference; returns the file's name.
func keepCase(t *testing.T, b []byte, job oracle.DiffJob, sig string) string {
	sum := sha256.Sum256(b)
	slug := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(strings.ReplaceAll(sig, "U+FFFD", "fffd")), "-"), "-")
	name := filepath.Join(diffCases, slug+"-"+hex.EncodeToString(sum[:3]))
	if err := os.MkdirAll(diffCases, 0o755); err != nil {
		t.Fatal(err)
	}
	j, _ := json.MarshalIndent([]oracle.DiffJob{job}, "", "  ")
	if err := os.WriteFile(name+".jsonl", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name+".job.json", append(j, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return name + ".jsonl"
}

// lineCount counts lines, a last one without "\n" included.
func lineCount(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
