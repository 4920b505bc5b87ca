package usage

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n%s", name, got)
	}
}

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// costs returns each entry's key and cost.
func costs(rep *Report) map[string]float64 {
	out := map[string]float64{}
	for _, e := range rep.Entries {
		out[e.Key] = e.Cost
	}
	return out
}

func sameCosts(t *testing.T, got, want map[string]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("entries %v, want %v", got, want)
		return
	}
	for k, c := range want {
		if g, ok := got[k]; !ok || !near(g, c) {
			t.Errorf("%s: %v, want %v (all: %v)", k, g, c, got)
		}
	}
}

func TestDailyInZones(t *testing.T) {
	_, rows := fixture(t)
	for _, c := range []struct {
		zone string
		want map[string]float64
	}{
		{"UTC", map[string]float64{"2026-01-05": 15.75, "2026-01-06": 16, "2026-01-07": 0.125, "2026-01-08": 0.59375}},
		{"America/New_York", map[string]float64{"2026-01-04": 15.75, "2026-01-06": 16, "2026-01-07": 0.21875, "2026-01-08": 0.5}},
		{"Asia/Tokyo", map[string]float64{"2026-01-05": 15.75, "2026-01-06": 16, "2026-01-08": 0.71875}},
	} {
		t.Run(c.zone, func(t *testing.T) {
			rep, err := Build(rows, Query{Group: Daily, Loc: zone(t, c.zone)})
			if err != nil {
				t.Fatal(err)
			}
			sameCosts(t, costs(rep), c.want)
			for i := 1; i < len(rep.Entries); i++ {
				if rep.Entries[i-1].Key <= rep.Entries[i].Key {
					t.Errorf("days not newest first: %s before %s", rep.Entries[i-1].Key, rep.Entries[i].Key)
				}
			}
		})
	}
}

// TestDaysAcrossDST checks days and ranges in zones whose offset changes:
// each row lands on the day its bucket starts in, on both sides of a
// change, and a one-day range holds that day's 23 or 25 hours.
func TestDaysAcrossDST(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, c := range []struct {
		zone   string
		starts map[string]string // UTC bucket start → local day
		day    string            // a day whose range must hold exactly its rows
		hours  float64
	}{
		{"Europe/Berlin", map[string]string{ // summer time from 2025-03-30 02:00: a 23-hour day
			"2025-03-29T22:45:00Z": "2025-03-29", "2025-03-29T23:00:00Z": "2025-03-30",
			"2025-03-30T21:45:00Z": "2025-03-30", "2025-03-30T22:00:00Z": "2025-03-31",
		}, "2025-03-30", 23},
		{"America/New_York", map[string]string{ // back to standard time on 2025-11-02 02:00: 25 hours
			"2025-11-02T03:45:00Z": "2025-11-01", "2025-11-02T04:00:00Z": "2025-11-02",
			"2025-11-03T04:45:00Z": "2025-11-02", "2025-11-03T05:00:00Z": "2025-11-03",
		}, "2025-11-02", 25},
		{"Australia/Lord_Howe", map[string]string{ // from +11 to +10:30 on 2025-04-06: a half-hour change
			"2025-04-05T12:45:00Z": "2025-04-05", "2025-04-05T13:00:00Z": "2025-04-06",
			"2025-04-06T13:15:00Z": "2025-04-06", "2025-04-06T13:30:00Z": "2025-04-07",
		}, "2025-04-06", 24.5},
		{"Asia/Kathmandu", map[string]string{ // +5:45 all year
			"2024-12-31T18:00:00Z": "2024-12-31", "2024-12-31T18:15:00Z": "2025-01-01",
			"2025-01-01T18:00:00Z": "2025-01-01", "2025-01-01T18:15:00Z": "2025-01-02",
		}, "2025-01-01", 24},
	} {
		t.Run(c.zone, func(t *testing.T) {
			loc := zone(t, c.zone)
			var rows []Row
			want := map[string]float64{}
			for s, day := range c.starts {
				rows = append(rows, Row{Start: at(s), Session: "s", Model: "m", Sums: Sums{Turns: 1, Cost: 1}})
				want[day]++
			}
			rep, err := Build(rows, Query{Group: Daily, Loc: loc})
			if err != nil {
				t.Fatal(err)
			}
			sameCosts(t, costs(rep), want)
			q := Query{Group: Daily, Loc: loc, Since: c.day, Until: strings.ReplaceAll(c.day, "-", "")}
			f, err := q.Filter()
			if err != nil {
				t.Fatal(err)
			}
			if h := f.Until.Sub(f.Since).Hours(); h != c.hours {
				t.Errorf("%s lasts %v hours, want %v", c.day, h, c.hours)
			}
			rep, err = Build(rows, q)
			if err != nil {
				t.Fatal(err)
			}
			sameCosts(t, costs(rep), map[string]float64{c.day: 2})
		})
	}
}

