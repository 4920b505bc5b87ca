package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/ledger"
	"github.com/piweb/piweb/sessions"
)

// The randomised differential test: conformance/random.mjs writes random
// session files with pi's own SessionManager (and damages some), and piweb's
// `inspect` (at every entry) and `tree` (every filter, searches with
// non-ASCII words, folds, other leaves) must print exactly what pi's own
// reading and /tree print, and its session stats must equal pi's
// getSessionStats(). CI runs 100 files of seed 1; PIWEB_DIFF_N and
// PIWEB_DIFF_SEED (a number, or "random") run more. A mismatching file is
// shrunk to a few lines that still differ the same way and, with
// PIWEB_DIFF_KEEP=1, kept in testdata/random/ as a fixed case (TestRandomCases).

// difference is a deliberate difference from pi, applied to pi's side.
type difference struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
	Check  string `json:"check"` // "inspect" or "tree"
	Pi     string `json:"pi"`    // a regular expression over pi's output
	Piweb  string `json:"piweb"` // what piweb prints instead ($1 etc. refer to Pi's groups)
	// When names files the difference is about ("duplicate-ids": two lines
	// share an id); with no Pi pattern, pi's output of that check is not
	// one piweb copies on such files (the reason says why).
	When string `json:"when"`
	re   *regexp.Regexp
}

