package usage

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/library"
)

// fixture returns the rows of testdata/root: a session, a fork of it made
// on another machine that resumes a branch rewound away in the source, a
// fork of that fork, another project with a usage entry and a
// compaction's usage, and a fork whose source is gone.
func fixture(t testing.TB) (*Files, []Row) {
	t.Helper()
	lib, err := library.OpenLibrary("testdata/root")
	if err != nil {
		t.Fatal(err)
	}
	src := NewFiles(lib, "box")
	rows, err := src.Rows(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return src, rows
}

// near reports whether two costs agree to the last few bits.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestFilesCountsEachUsageOnce(t *testing.T) {
	_, rows := fixture(t)
	var total Row
	bySession := map[string]*Row{}
	for i := range rows {
		r := &rows[i]
		if r.Start.Minute()%15 != 0 || r.Start.Second() != 0 || r.Start.Location() != time.UTC {
			t.Errorf("row start %v is not a 15-minute UTC bucket", r.Start)
		}
		if r.Machine != "box" {
			t.Errorf("machine %q", r.Machine)
		}
		total.add(r)
		if bySession[r.Session] == nil {
			bySession[r.Session] = &Row{}
		}
		bySession[r.Session].add(r)
	}
	// pi's getSessionStats of the five files sums to 45.46875; the forks
	// copied 2.5 (a1, a3) and 10.5 (a1, a3, a5) of it.
	if !near(total.Cost, 32.46875) {
		t.Errorf("cost %v, want 32.46875", total.Cost)
	}
	want := Sums{Turns: 9, Input: 1084, Output: 365, CacheRead: 800, CacheWrite: 40}
	got := total.Sums
	got.Cost = 0
	if got != want {
		t.Errorf("sums %+v, want %+v", got, want)
	}
	// Only a2b is off every path: a3, rewound away in the source, goes on in the forks.
	if !near(total.Abandoned.Cost, 0.25) || total.Abandoned.Turns != 1 {
		t.Errorf("abandoned %+v, want a2b's 0.25 in 1 turn", total.Abandoned)
	}
	if total.Errors != 1 || total.Aborted != 1 {
		t.Errorf("errors %d aborted %d, want 1 and 1", total.Errors, total.Aborted)
	}
	for key, cost := range map[string]float64{"orig": 7.75, "fork": 8, "fork2": 16, "other": 0.21875, "orphan": 0.5} {
		if r := bySession[key]; r == nil || !near(r.Cost, cost) {
			t.Errorf("session %s: %+v, want cost %v", key, r, cost)
		}
	}
}

func TestFilesModelsAndBuckets(t *testing.T) {
	_, rows := fixture(t)
	type k struct{ start, model string }
	got := map[k]float64{}
	for _, r := range rows {
		if r.Session == "other" {
			got[k{r.Start.Format("01-02T15:04"), r.Model}] += r.Cost
		}
	}
	want := map[k]float64{
		{"01-07T23:45", "anthropic/claude-sonnet-4-5"}: 0.125,  // the assistant message
		{"01-08T00:00", "anthropic/claude-sonnet-4-5"}: 0.0625, // the usage entry, under its own model
		{"01-08T00:00", ToolsModel}:                    0.03125,
	}
	if len(got) != len(want) {
		t.Errorf("rows of other: %v, want %v", got, want)
	}
	for kk, c := range want {
		if !near(got[kk], c) {
			t.Errorf("%v: %v, want %v", kk, got[kk], c)
		}
	}
}

func TestFilesFilter(t *testing.T) {
	src, _ := fixture(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		f    Filter
		cost float64
	}{
		{"project", Filter{Projects: []string{"--home-u-cli--"}}, 0.71875},
		{"model", Filter{Models: []string{"openai/gpt-5"}}, 24},
		{"machine", Filter{Machines: []string{"elsewhere"}}, 0},
		{"session", Filter{Sessions: []string{"fork2"}}, 16},
		{"since", Filter{Since: time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC)}, 16.71875},
		{"until", Filter{Until: time.Date(2026, 1, 5, 0, 15, 0, 0, time.UTC)}, 15.75}, // the first bucket: a1 to a5
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, err := src.Rows(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			cost := 0.0
			for i := range rows {
				if !c.f.Match(&rows[i]) {
					t.Errorf("row %+v does not match the filter", rows[i])
				}
				cost += rows[i].Cost
			}
			if !near(cost, c.cost) {
				t.Errorf("cost %v, want %v", cost, c.cost)
			}
		})
	}
}

