package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// usageData is the usage package's fixture root (owned by usage/usage_test.go).
const usageData = "../../usage/testdata/root"

func TestUsageCommand(t *testing.T) {
	t.Setenv("COLUMNS", "")
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := usageCmd(context.Background(), &out, append(args, "--session-dir", usageData))
		return out.String(), err
	}
	// The table matches the package's golden one (the first report: daily).
	out, err := run("--timezone", "UTC")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "pi usage, daily (UTC)\n") || !strings.Contains(out, "│ Total      │") || !strings.Contains(out, "$32.47") {
		t.Errorf("daily table:\n%s", out)
	}
	// JSON as ccusage's: the list named for the report, and totals.
	for what, list := range map[string]string{"daily": "daily", "weekly": "weekly", "monthly": "monthly", "session": "sessions", "project": "projects"} {
		out, err := run(what, "--json", "-z", "Asia/Tokyo", "--since", "2026-01-06")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, out)
		}
		var totals struct{ TotalCost float64 }
		json.Unmarshal(doc["totals"], &totals)
		if len(doc[list]) == 0 || totals.TotalCost != 16.71875 {
			t.Errorf("%s --json: %s", what, out)
		}
	}
	// The breakdown, the compact form.
	t.Setenv("COLUMNS", "70")
	if out, err = run("monthly", "-b", "-z", "UTC"); err != nil || !strings.Contains(out, "└ gpt-5") || strings.Contains(out, "Cache") {
		t.Errorf("compact breakdown: %v\n%s", err, out)
	}
	if out, err = run("statusline", "--timezone", "UTC"); err != nil || !strings.HasSuffix(out, " last session (Was forked)\n") {
		t.Errorf("statusline: %q, %v", out, err)
	}
	if out, err = run("--since", "2030-01-01"); err != nil || !strings.HasPrefix(out, "No usage found") {
		t.Errorf("empty: %q, %v", out, err)
	}
	for _, bad := range [][]string{{"hourly"}, {"--timezone", "Mars/Olympus"}, {"--since", "yesterday"}, {"--since", "2026-02-01", "--until", "2026-01-01"},
		{"--order", "up"}, {"--start-of-week", "someday"}, {"daily", "extra"}} {
		_, err := run(bad...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}
