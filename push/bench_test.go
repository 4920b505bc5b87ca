package push

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/internal/storetest"
	"github.com/piweb/piweb/store"
)

// benchStore returns a store in a new schema of the test server, or skips.
func benchStore(b *testing.B) (Table, string) {
	b.Helper()
	dsn, ok := storetest.Postgres(b)
	if !ok {
		b.Skip("no PostgreSQL: set PIWEB_TEST_POSTGRES")
	}
	st, err := store.Open(ctx, dsn, store.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return Table{DB: st}, dsn
}

// BenchmarkPush pushes the benchmark tree (sessiontest.BenchTree: 1 GiB,
// or $PIWEB_BENCH_BYTES) whole, as a new machine each time: its MB/s is
// the push's throughput.
func BenchmarkPush(b *testing.B) {
	st, _ := benchStore(b)
	root, _, total := sessiontest.BenchTree(b)
	b.SetBytes(total)
	n := 0
	for b.Loop() {
		n++
		p, err := New(st, Options{Root: root, Machine: fmt.Sprintf("bench-%d", n), Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		if s, err := p.Push(ctx); err != nil || s.Bytes != total {
			b.Fatalf("pushed %d of %d bytes: %v", s.Bytes, total, err)
		}
	}
}

// BenchmarkPushAppend is a push of a 1 KB append to one file of the
// benchmark tree, already pushed: "once" is `piweb push` (every file
// looked at, the one that grew sent), "watch" is `piweb push --watch` (the
// file fsnotify named).
func BenchmarkPushAppend(b *testing.B) {
	st, _ := benchStore(b)
	tree, files, _ := sessiontest.BenchTree(b)
	// A root of links to the tree's files, and one file of its own to append to.
	root := b.TempDir()
	for _, f := range files[1:] {
		rel, _ := filepath.Rel(tree, f)
		os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755)
		if err := os.Link(f, filepath.Join(root, rel)); err != nil {
			b.Skipf("cannot link the tree's files: %v", err)
		}
	}
	rel, _ := filepath.Rel(tree, files[0])
	grown := filepath.Join(root, rel)
	data, _ := os.ReadFile(files[0])
	os.WriteFile(grown, data, 0o644)
	p, err := New(st, Options{Root: root, Machine: "append", Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := p.Push(ctx); err != nil {
		b.Fatal(err)
	}
	// A user message of 1 KB with its newline.
	line := sessiontest.User("ffff0000", "", 1, "")
	line = sessiontest.User("ffff0000", "", 1, fmt.Sprintf("%0*d", 1024-len(line)-1, 0))
	for _, mode := range []string{"once", "watch"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				appendTo(b, grown, line+"\n")
				b.StartTimer()
				var s Stats
				var err error
				if mode == "once" {
					s, err = p.Push(ctx)
				} else {
					s, err = p.PushFile(ctx, grown)
				}
				if err != nil || s.Bytes != int64(len(line)+1) {
					b.Fatalf("pushed %+v: %v", s, err)
				}
			}
		})
	}
}

// BenchmarkMachines pushes the benchmark tree from 1 and from 10
// machines at once, each a process of its own (this test binary, run
// again) with a root of its own (links to the tree's files): "10" within
// twice the time of "1" is the goal. It reports the CPU the pushing
// processes took (push-cpu-s) and what the rest of the machine took
// meanwhile (server-cpu-s: PostgreSQL, on a machine otherwise quiet),
// which is what one server would spend on machines pushing from elsewhere.
func BenchmarkMachines(b *testing.B) {
	_, dsn := benchStore(b)
	tree, files, total := sessiontest.BenchTree(b)
	var roots []string
	for m := range 10 {
		root := filepath.Join(b.TempDir(), strconv.Itoa(m))
		for _, f := range files {
			rel, _ := filepath.Rel(tree, f)
			os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755)
			if err := os.Link(f, filepath.Join(root, rel)); err != nil {
				b.Skipf("cannot link the tree's files: %v", err)
			}
		}
		roots = append(roots, root)
	}
	run := 0
	for _, n := range []int{1, 10} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(total * int64(n))
			var pushCPU time.Duration
			busy0 := machineBusy(b)
			for b.Loop() {
				run++
				var mu sync.Mutex
				var wg sync.WaitGroup
				errs := make(chan error, n)
				for m := range n {
					wg.Go(func() {
						cmd := exec.Command(os.Args[0], "-test.run=^TestPushProcess$")
						cmd.Env = append(os.Environ(), "PIWEB_PUSH_ROOT="+roots[m], "PIWEB_PUSH_TO="+dsn,
							fmt.Sprintf("PIWEB_PUSH_MACHINE=run%d-m%d", run, m))
						if out, err := cmd.CombinedOutput(); err != nil {
							errs <- fmt.Errorf("%v: %s", err, out)
						}
						mu.Lock()
						pushCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
						mu.Unlock()
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
			}
			busy := machineBusy(b) - busy0
			b.ReportMetric(pushCPU.Seconds()/float64(b.N), "push-cpu-s/op")
			b.ReportMetric(max(busy-pushCPU, 0).Seconds()/float64(b.N), "server-cpu-s/op")
		})
	}
}

// TestPushProcess is a machine pushing, for BenchmarkMachines: it runs
// only when PIWEB_PUSH_ROOT names the root.
func TestPushProcess(t *testing.T) {
	root := os.Getenv("PIWEB_PUSH_ROOT")
	if root == "" {
		t.Skip("a helper process of BenchmarkMachines")
	}
	st, err := store.Open(ctx, os.Getenv("PIWEB_PUSH_TO"), store.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := New(Table{DB: st}, Options{Root: root, Machine: os.Getenv("PIWEB_PUSH_MACHINE"), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if s, err := p.Push(ctx); err != nil || len(s.Failed) > 0 {
		t.Fatalf("%+v %v", s, err)
	}
	t.Logf("pushed in %v", time.Since(began))
}

// machineBusy returns the CPU time the whole machine has spent busy since
// it started (/proc/stat: every state but idle and iowait).
func machineBusy(b *testing.B) time.Duration {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Skipf("no /proc/stat: %v", err)
	}
	fields := strings.Fields(strings.SplitN(string(raw), "\n", 2)[0])
	var ticks int64
	for i, f := range fields[1:] {
		if n, err := strconv.ParseInt(f, 10, 64); err == nil && i != 3 && i != 4 && i < 8 {
			ticks += n // user nice system (idle iowait) irq softirq steal
		}
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
