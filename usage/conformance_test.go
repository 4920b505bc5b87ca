package usage

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/ledger"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
)

// piTotals is what pi's getSessionStats says of a file.
type piTotals struct {
	Tokens struct {
		Input, Output, CacheRead, CacheWrite int64
	}
	Cost float64
}

// generated is what conformance/usage-gen.mjs wrote and what pi says of it.
type generated struct {
	Root  string
	Files []struct {
		File  string
		Stats piTotals
	}
	Copies []struct {
		File  string
		Stats piTotals
	}
}

// generate writes a root with pi's own SessionManager (usage-gen.mjs).
func generate(t *testing.T, extras bool) generated {
	t.Helper()
	dir := oracle.Dir(t)
	args := []string{"usage-gen.mjs", filepath.Join(t.TempDir(), "gen")}
	if extras {
		args = append(args, "--extras")
	}
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("usage-gen.mjs: %v\n%s", err, oracle.Stderr(err))
	}
	var g generated
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatalf("usage-gen.mjs output: %v\n%s", err, out)
	}
	if len(g.Files) < 20 || len(g.Copies) < 5 {
		t.Fatalf("usage-gen.mjs wrote %d files, %d of them forks: too few to test", len(g.Files), len(g.Copies))
	}
	return g
}

// closeCost reports whether two sums of the same costs, added in another
// order, agree.
func closeCost(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestAgreesWithPi checks that the rows sum, per session and in all, to
// pi's getSessionStats of each file minus what each fork copied as pi made
// it, on roots written by pi with rewinds, forks, forks of forks, clones
// and several models; with and without the usage of tool results, usage
// entries, compactions and branch summaries.
func TestAgreesWithPi(t *testing.T) {
	for _, extras := range []bool{false, true} {
		name := "assistant-only"
		if extras {
			name = "extras"
		}
		t.Run(name, func(t *testing.T) {
			g := generate(t, extras)
			lib, err := library.OpenLibrary(g.Root)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := NewFiles(lib, "m").Rows(context.Background(), Filter{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*Row{}
			var all Row
			for i := range rows {
				if got[rows[i].Session] == nil {
					got[rows[i].Session] = &Row{}
				}
				got[rows[i].Session].add(&rows[i])
				all.add(&rows[i])
			}
			want := map[string]*piTotals{}
			var total piTotals
			add := func(file string, st piTotals, sign int64) {
				key, ok := lib.Key(file)
				if !ok {
					t.Fatalf("%s is not in the library", file)
				}
				if want[key] == nil {
					want[key] = &piTotals{}
				}
				for _, w := range []*piTotals{want[key], &total} {
					w.Tokens.Input += sign * st.Tokens.Input
					w.Tokens.Output += sign * st.Tokens.Output
					w.Tokens.CacheRead += sign * st.Tokens.CacheRead
					w.Tokens.CacheWrite += sign * st.Tokens.CacheWrite
					w.Cost += float64(sign) * st.Cost
				}
			}
			for _, f := range g.Files {
				add(f.File, f.Stats, 1)
			}
			for _, c := range g.Copies {
				add(c.File, c.Stats, -1)
			}
			check := func(what string, r *Row, w *piTotals) {
				t.Helper()
				if r == nil {
					r = &Row{}
				}
				if r.Input != w.Tokens.Input || r.Output != w.Tokens.Output || r.CacheRead != w.Tokens.CacheRead || r.CacheWrite != w.Tokens.CacheWrite || !closeCost(r.Cost, w.Cost) {
					t.Errorf("%s: piweb %d/%d/%d/%d $%v, pi minus copies %d/%d/%d/%d $%v", what,
						r.Input, r.Output, r.CacheRead, r.CacheWrite, r.Cost,
						w.Tokens.Input, w.Tokens.Output, w.Tokens.CacheRead, w.Tokens.CacheWrite, w.Cost)
				}
			}
			check("all files", &all, &total)
			for key, w := range want {
				check(key, got[key], w)
			}
			if len(got) > len(want) {
				t.Errorf("rows name %d sessions, pi's files %d", len(got), len(want))
			}
			if all.Abandoned.Cost <= 0 || all.Abandoned.Cost >= all.Cost || all.Errors == 0 || all.Aborted == 0 {
				t.Errorf("the root should have abandoned usage, errors and aborts: %+v", all)
			}
			// A file outside every lineage: what is off its path is what the
			// ledger puts off the path to its leaf.
			forks := map[string]bool{}
			for _, m := range lib.List() {
				if m.ParentKey != "" {
					forks[m.Key], forks[m.ParentKey] = true, true
				}
			}
			checked := 0
			for _, m := range lib.List() {
				if forks[m.Key] {
					continue
				}
				err := lib.View(m.Key, func(s *sessions.Session) error {
					r, err := s.Open()
					if err != nil {
						return err
					}
					defer r.Close()
					l := ledger.New()
					if err := l.Update(r); err != nil {
						return err
					}
					st := l.Stats(s, s.Leaf())
					if g := got[m.Key]; g == nil || !closeCost(g.Abandoned.Cost, st.Abandoned.Cost) {
						t.Errorf("%s: abandoned %+v, the ledger says $%v", m.Key, g, st.Abandoned.Cost)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				checked++
			}
			if checked < 3 {
				t.Errorf("only %d files outside lineages", checked)
			}
		})
	}
}

// ccReport is @ccusage/pi's --json output.
type ccReport struct {
	Daily   []ccEntry `json:"daily"`
	Monthly []ccEntry `json:"monthly"`
	Totals  ccSums    `json:"totals"`
}

type ccSums struct {
	InputTokens, OutputTokens, CacheCreationTokens, CacheReadTokens int64
	TotalCost                                                       float64
}

type ccEntry struct {
	Date, Month string
	ccSums
	ModelBreakdowns []struct {
		ModelName                                                       string
		InputTokens, OutputTokens, CacheCreationTokens, CacheReadTokens int64
		Cost                                                            float64
	}
}

// TestAgreesWithCCUsage checks the daily and monthly reports against
// ccusage-pi's on a root where its guess at copies (same timestamp, same
// tokens) is right: pi wrote every entry at its own millisecond, and only
// assistant messages carry usage. Days in time zones whose offsets change
// (by an hour, by half an hour) and that are not whole hours.
func TestAgreesWithCCUsage(t *testing.T) {
	cc := oracle.CCUsage(t)
	g := generate(t, false)
	lib, err := library.OpenLibrary(g.Root)
	if err != nil {
		t.Fatal(err)
	}
	src := NewFiles(lib, "m")
	run := func(args ...string) ccReport {
		t.Helper()
		cmd := exec.Command(cc[0], append(cc[1:], append(args, "--json", "--piPath", g.Root)...)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ccusage-pi %v: %v\n%s", args, err, oracle.Stderr(err))
		}
		var r ccReport
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("ccusage-pi output: %v\n%s", err, out)
		}
		return r
	}
	for _, c := range []struct {
		name  string
		args  []string
		query Query
	}{
		{"daily-UTC", []string{"daily", "-z", "UTC"}, Query{Group: Daily, Loc: time.UTC}},
		{"daily-Berlin", []string{"daily", "-z", "Europe/Berlin"}, Query{Group: Daily, Loc: zone(t, "Europe/Berlin")}},
		{"daily-NewYork", []string{"daily", "-z", "America/New_York"}, Query{Group: Daily, Loc: zone(t, "America/New_York")}},
		{"daily-Kolkata", []string{"daily", "-z", "Asia/Kolkata"}, Query{Group: Daily, Loc: zone(t, "Asia/Kolkata")}},
		{"daily-LordHowe", []string{"daily", "-z", "Australia/Lord_Howe"}, Query{Group: Daily, Loc: zone(t, "Australia/Lord_Howe")}},
		{"daily-range", []string{"daily", "-z", "Europe/Berlin", "--since", "2025-03-29", "--until", "20250331"},
			Query{Group: Daily, Loc: zone(t, "Europe/Berlin"), Since: "2025-03-29", Until: "20250331"}},
		{"monthly-NewYork", []string{"monthly", "-z", "America/New_York"}, Query{Group: Monthly, Loc: zone(t, "America/New_York")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := run(c.args...)
			rep, err := Make(context.Background(), src, c.query)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := rep.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			var got ccReport
			if err := json.Unmarshal(b.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			wl, gl := want.Daily, got.Daily
			if c.query.Group == Monthly {
				wl, gl = want.Monthly, got.Monthly
			}
			if len(wl) < 2 || len(wl) != len(gl) {
				t.Fatalf("%d entries, ccusage-pi has %d", len(gl), len(wl))
			}
			for i := range wl {
				w, g := wl[i], gl[i]
				if w.Date != g.Date || w.Month != g.Month {
					t.Errorf("entry %d is %s%s, ccusage-pi's %s%s", i, g.Date, g.Month, w.Date, w.Month)
					continue
				}
				sameSums(t, w.Date+w.Month, g.ccSums, w.ccSums)
				// Models: ccusage-pi names them "[pi] model", piweb "provider/model".
				wm := map[string]float64{}
				for _, m := range w.ModelBreakdowns {
					wm[strings.TrimPrefix(m.ModelName, "[pi] ")] = m.Cost
				}
				gm := map[string]float64{}
				for _, m := range g.ModelBreakdowns {
					gm[shortModel(m.ModelName)] = m.Cost
				}
				if len(gm) != len(wm) {
					t.Errorf("%s: models %v, ccusage-pi's %v", w.Date+w.Month, gm, wm)
				}
				for m, cost := range wm {
					if !closeCost(gm[m], cost) {
						t.Errorf("%s %s: $%v, ccusage-pi's $%v", w.Date+w.Month, m, gm[m], cost)
					}
				}
			}
			sameSums(t, "totals", got.Totals, want.Totals)
		})
	}
}

func sameSums(t *testing.T, what string, got, want ccSums) {
	t.Helper()
	g, w := got, want
	g.TotalCost, w.TotalCost = 0, 0
	if g != w || !closeCost(got.TotalCost, want.TotalCost) {
		t.Errorf("%s: %+v, ccusage-pi's %+v", what, got, want)
	}
}
