package ledger

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// TestStatsAgainstPi checks the file's totals against pi's own
// getSessionStats and its by-model breakdown, on every conformance scenario.
func TestStatsAgainstPi(t *testing.T) {
	dir := oracle.Dir(t)
	checked := 0
	for _, sc := range oracle.Scenarios(t) {
		if sc.NoOracle || sc.ExpectError {
			continue
		}
		t.Run(sc.Scenario, func(t *testing.T) {
			cmd := exec.Command("node", "stats.mjs", sc.File)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("stats.mjs: %v\n%s", err, oracle.Stderr(err))
			}
			var want struct {
				Stats struct {
					UserMessages, AssistantMessages, ToolCalls, ToolResults, TotalMessages int
					Tokens                                                                 struct{ Input, Output, CacheRead, CacheWrite, Total float64 }
					Cost                                                                   float64
				}
				ByModel []struct {
					Key    string
					Cost   float64
					Tokens float64
				}
			}
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatalf("stats.mjs output: %v\n%s", err, out)
			}
			s, err := sessions.Load(sc.File)
			if err != nil {
				t.Fatal(err)
			}
			st := statsOf(t, s, s.Leaf())
			w := want.Stats
			f := st.File
			got := []float64{float64(f.UserMessages), float64(f.AssistantMessages), float64(f.ToolCalls), float64(f.ToolResults), float64(f.Messages),
				f.Input, f.Output, f.CacheRead, f.CacheWrite, f.Total, f.Cost}
			exp := []float64{float64(w.UserMessages), float64(w.AssistantMessages), float64(w.ToolCalls), float64(w.ToolResults), float64(w.TotalMessages),
				w.Tokens.Input, w.Tokens.Output, w.Tokens.CacheRead, w.Tokens.CacheWrite, w.Tokens.Total, w.Cost}
			names := strings.Fields("userMessages assistantMessages toolCalls toolResults totalMessages input output cacheRead cacheWrite total cost")
			for k := range got {
				if got[k] != exp[k] { // the same additions in the same order: exactly equal
					t.Errorf("%s = %v, pi says %v", names[k], got[k], exp[k])
				}
			}
			// pi's breakdown leaves out models with neither cost nor tokens.
			shown := map[string]Totals{}
			for k, v := range st.ByModel {
				if v.Cost > 0 || v.Total > 0 {
					shown[k] = v
				}
			}
			if len(shown) != len(want.ByModel) {
				t.Errorf("by model: %d keys, pi shows %d: %v vs %+v", len(shown), len(want.ByModel), shown, want.ByModel)
			}
			for _, m := range want.ByModel {
				g, ok := shown[m.Key]
				if !ok || g.Cost != m.Cost || g.Total != m.Tokens {
					t.Errorf("by model %q: got %+v (present %v), pi says cost %v tokens %v", m.Key, g, ok, m.Cost, m.Tokens)
				}
			}
			// Path and abandoned partition the file.
			sum := st.Path.Entries + st.Abandoned.Entries
			if sum != st.File.Entries {
				t.Errorf("path %d + abandoned %d entries != file %d", st.Path.Entries, st.Abandoned.Entries, st.File.Entries)
			}
			if d := st.Path.Cost + st.Abandoned.Cost - st.File.Cost; math.Abs(d) > 1e-9 {
				t.Errorf("path + abandoned cost differs from the file's by %v", d)
			}
			checked++
		})
	}
	if checked < 20 {
		t.Errorf("only %d scenarios checked", checked)
	}
}

// statsOf returns the stats of s at leaf through a fresh ledger.
func statsOf(t *testing.T, s *sessions.Session, leaf int) Stats {
	t.Helper()
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l := New()
	if err := l.Update(r); err != nil {
		t.Fatal(err)
	}
	return l.Stats(s, leaf)
}