func TestGroups(t *testing.T) {
	_, rows := fixture(t)
	utc := time.UTC
	for _, c := range []struct {
		name string
		q    Query
		want map[string]float64
	}{
		// 2026-01-04 is a Sunday, ccusage's first day of a week.
		{"weekly", Query{Group: Weekly, Loc: utc}, map[string]float64{"2026-01-04": 32.46875}},
		{"weekly-monday", Query{Group: Weekly, Loc: utc, WeekStart: time.Monday}, map[string]float64{"2026-01-05": 32.46875}},
		{"weekly-ny-monday", Query{Group: Weekly, Loc: zone(t, "America/New_York"), WeekStart: time.Monday}, map[string]float64{"2025-12-29": 15.75, "2026-01-05": 16.71875}},
		{"monthly", Query{Group: Monthly, Loc: utc}, map[string]float64{"2026-01": 32.46875}},
		{"monthly-ny", Query{Group: Monthly, Loc: zone(t, "America/New_York")}, map[string]float64{"2026-01": 32.46875}},
		{"session", Query{Group: BySession, Loc: utc}, map[string]float64{"orig": 7.75, "fork": 8, "fork2": 16, "other": 0.21875, "orphan": 0.5}},
		{"project", Query{Group: ByProject, Loc: utc}, map[string]float64{"--home-u-shop--": 31.75, "--home-u-cli--": 0.71875}},
		{"since", Query{Group: Daily, Loc: utc, Since: "2026-01-06", Until: "20260107"}, map[string]float64{"2026-01-06": 16, "2026-01-07": 0.125}},
		{"model", Query{Group: BySession, Loc: utc, Models: []string{"openai/gpt-5"}}, map[string]float64{"fork": 8, "fork2": 16}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Build(rows, c.q)
			if err != nil {
				t.Fatal(err)
			}
			sameCosts(t, costs(rep), c.want)
			sum := 0.0
			for _, e := range rep.Entries {
				sum += e.Cost
			}
			if !near(sum, rep.Totals.Cost) {
				t.Errorf("entries sum to %v, totals say %v", sum, rep.Totals.Cost)
			}
		})
	}
}

func TestQueryErrors(t *testing.T) {
	for _, q := range []Query{{Since: "2026-13-01"}, {Until: "yesterday"}, {Since: "2026-01-05", Until: "2026-01-04"}} {
		if _, err := q.Filter(); err == nil {
			t.Errorf("%+v: no error", q)
		}
	}
}

// report returns the fixture's report for q, with its sessions described.
func report(t *testing.T, q Query) *Report {
	t.Helper()
	lib, _ := fixture(t)
	rep, err := Make(context.Background(), lib, q)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestJSONGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		q    Query
	}{
		{"daily", Query{Group: Daily, Loc: time.UTC}},
		{"weekly", Query{Group: Weekly, Loc: time.UTC}},
		{"monthly", Query{Group: Monthly, Loc: time.UTC}},
		{"session", Query{Group: BySession, Loc: time.UTC}},
		{"project", Query{Group: ByProject, Loc: time.UTC}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := report(t, c.q).WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".golden.json", b.Bytes())
			// ccusage's fields are there, with its names.
			var doc map[string]any
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			list, ok := doc[c.q.Group.listName()].([]any)
			if !ok || len(list) == 0 {
				t.Fatalf("no %s list in %s", c.q.Group.listName(), b.Bytes())
			}
			keys := map[Group]string{Daily: "date", Weekly: "week", Monthly: "month", BySession: "sessionId", ByProject: "project"}
			for _, k := range []string{keys[c.q.Group], "source", "inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens", "totalCost", "modelsUsed", "modelBreakdowns"} {
				if _, ok := list[0].(map[string]any)[k]; !ok {
					t.Errorf("entry has no %q", k)
				}
			}
			if _, ok := doc["totals"].(map[string]any)["totalCost"]; !ok {
				t.Error("totals have no totalCost")
			}
		})
	}
}

func TestTableGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		q    Query
		o    TableOptions
	}{
		{"daily-wide", Query{Group: Daily, Loc: time.UTC}, TableOptions{Width: 160}},
		{"daily-breakdown", Query{Group: Daily, Loc: time.UTC}, TableOptions{Width: 160, Breakdown: true}},
		{"daily-compact", Query{Group: Daily, Loc: time.UTC}, TableOptions{Width: 80}},
		{"daily-narrow", Query{Group: Daily, Loc: time.UTC}, TableOptions{Width: 50}},
		{"session", Query{Group: BySession, Loc: time.UTC}, TableOptions{Width: 160}},
		{"project", Query{Group: ByProject, Loc: time.UTC}, TableOptions{Width: 80}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := report(t, c.q).WriteTable(&b, c.o); err != nil {
				t.Fatal(err)
			}
			golden(t, "table-"+c.name+".golden.txt", b.Bytes())
			for i, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
				if n := len([]rune(l)); c.o.Width > 0 && n > c.o.Width {
					t.Errorf("line %d is %d columns wide, the terminal %d", i+1, n, c.o.Width)
				}
			}
			if !strings.Contains(b.String(), "│ Total") {
				t.Error("no totals row")
			}
		})
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                    "plain",
		"\x1b[31mred\x1b[0m":       "[31mred [0m",
		"two\nlines\r\n":           "two lines",
		"tab\tand\u202eevil\u2066": "tab and evil",
		"bad \xff byte":            "bad \uFFFD byte",
		"\u009b31m c1 control":     "31m c1 control",
		"  leading and   inner   ": "leading and inner",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormats(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	for c, want := range map[float64]string{0: "$0.00", 0.004: "$0.00", 0.005: "$0.01", 1234.5: "$1,234.50", -2.25: "-$2.25"} {
		if got := Dollars(c); got != want {
			t.Errorf("Dollars(%v) = %q, want %q", c, got, want)
		}
	}
}

func TestStatus(t *testing.T) {
	src, _ := fixture(t)
	ny := zone(t, "America/New_York")
	// Thursday 2026-01-08, 08:00 in New York: the week began on Sunday the 4th.
	now := time.Date(2026, 1, 8, 8, 0, 0, 0, ny)
	st, err := MakeStatus(context.Background(), src, now, ny, time.Sunday)
	if err != nil {
		t.Fatal(err)
	}
	if !near(st.Today, 0.5) || !near(st.Week, 32.46875) || st.Newest.Key != "orphan" || !near(st.NewestCost, 0.5) {
		t.Errorf("status %+v", st)
	}
	if got, want := st.String(), "$0.50 today · $32.47 this week · $0.50 last session (Was forked)"; got != want {
		t.Errorf("status line %q, want %q", got, want)
	}
	// A week later nothing is new: the last session is still named.
	st, err = MakeStatus(context.Background(), src, now.AddDate(0, 0, 14), ny, time.Sunday)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.String(), "$0.00 today · $0.00 this week · $0.50 last session (Was forked)"; got != want {
		t.Errorf("status line %q, want %q", got, want)
	}
}

func TestParseWeekday(t *testing.T) {
	for in, want := range map[string]time.Weekday{"sunday": time.Sunday, "Monday": time.Monday, "SATURDAY": time.Saturday} {
		if d, err := ParseWeekday(in); err != nil || d != want {
			t.Errorf("ParseWeekday(%q) = %v, %v", in, d, err)
		}
	}
	if _, err := ParseWeekday("someday"); err == nil {
		t.Error("someday is a day")
	}
}
