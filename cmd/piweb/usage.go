package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // --timezone works where the system has no zone files

	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/usage"
)

// usageCmd prints what sessions cost: a report (daily, weekly, monthly,
// session, project) as a table or as @ccusage/pi's JSON, or the status line.
func usageCmd(ctx context.Context, w io.Writer, args []string) error {
	what := "daily"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		what, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("usage", flag.ContinueOnError)
	since := fs.String("since", "", "first `DATE` to count (YYYY-MM-DD or YYYYMMDD), in the time zone")
	until := fs.String("until", "", "last `DATE` to count (YYYY-MM-DD or YYYYMMDD), in the time zone")
	tz := fs.String("timezone", "", "time `ZONE` of days, weeks and months, e.g. Europe/Berlin or UTC (default: the local one)")
	fs.StringVar(tz, "z", "", "short for --timezone")
	breakdown := fs.Bool("breakdown", false, "a line per model under each row of the table")
	fs.BoolVar(breakdown, "b", false, "short for --breakdown")
	asJSON := fs.Bool("json", false, "print JSON shaped as @ccusage/pi's")
	dir := fs.String("session-dir", "", "sessions root `DIR` (default: as pi finds it)")
	order := fs.String("order", "desc", "`ORDER` of the rows: desc (newest or costliest first) or asc")
	weekStart := fs.String("start-of-week", "sunday", "first `DAY` of a week")
	project := fs.String("project", "", "count only these projects (session folders, comma-separated `NAMES`)")
	model := fs.String("model", "", "count only these models (provider/model, comma-separated `NAMES`)")
	machine := fs.String("machine", "", "count only these machines (comma-separated `NAMES`)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: piweb usage [daily|weekly|monthly|session|project] [--since DATE] [--until DATE] [--timezone TZ] [--breakdown] [--json] [--session-dir DIR]\n       piweb usage statusline [--timezone TZ] [--session-dir DIR]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError{fmt.Sprintf("unexpected %q", fs.Arg(0))}
	}
	loc := time.Local
	if *tz != "" {
		l, err := time.LoadLocation(*tz)
		if err != nil {
			return usageError{fmt.Sprintf("--timezone %s: unknown time zone", *tz)}
		}
		loc = l
	}
	ws, err := usage.ParseWeekday(*weekStart)
	if err != nil {
		return usageError{"--start-of-week: " + err.Error()}
	}
	if *order != "asc" && *order != "desc" {
		return usageError{fmt.Sprintf("--order %s: want asc or desc", *order)}
	}
	var group usage.Group
	if what != "statusline" {
		g, err := usage.ParseGroup(what)
		if err != nil {
			fs.Usage()
			return usageError{err.Error()}
		}
		group = g
	}
	q := usage.Query{Group: group, Loc: loc, Since: *since, Until: *until, WeekStart: ws, Asc: *order == "asc",
		Projects: list(*project), Models: list(*model), Machines: list(*machine)}
	if _, err := q.Filter(); err != nil {
		return usageError{err.Error()}
	}

	root := *dir
	if root == "" {
		root = sessions.DefaultRoot()
	} else if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return usageError{fmt.Sprintf("--session-dir %s: no such folder", root)}
	}
	lib, err := sessions.OpenLibrary(root)
	if err != nil {
		return fmt.Errorf("reading sessions under %s: %w", root, err)
	}
	src := usage.NewFiles(lib, machineName())
	if what == "statusline" {
		st, err := usage.MakeStatus(ctx, src, time.Now(), loc, ws)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, st)
		return err
	}
	rep, err := usage.Make(ctx, src, q)
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(w)
	}
	if len(rep.Entries) == 0 {
		_, err := fmt.Fprintf(w, "No usage found under %s.\n", root)
		return err
	}
	return rep.WriteTable(w, usage.TableOptions{Width: termWidth(w), Breakdown: *breakdown})
}

// list splits a comma-separated flag value.
func list(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// machineName names this machine in the rows it reads.
func machineName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "local"
}

// termWidth returns the width of the terminal w writes to: $COLUMNS,
// else the terminal's own, else 0 (not a terminal: the wide table).
func termWidth(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok {
		return ttyWidth(f)
	}
	return 0
}