func loadDifferences(t testing.TB) []difference {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(oracle.Dir(t), "differences.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ds []difference
	if err := json.Unmarshal(b, &ds); err != nil {
		t.Fatalf("differences.json: %v", err)
	}
	for k := range ds {
		if ds[k].Reason == "" || (ds[k].Check != "inspect" && ds[k].Check != "tree") {
			t.Fatalf("differences.json: %q needs a reason and a check", ds[k].ID)
		}
		if ds[k].Pi == "" && ds[k].When == "" {
			t.Fatalf("differences.json: %q has neither a pattern nor a when", ds[k].ID)
		}
		ds[k].re = regexp.MustCompile(ds[k].Pi)
	}
	return ds
}

// skips reports whether a difference with no pattern covers check on s.
func skips(ds []difference, check string, s *sessions.Session) bool {
	for _, d := range ds {
		if d.Check == check && d.Pi == "" && d.When == "duplicate-ids" && hasDuplicateIDs(s) {
			return true
		}
	}
	return false
}

// hasDuplicateIDs reports whether two lines of s share an id.
func hasDuplicateIDs(s *sessions.Session) bool {
	seen := map[string]bool{}
	for i := range s.Entries {
		id := s.Entries[i].ID
		if id != "" && seen[id] {
			return true
		}
		seen[id] = true
	}
	return false
}

// apply rewrites pi's output of a check by the deliberate differences.
func apply(ds []difference, check, pi string) string {
	for _, d := range ds {
		if d.Check == check && d.Pi != "" {
			pi = d.re.ReplaceAllString(pi, d.Piweb)
		}
	}
	return pi
}

// piReading is batch.mjs's answer for one file.
type piReading struct {
	Error  string            `json:"error"`
	Exit   int               `json:"exit"`
	Leaves map[string]string `json:"leaves"`
	Stats  *piStats          `json:"stats"`
}

// piStats is pi's getSessionStats() of a file.
type piStats struct {
	UserMessages, AssistantMessages, ToolCalls, ToolResults, TotalMessages int
	Tokens                                                                 struct{ Input, Output, CacheRead, CacheWrite, Total float64 }
	Cost                                                                   float64
}

// piwebStats is piweb's reading of a file's totals, in pi's terms.
func piwebStats(file string) (*piStats, error) {
	s, err := sessions.Load(file)
	if err != nil {
		return nil, err
	}
	r, err := s.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	l := ledger.New()
	if err := l.Update(r); err != nil {
		return nil, err
	}
	f := l.Stats(s, s.Leaf()).File
	out := &piStats{UserMessages: f.UserMessages, AssistantMessages: f.AssistantMessages, ToolCalls: f.ToolCalls,
		ToolResults: f.ToolResults, TotalMessages: f.Messages, Cost: f.Cost}
	out.Tokens.Input, out.Tokens.Output, out.Tokens.CacheRead, out.Tokens.CacheWrite, out.Tokens.Total = f.Input, f.Output, f.CacheRead, f.CacheWrite, f.Total
	return out, nil
}

// piReadings runs batch.mjs on files, split across the machine's cores.
func piReadings(t testing.TB, files []string) []piReading {
	t.Helper()
	script := filepath.Join(oracle.Dir(t), "batch.mjs")
	return inNode[string, piReading](t, files, 50, []string{script}, nil) // 50 files a process: the answers are large
}

// piTrees runs pitree.mjs on jobs, split across the machine's cores.
func piTrees(t testing.TB, jobs []oracle.TreeJob) []string {
	t.Helper()
	script := filepath.Join(oracle.Dir(t), "pitree.mjs")
	return inNode[oracle.TreeJob, string](t, jobs, 500, []string{script, oracle.Package(t)}, []string{"HOME=" + oracle.TreeHome})
}

// inNode runs `node args…` on the items in chunks of at most per, as many
// at once as there are cores: each process reads its chunk as JSON on stdin
// and answers a JSON array with one answer per item.
func inNode[In, Out any](t testing.TB, items []In, per int, args, env []string) []Out {
	t.Helper()
	out := make([]Out, len(items))
	parts := max(min(runtime.GOMAXPROCS(0), len(items)), (len(items)+per-1)/per)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for p := range parts {
		lo, hi := p*len(items)/parts, (p+1)*len(items)/parts
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			in, _ := json.Marshal(items[lo:hi])
			cmd := exec.Command("node", args...)
			cmd.Stdin = bytes.NewReader(in)
			cmd.Env = append(os.Environ(), env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			b, err := cmd.Output()
			var got []Out
			if err == nil {
				err = json.Unmarshal(b, &got)
			}
			if err == nil && len(got) != hi-lo {
				err = fmt.Errorf("%d answers for %d items", len(got), hi-lo)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = fmt.Errorf("%s: %v\n%s", filepath.Base(args[0]), err, stderr.String())
				return
			}
			copy(out[lo:hi], got)
		})
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	return out
}

// searches are the tree searches tried on every file: pi lowercases with
// JavaScript's toLowerCase, so final sigma, dotted capital I and the like matter.
var searches = []string{"fix", "LOGIN bug", "σ", "ς", "Σ", "İ", "i̇", "ß", "STRASSE", "日本", "😀", "é", "ǅ", "ﬁ", "a b c"}

// treeJobs are the /tree views compared for one file; with every, each of
// the searches too (for the kept cases).
func treeJobs(file string, s *sessions.Session, r *rand.Rand, every bool) []oracle.TreeJob {
	var jobs []oracle.TreeJob
	if every {
		for _, q := range searches {
			jobs = append(jobs, oracle.TreeJob{File: file, Search: q, Filter: "all"})
		}
	}
	for _, f := range []string{"default", "no-tools", "user-only", "labeled-only", "all"} {
		jobs = append(jobs, oracle.TreeJob{File: file, Filter: f})
	}
	var ids []string
	for i := range s.Entries {
		if id := s.Entries[i].ID; id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return jobs
	}
	for range 2 {
		jobs = append(jobs, oracle.TreeJob{File: file, Leaf: ids[r.IntN(len(ids))], Filter: []string{"default", "all"}[r.IntN(2)]})
	}
	for range 2 {
		jobs = append(jobs, oracle.TreeJob{File: file, Search: searches[r.IntN(len(searches))], Filter: []string{"default", "all"}[r.IntN(2)]})
	}
	var fold []string
	for range 1 + r.IntN(3) {
		fold = append(fold, ids[r.IntN(len(ids))])
	}
	jobs = append(jobs, oracle.TreeJob{File: file, Fold: fold, Filter: "all"})
	return jobs
}

// piwebTree prints a job as `piweb tree` does; errors print as "error: …".
func piwebTree(j oracle.TreeJob) string {
	args := []string{"--filter", j.Filter}
	if j.Filter == "" {
		args = []string{}
	}
	if j.Leaf != "" {
		args = append(args, "--leaf", j.Leaf)
	}
	if j.Search != "" {
		args = append(args, "--search", j.Search)
	}
	if len(j.Fold) > 0 {
		args = append(args, "--fold", strings.Join(j.Fold, ","))
	}
	var out bytes.Buffer
	if err := tree(&out, append(args, j.File)); err != nil {
		return "error: " + err.Error()
	}
	return out.String()
}

// piwebInspect prints `piweb inspect --leaf leaf file`.
func piwebInspect(file, leaf string) (string, error) {
	args := []string{file}
	if leaf != "" {
		args = []string{"--leaf", leaf, file}
	}
	var out bytes.Buffer
	err := inspectCmd(&out, args)
	return out.String(), err
}

// mismatch is one check that differs.
type mismatch struct {
	file, check, detail string
}

// compareFile compares piweb with pi's reading of one file and its trees.
func compareFile(ds []difference, file string, pi piReading, jobs []oracle.TreeJob, trees []string) []mismatch {
	var out []mismatch
	switch {
	case pi.Exit == 4:
		return nil // a parent cycle: pi would loop forever, piweb copes (checked elsewhere)
	case pi.Exit != 0:
		if _, err := piwebInspect(file, ""); err == nil {
			out = append(out, mismatch{file, "inspect", "pi refuses the file (" + pi.Error + ") but piweb reads it"})
		}
		return out
	}
	leaves := make([]string, 0, len(pi.Leaves))
	for id := range pi.Leaves {
		leaves = append(leaves, id)
	}
	slices.Sort(leaves)
	for _, leaf := range leaves {
		got, err := piwebInspect(file, leaf)
		if err != nil {
			out = append(out, mismatch{file, "inspect", fmt.Sprintf("leaf %q: piweb fails: %v", leaf, err)})
			continue
		}
		if want := apply(ds, "inspect", pi.Leaves[leaf]); got != want {
			out = append(out, mismatch{file, "inspect", fmt.Sprintf("leaf %q: %s", leaf, firstDiff(want, got))})
		}
	}
	if pi.Stats != nil {
		got, err := piwebStats(file)
		switch {
		case err != nil:
			out = append(out, mismatch{file, "stats", err.Error()})
		case *got != *pi.Stats:
			out = append(out, mismatch{file, "stats", fmt.Sprintf("pi %+v\n  piweb %+v", *pi.Stats, *got)})
		}
	}
	for k, j := range jobs {
		if strings.HasPrefix(trees[k], "pi error: ") {
			continue // pi's own /tree throws on this file; piweb draws it (TestTreeSurvivesWhatPiCannot)
		}
		if got, want := piwebTree(j), apply(ds, "tree", trees[k]); got != want {
			out = append(out, mismatch{file, "tree", fmt.Sprintf("%+v: %s", j, firstDiff(want, got))})
		}
	}
	return out
}

// firstDiff shows where two texts part.
func firstDiff(pi, piweb string) string {
	a, b := strings.Split(pi, "\n"), strings.Split(piweb, "\n")
	for k := 0; k < len(a) || k < len(b); k++ {
		var x, y string
		if k < len(a) {
			x = a[k]
		}
		if k < len(b) {
			y = b[k]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  pi    %q\n  piweb %q", k+1, x, y)
		}
	}
	return "(same lines, other bytes)"
}

// checkFiles compares piweb with pi on files and returns the mismatches.
func checkFiles(t testing.TB, ds []difference, files []string, seed uint64, every bool) []mismatch {
	t.Helper()
	readings := piReadings(t, files)
	r := rand.New(rand.NewPCG(seed, 16))
	var jobs []oracle.TreeJob
	own := make([][2]int, len(files)) // each file's jobs
	for k, f := range files {
		own[k][0] = len(jobs)
		if readings[k].Exit == 0 {
			if s, err := sessions.Load(f); err == nil && !skips(ds, "tree", s) {
				jobs = append(jobs, treeJobs(f, s, r, every)...)
			}
		}
		own[k][1] = len(jobs)
	}
	trees := piTrees(t, jobs)
	var mu sync.Mutex
	var out []mismatch
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for k := range work {
				ms := compareFile(ds, files[k], readings[k], jobs[own[k][0]:own[k][1]], trees[own[k][0]:own[k][1]])
				mu.Lock()
				out = append(out, ms...)
				mu.Unlock()
			}
		})
	}
	for k := range files {
		work <- k
	}
	close(work)
	wg.Wait()
	slices.SortFunc(out, func(a, b mismatch) int { return strings.Compare(a.file+a.check, b.file+b.check) })
	return out
}