// TestFilesLineageByPath checks copies found through a parentSession that
// names the source's path, as pi writes it, and a source read again after
// it grew.
func TestFilesLineageByPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "--w--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "2026-01-01T00-00-00-000Z_s1.jsonl")
	if err := os.WriteFile(file, []byte(sessiontest.Lines(sessiontest.Header,
		sessiontest.User("u1", "", 1, "hi"), sessiontest.Asst("a1", "u1", 2, "one"),
		sessiontest.User("u2", "a1", 3, "more"), sessiontest.Asst("a2", "u2", 4, "two"))), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := library.OpenLibrary(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	forked, err := lib.Fork("s1", "a1") // piweb's createBranchedSession: parentSession is file
	if err != nil {
		t.Fatal(err)
	}
	src := NewFiles(lib, "m")
	cost := func() (all float64, per map[string]float64) {
		t.Helper()
		rows, err := src.Rows(context.Background(), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		per = map[string]float64{}
		for _, r := range rows {
			all += r.Cost
			per[r.Session] += r.Cost
		}
		return all, per
	}
	if all, per := cost(); all != 0.5 || per["s1"] != 0.5 || per[forked.Key] != 0 {
		t.Errorf("after the fork: %v %v, want 0.5, all in s1", all, per)
	}
	// The fork goes on; so does the source.
	sessiontest.Append(t, forked.File, sessiontest.Lines(sessiontest.User("f1", "a1", 10, "fork"), sessiontest.Asst("f2", "f1", 11, "forked")))
	sessiontest.Append(t, file, sessiontest.Lines(sessiontest.Asst("a3", "a2", 12, "three")))
	for _, f := range []string{forked.File, file} {
		if _, err := lib.Refresh(f); err != nil {
			t.Fatal(err)
		}
	}
	if all, per := cost(); all != 1 || per["s1"] != 0.75 || per[forked.Key] != 0.25 {
		t.Errorf("after appends: %v %v, want 1: 0.75 in s1, 0.25 in the fork", all, per)
	}
	// Without its source, the fork's copies count in the fork.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	lib.Remove(file)
	if all, per := cost(); all != 0.5 || per[forked.Key] != 0.5 {
		t.Errorf("without the source: %v %v, want 0.5 in the fork", all, per)
	}
}

// TestFilesLineageLoop checks that parentSession headers naming each other
// end the walk, and that an entry both hold counts once.
func TestFilesLineageLoop(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "--w--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a_s1.jsonl"), filepath.Join(dir, "b_s2.jsonl")
	head := func(id, parent string) string {
		return `{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","parentSession":"` + parent + `"}`
	}
	body := []string{sessiontest.User("u1", "", 1, "hi"), sessiontest.Asst("a1", "u1", 2, "one")}
	os.WriteFile(a, []byte(sessiontest.Lines(append([]string{head("s1", b)}, body...)...)), 0o644)
	os.WriteFile(b, []byte(sessiontest.Lines(append([]string{head("s2", a)}, body...)...)), 0o644)
	lib, err := library.OpenLibrary(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := NewFiles(lib, "m").Rows(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// The loop is cut at a (the smaller path): a1 counts there, once.
	cost := map[string]float64{}
	for _, r := range rows {
		cost[r.Session] += r.Cost
	}
	if len(cost) != 1 || cost["s1"] != 0.25 {
		t.Errorf("costs by session %v, want a1's 0.25 in s1 alone", cost)
	}
}

func TestParseGroup(t *testing.T) {
	for in, want := range map[string]Group{"day": Daily, "daily": Daily, "week": Weekly, "monthly": Monthly, "sessions": BySession, "project": ByProject} {
		if g, err := ParseGroup(in); err != nil || g != want {
			t.Errorf("ParseGroup(%q) = %q, %v", in, g, err)
		}
	}
	if _, err := ParseGroup("hourly"); err == nil || !strings.Contains(err.Error(), "hourly") {
		t.Errorf("ParseGroup(hourly): %v", err)
	}
}

// TestFilesFollowsAppends checks that a source kept across appends (read
// incrementally) and across a rewrite gives what a fresh one gives.
func TestFilesFollowsAppends(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "--w--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "2026-01-01T00-00-00-000Z_s1.jsonl")
	stop := func(id, parent string, sec int, reason string) string {
		return strings.Replace(sessiontest.Asst(id, parent, sec, id), `"stopReason":"stop"`, `"stopReason":"`+reason+`"`, 1)
	}
	os.WriteFile(file, []byte(sessiontest.Lines(sessiontest.Header, sessiontest.User("u1", "", 1, "hi"), stop("a1", "u1", 2, "error"))), 0o644)
	lib, err := library.OpenLibrary(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	kept := NewFiles(lib, "m")
	same := func(step string) Row {
		t.Helper()
		sum := func(src *Files) Row {
			rows, err := src.Rows(context.Background(), Filter{})
			if err != nil {
				t.Fatal(err)
			}
			var all Row
			for i := range rows {
				all.add(&rows[i])
			}
			return all
		}
		got, want := sum(kept), sum(NewFiles(lib, "m"))
		if got != want {
			t.Errorf("%s: kept %+v, fresh %+v", step, got, want)
		}
		return got
	}
	same("first")
	for k, lines := range [][]string{
		{stop("a2", "a1", 3, "aborted"), sessiontest.User("u2", "a2", 4, "again")},
		{stop("a3", "u2", 5, "error"), sessiontest.Asst("a4", "a1", 6, "rewound")}, // a2 and a3 are now off the path
	} {
		sessiontest.Append(t, file, sessiontest.Lines(lines...))
		if _, err := lib.Refresh(file); err != nil {
			t.Fatal(err)
		}
		same(fmt.Sprint("append ", k))
	}
	r := same("appends")
	if r.Turns != 4 || r.Errors != 2 || r.Aborted != 1 || r.Abandoned.Turns != 2 || r.Cost != 1 {
		t.Errorf("after the appends: %+v", r)
	}
	// Rewritten shorter: read again from the start.
	os.WriteFile(file, []byte(sessiontest.Lines(sessiontest.Header, sessiontest.User("u1", "", 1, "hi"), stop("a1", "u1", 2, "aborted"))), 0o644)
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
	if r := same("rewritten"); r.Turns != 1 || r.Errors != 0 || r.Aborted != 1 {
		t.Errorf("after the rewrite: %+v", r)
	}
}

// TestFilesConcurrent reads rows from several goroutines while a session
// grows (run it with -race): every read sees a whole number of replies.
func TestFilesConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "--w--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "2026-01-01T00-00-00-000Z_s1.jsonl")
	os.WriteFile(file, []byte(sessiontest.Lines(sessiontest.Header, sessiontest.User("u0", "", 1, "hi"))), 0o644)
	lib, err := library.OpenLibrary(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	src := NewFiles(lib, "m")
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				rows, err := src.Rows(context.Background(), Filter{})
				if err != nil {
					errs <- err
					return
				}
				var all Row
				for i := range rows {
					all.add(&rows[i])
				}
				if all.Cost != float64(all.Turns)*0.25 {
					errs <- fmt.Errorf("%d turns cost %v", all.Turns, all.Cost)
					return
				}
			}
		}()
	}
	parent := "u0"
	for k := range 50 {
		id := fmt.Sprintf("a%d", k)
		sessiontest.Append(t, file, sessiontest.Lines(sessiontest.Asst(id, parent, 10+k, "reply")))
		parent = id
		if _, err := lib.Refresh(file); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rows, err := src.Rows(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Turns != 50 {
		t.Errorf("rows %+v, want one of 50 turns", rows)
	}
}

// add adds o's sums and counts to r.
func (r *Row) add(o *Row) {
	r.Sums.Add(o.Sums)
	r.Abandoned.Add(o.Abandoned)
	r.Errors += o.Errors
	r.Aborted += o.Aborted
}
