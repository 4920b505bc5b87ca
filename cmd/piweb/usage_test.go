package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/usage"
)

// usageData is the usage package's fixture root (owned by usage/usage_test.go).
const usageData = "../../usage/testdata/root"

func TestUsageCommand(t *testing.T) {
	t.Setenv("COLUMNS", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the default store: a new one
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

// TestUsageStandalone: with no piweb running, the command brings the
// store up to date itself: at first from nothing, then reading only what
// pi appended since; on an unchanged root it reads no session bytes.
// A store it cannot use makes it read the files instead, and say so.
func TestUsageStandalone(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	if err := os.CopyFS(root, os.DirFS(usageData)); err != nil {
		t.Fatal(err)
	}
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "index.db")
	total := func() float64 {
		t.Helper()
		var out bytes.Buffer
		if err := usageCmd(context.Background(), &out, []string{"monthly", "--json", "--session-dir", root, "--store", dsn}); err != nil {
			t.Fatal(err)
		}
		var doc struct{ Totals struct{ TotalCost float64 } }
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		return doc.Totals.TotalCost
	}
	if got := total(); got != 32.46875 {
		t.Errorf("from an empty store: $%v, want $32.46875", got)
	}
	before := sessions.BytesRead.Load()
	if got := total(); got != 32.46875 || sessions.BytesRead.Load() != before {
		t.Errorf("again: $%v, %d session bytes read; want the same total and none", got, sessions.BytesRead.Load()-before)
	}
	// pi appends a reply to a session: counted at the next run.
	var file string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if strings.HasSuffix(p, ".jsonl") && file == "" {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(`"id":"other"`)) {
				file = p
			}
		}
		return nil
	})
	if file == "" {
		t.Fatal("the fixture's session \"other\" is not there")
	}
	leaf := lastID(t, file)
	sessiontest.Append(t, file, sessiontest.Lines(sessiontest.Asst("zz1", leaf, 3600*24*9, "one more")))
	if got := total(); got != 32.46875+0.25 {
		t.Errorf("after an append: $%v, want $%v", got, 32.46875+0.25)
	}

	// A store that cannot be reached: the files are read, and that is said.
	var warn bytes.Buffer
	src, done, err := usageSource(context.Background(), root, "postgres://piweb@127.0.0.1:1/none?connect_timeout=5", &warn)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	rows, err := src.Rows(context.Background(), usage.Filter{})
	var sum float64
	for _, r := range rows {
		sum += r.Cost
	}
	if err != nil || sum != 32.46875+0.25 || !strings.Contains(warn.String(), "reading the session files instead") {
		t.Errorf("without a store: $%v, %v; said %q", sum, err, warn.String())
	}
}

// lastID returns the id of the last entry of the session file.
func lastID(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var e struct{ ID string }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &e); err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// TestUsageCurrent: the store counts as current (the command reads it at
// once) while it holds every session file as it is, and not after a file
// grows, is touched, appears or goes, until a run brings it up to date.
func TestUsageCurrent(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	if err := os.CopyFS(root, os.DirFS(usageData)); err != nil {
		t.Fatal(err)
	}
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "index.db")
	ctx := context.Background()
	st, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	files, err := library.SessionFiles(root)
	if err != nil || len(files) < 2 {
		t.Fatalf("fixture files: %v, %v", files, err)
	}
	refresh := func() {
		t.Helper()
		if err := usageCmd(ctx, io.Discard, []string{"--session-dir", root, "--store", dsn}); err != nil {
			t.Fatal(err)
		}
	}
	if current(ctx, st, root) {
		t.Fatal("an empty store is current")
	}
	extra := filepath.Join(filepath.Dir(files[0]), "2026-01-01T00-00-00-000Z_extra.jsonl")
	for _, c := range []struct {
		name   string
		change func() error
	}{
		{"unchanged", func() error { return nil }},
		{"appended to", func() error {
			sessiontest.Append(t, files[0], sessiontest.Lines(sessiontest.Asst("zz1", lastID(t, files[0]), 3600, "more")))
			return nil
		}},
		{"touched", func() error {
			return os.Chtimes(files[1], time.Now(), time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC))
		}},
		{"a new file", func() error {
			b, err := os.ReadFile(files[1])
			if err != nil {
				return err
			}
			return os.WriteFile(extra, b, 0o644)
		}},
		{"a file gone", func() error { return os.Remove(extra) }},
	} {
		refresh()
		if !current(ctx, st, root) {
			t.Fatalf("before %s: not current after a run", c.name)
		}
		if err := c.change(); err != nil {
			t.Fatal(err)
		}
		if got, want := current(ctx, st, root), c.name == "unchanged"; got != want {
			t.Errorf("%s: current = %v, want %v", c.name, got, want)
		}
	}
}