func TestRandomAgainstPi(t *testing.T) {
	dir := oracle.Dir(t)
	oracle.Package(t)
	t.Setenv("HOME", oracle.TreeHome) // pi's tree shortens paths against it
	n, seed := 100, uint64(1)
	if v := os.Getenv("PIWEB_DIFF_N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	switch v := os.Getenv("PIWEB_DIFF_SEED"); v {
	case "":
	case "random":
		seed = uint64(time.Now().UnixNano() % 1_000_000_000)
	default:
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d, %d files (PIWEB_DIFF_SEED=%d PIWEB_DIFF_N=%d replays them)", seed, n, seed, n)
	out := t.TempDir()
	cmd := exec.Command("node", filepath.Join(dir, "random.mjs"), out, "--seed", strconv.FormatUint(seed, 10), "--count", strconv.Itoa(n))
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("random.mjs: %v\n%s", err, oracle.Stderr(err))
	}
	var list []struct {
		File   string
		Seed   int
		Damage string
	}
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	files := make([]string, len(list))
	for k, f := range list {
		files[k] = f.File
	}
	ds := loadDifferences(t)
	ms := checkFiles(t, ds, files, seed, false)
	if len(ms) == 0 {
		return
	}
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.file] {
			continue
		}
		seen[m.file] = true
		t.Errorf("%s (%s): %s", filepath.Base(m.file), m.check, m.detail)
		if len(seen) > 8 {
			t.Errorf("… %d mismatches in all", len(ms))
			break
		}
	}
	if os.Getenv("PIWEB_DIFF_SHRINK") == "0" {
		return
	}
	shrunk := 0
	done := map[string]bool{}
	for _, m := range ms {
		if done[m.file] || shrunk >= 3 {
			continue
		}
		done[m.file] = true
		shrunk++
		small := shrink(t, ds, m.file, m.check, seed)
		t.Logf("shrunk %s (%s) to %d lines:\n%s", filepath.Base(m.file), m.check, strings.Count(small, "\n"), small)
		if os.Getenv("PIWEB_DIFF_KEEP") == "1" {
			name := filepath.Join("testdata", "random", fmt.Sprintf("%d-%s-%08x.jsonl", seed, m.check, crc32.ChecksumIEEE([]byte(small))))
			os.MkdirAll(filepath.Dir(name), 0o755)
			if err := os.WriteFile(name, []byte(small), 0o644); err != nil {
				t.Error(err)
			} else {
				t.Logf("kept as %s", name)
			}
		}
	}
}

