package oracle

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// RandomFile is one session file conformance/random.mjs wrote.
type RandomFile struct {
	File   string   `json:"file"`
	Seed   string   `json:"seed"` // "SEED/k": the file depends on nothing else
	Damage []string `json:"damage"`
}

// Random writes n random session files (numbers first … first+n-1 of seed)
// into dir with pi's own SessionManager, through conformance/random.mjs.
func Random(t testing.TB, dir, seed string, first, n int) []RandomFile {
	t.Helper()
	cmd := exec.Command("node", "random.mjs", dir, seed, strconv.Itoa(n), strconv.Itoa(first))
	cmd.Dir = Dir(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("random.mjs: %v\n%s", err, Stderr(err))
	}
	var list []RandomFile
	if err := json.Unmarshal(out, &list); err != nil || len(list) != n {
		t.Fatalf("random.mjs output: %v (%d files for %d)", err, len(list), n)
	}
	return list
}

// DiffJob is one reading to compare: `piweb inspect` (Kind "inspect") or
// `piweb tree` (Kind "tree") of a file at Leaf ("" for the file's own).
type DiffJob struct {
	Kind   string   `json:"kind"`
	Leaf   string   `json:"leaf"`
	Filter string   `json:"filter,omitempty"`
	Search string   `json:"search,omitempty"`
	Fold   []string `json:"fold,omitempty"`
}

// DiffResult is pi's side of one job: the text piweb must print, or the
// error pi met (then piweb must fail too).
type DiffResult struct {
	Text  *string `json:"text"`
	Error string  `json:"error"`
}

// DiffAnswer is pi's answer for one file: the jobs run and their results.
type DiffAnswer struct {
	Jobs    []DiffJob    `json:"jobs"`
	Results []DiffResult `json:"results"`
}

// Pi is a running conformance/pidiff.mjs: pi's own readings of files, one
// request at a time, with the deliberate differences applied.
type Pi struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// StartPi starts pidiff.mjs with HOME set to TreeHome; it stops with the test.
func StartPi(t testing.TB) *Pi {
	t.Helper()
	cmd := exec.Command("node", filepath.Join(Dir(t), "pidiff.mjs"), Package(t))
	cmd.Env = append(os.Environ(), "HOME="+TreeHome)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Pi{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	return p
}

// Ask returns pi's results for file: for jobs, or (jobs nil) for the jobs
// pidiff.mjs picks from seed.
func (p *Pi) Ask(t testing.TB, file, seed string, jobs []DiffJob) DiffAnswer {
	t.Helper()
	req, err := json.Marshal(struct {
		File string    `json:"file"`
		Seed string    `json:"seed,omitempty"`
		Jobs []DiffJob `json:"jobs,omitempty"`
	}{file, seed, jobs})
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		t.Fatalf("pidiff.mjs: %v", err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("pidiff.mjs: %v", err)
	}
	var a DiffAnswer
	if err := json.Unmarshal(line, &a); err != nil || len(a.Results) != len(a.Jobs) {
		t.Fatalf("pidiff.mjs answer: %v\n%.500s", err, line)
	}
	return a
}