// TestLedgerExtends checks that a ledger updated as a file grows agrees with
// one made from the whole file, and that its subtree sums are the sums of
// each subtree's own uses.
func TestLedgerExtends(t *testing.T) {
	full := sessiontest.String(7, 3000, sessiontest.Options{})
	lines := strings.SplitAfter(full, "\n")
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines[:1200], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sessions.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	grown := New()
	update := func() {
		r, err := s.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := grown.Update(r); err != nil {
			t.Fatal(err)
		}
	}
	update()
	for _, cut := range []int{1201, 2000, len(lines)} {
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		prev := len(s.Entries)
		f.WriteString(strings.Join(lines[prev+1:cut], ""))
		f.Close()
		if s, _, err = s.Next(); err != nil {
			t.Fatal(err)
		}
		update()
	}
	if len(s.Entries) != 3000 {
		t.Fatalf("%d entries after the appends", len(s.Entries))
	}
	for _, leaf := range []int{s.Leaf(), 10, 1500, 2999 - 7} {
		want := statsOf(t, s, leaf)
		got := grown.Stats(s, leaf)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("leaf %d: grown %+v\nfresh %+v", leaf, got.Path, want.Path)
		}
	}
	branchPoints := 0
	for i := range s.Entries {
		var want Sub
		stack := []int{i}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			u := grown.Use(v)
			want.add(Sub{Entries: 1, Tokens: u.Input + u.Output + u.CacheRead + u.CacheWrite, Cost: u.Cost})
			stack = append(stack, s.Children(v)...)
		}
		got := grown.Subtree(i)
		if got.Entries != want.Entries || got.Tokens != want.Tokens || math.Abs(got.Cost-want.Cost) > 1e-9*math.Max(1, want.Cost) {
			t.Fatalf("subtree of %d: %+v, want %+v", i, got, want)
		}
		if len(s.Children(i)) > 1 {
			branchPoints++
		}
	}
	if branchPoints == 0 {
		t.Fatal("the generated session has no branch point: the test checks nothing")
	}
	if got := grown.Subtree(s.Roots()[0]); got.Tokens == 0 || got.Cost == 0 {
		t.Errorf("the root's subtree sums nothing: %+v", got)
	}
}

// FuzzStats: any file that parses gives stats, subtree sums, file changes
// and comparisons without a panic, and the path and the rest part the file.
func FuzzStats(f *testing.F) {
	f.Add(sessiontest.String(3, 40, sessiontest.Options{}))
	f.Add(sessiontest.Lines(sessiontest.Header,
		call("a1", "", 1, "write", map[string]string{"path": "/w/a", "content": "x\n"}),
		result("r1", "a1", 2, "a1", "write", false, nil),
		call("a2", "r1", 3, "edit", map[string]any{"path": "/w/a", "edits": []map[string]string{{"oldText": "x", "newText": "y"}}}),
		result("r2", "a2", 4, "a2", "edit", false, map[string]string{"diff": "-1 x\n+1 y", "patch": "--- /w/a\n+++ /w/a\n@@ -1 +1 @@\n-x\n+y\n"})))
	f.Fuzz(func(t *testing.T, content string) {
		s, err := readtest.Parse(t, []byte(content), "f.jsonl")
		if err != nil || len(s.Entries) == 0 {
			return
		}
		r, _ := s.Open()
		l := New()
		if err := l.Update(r); err != nil {
			t.Fatal(err)
		}
		for _, leaf := range []int{s.Leaf(), 0, len(s.Entries) / 2} {
			st := l.Stats(s, leaf)
			if st.Path.Entries+st.Abandoned.Entries != st.File.Entries {
				t.Fatalf("path %d + rest %d != file %d", st.Path.Entries, st.Abandoned.Entries, st.File.Entries)
			}
			ch, err := ChangesOf(r, s.Path(leaf))
			if err != nil {
				t.Fatal(err)
			}
			ch.Patch()
			l.Files(s.Path(leaf))
			l.Subtree(leaf)
		}
		Compare(s, 0, s.Leaf())
	})
}

// TestLedgerAhead: a ledger that a later snapshot brought up to date gives
// an earlier snapshot (a page still rendering it) that snapshot's stats,
// not a panic on the entries it does not have.
func TestLedgerAhead(t *testing.T) {
	full := sessiontest.String(5, 600, sessiontest.Options{})
	lines := strings.SplitAfter(full, "\n")
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines[:300], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	early, err := sessions.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	sessiontest.Append(t, file, strings.Join(lines[300:], ""))
	late, _, err := early.Next()
	if err != nil || len(late.Entries) <= len(early.Entries) {
		t.Fatalf("Next: %v, %d entries after %d", err, len(late.Entries), len(early.Entries))
	}
	l := New()
	r, err := late.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := l.Update(r); err != nil {
		t.Fatal(err)
	}
	for _, leaf := range []int{early.Leaf(), len(early.Entries) / 2, -1} {
		want := statsOf(t, early, leaf)
		if got := l.Stats(early, leaf); !reflect.DeepEqual(want, got) {
			t.Errorf("leaf %d: %+v, want %+v", leaf, got.File, want.File)
		}
	}
}