// shrink reduces a mismatching file to fewer lines (then shorter strings)
// that still show a mismatch of the same check, and returns its content.
func shrink(t testing.TB, ds []difference, file, check string, seed uint64) string {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "--home-u-project--", filepath.Base(file))
	os.MkdirAll(filepath.Dir(tmp), 0o755)
	fails := func(content string) bool {
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, m := range checkFiles(t, ds, []string{tmp}, seed, false) {
			if m.check == check {
				return true
			}
		}
		return false
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	join := func(ls []string) string { return strings.Join(ls, "") }
	// Delta debugging over the lines after the header: drop chunks, halving.
	for size := len(lines) / 2; size >= 1; size /= 2 {
		for at := 1; at < len(lines); {
			end := min(at+size, len(lines))
			try := append(slices.Clone(lines[:at]), lines[end:]...)
			if fails(join(try)) {
				lines = try
			} else {
				at = end
			}
		}
	}
	return join(lines)
}

// TestRandomCases replays the files kept in testdata/random: each once
// differed from pi (lone surrogates in a name and a label, invalid UTF-8,
// JavaScript's lowercasing in searches, and what the shrinker keeps), and
// must agree with it now, under every search.
func TestRandomCases(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "random", "*.jsonl"))
	if len(files) == 0 {
		t.Skip("no kept cases")
	}
	oracle.Package(t)
	t.Setenv("HOME", oracle.TreeHome)
	abs := make([]string, len(files))
	for k, f := range files {
		abs[k], _ = filepath.Abs(f)
	}
	for _, m := range checkFiles(t, loadDifferences(t), abs, 1, true) {
		t.Errorf("%s (%s): %s", filepath.Base(m.file), m.check, m.detail)
	}
}
