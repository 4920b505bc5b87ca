package usage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Group is how a report groups rows.
type Group string

// The groups a report can have.
const (
	Daily     Group = "daily"
	Weekly    Group = "weekly"
	Monthly   Group = "monthly"
	BySession Group = "session"
	ByProject Group = "project"
)

// ParseGroup reads a group as the CLI and the API name it: daily, weekly,
// monthly, session or project (or day, week, month, sessions, projects).
func ParseGroup(s string) (Group, error) {
	switch s {
	case "daily", "day":
		return Daily, nil
	case "weekly", "week":
		return Weekly, nil
	case "monthly", "month":
		return Monthly, nil
	case "session", "sessions":
		return BySession, nil
	case "project", "projects":
		return ByProject, nil
	}
	return "", fmt.Errorf("unknown report %q: want daily, weekly, monthly, session or project", s)
}

// Query says which rows a report sums and how it groups them.
type Query struct {
	Group Group
	// Loc is the time zone of days, weeks and months (nil: the local one).
	Loc *time.Location
	// Since and Until are the first and last days (inclusive) in Loc, as
	// YYYY-MM-DD or YYYYMMDD; "" leaves that side open.
	Since, Until string
	// WeekStart is the first day of a week (ccusage's default: Sunday).
	WeekStart time.Weekday
	// Projects, Models and Machines select rows, as Filter's lists do.
	Projects, Models, Machines []string
	// Asc lists periods and sessions oldest first (default: newest first,
	// as @ccusage/pi does), projects cheapest first (default: costliest).
	Asc bool
}

// loc returns the query's time zone.
func (q *Query) loc() *time.Location {
	if q.Loc == nil {
		return time.Local
	}
	return q.Loc
}

// ParseDay reads a day as YYYY-MM-DD or YYYYMMDD and returns its first
// instant in loc.
func ParseDay(s string, loc *time.Location) (time.Time, error) {
	layout := "2006-01-02"
	if !strings.Contains(s, "-") {
		layout = "20060102"
	}
	d, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad date %q: want YYYY-MM-DD or YYYYMMDD", s)
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc), nil
}

// Filter returns the filter that selects the query's rows.
func (q *Query) Filter() (Filter, error) {
	f := Filter{Projects: q.Projects, Models: q.Models, Machines: q.Machines}
	if q.Since != "" {
		t, err := ParseDay(q.Since, q.loc())
		if err != nil {
			return f, err
		}
		f.Since = t
	}
	if q.Until != "" {
		t, err := ParseDay(q.Until, q.loc())
		if err != nil {
			return f, err
		}
		f.Until = t.AddDate(0, 0, 1)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return f, fmt.Errorf("--since %s is after --until %s", q.Since, q.Until)
	}
	return f, nil
}

// Part is one model's or one project's share of an entry.
type Part struct {
	Name string
	Sums
	Abandoned Sums
}

// Entry is one line of a report: a day, week, month, session or project.
type Entry struct {
	// Key names it: "2006-01-02" for a day and for a week (its first
	// day), "2006-01" for a month, the session's key, the project.
	Key string
	// First and Last are the starts of its first and last buckets.
	First, Last time.Time
	Sums
	Abandoned Sums
	Errors    int64
	Aborted   int64
	Models    []Part   // by cost, highest first
	Projects  []Part   // by cost, highest first
	Machines  []string // sorted
	Sessions  []string // the keys of its sessions, sorted
}

// acc sums the rows of one entry.
type acc struct {
	e                  Entry
	models, projects   map[string]int // where each name's part is
	machines, sessions map[string]bool
}

func newAcc(key string) *acc {
	return &acc{e: Entry{Key: key}, models: map[string]int{}, projects: map[string]int{}, machines: map[string]bool{}, sessions: map[string]bool{}}
}

// add adds row r.
func (a *acc) add(r *Row) {
	e := &a.e
	if e.First.IsZero() || r.Start.Before(e.First) {
		e.First = r.Start
	}
	if r.Start.After(e.Last) {
		e.Last = r.Start
	}
	e.Sums.Add(r.Sums)
	e.Abandoned.Add(r.Abandoned)
	e.Errors += r.Errors
	e.Aborted += r.Aborted
	e.Models = addPart(e.Models, a.models, r.Model, r)
	e.Projects = addPart(e.Projects, a.projects, r.Project, r)
	if !a.machines[r.Machine] {
		a.machines[r.Machine] = true
		e.Machines = append(e.Machines, r.Machine)
	}
	if !a.sessions[r.Session] {
		a.sessions[r.Session] = true
		e.Sessions = append(e.Sessions, r.Session)
	}
}

// addPart adds r to the part named name; at says where each part is.
func addPart(parts []Part, at map[string]int, name string, r *Row) []Part {
	if i, ok := at[name]; ok {
		parts[i].Sums.Add(r.Sums)
		parts[i].Abandoned.Add(r.Abandoned)
		return parts
	}
	at[name] = len(parts)
	return append(parts, Part{Name: name, Sums: r.Sums, Abandoned: r.Abandoned})
}

// finish returns the entry, its lists in order.
func (a *acc) finish() Entry {
	e := a.e
	for _, ps := range [][]Part{e.Models, e.Projects} {
		slices.SortStableFunc(ps, func(a, b Part) int {
			return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(b.Tokens(), a.Tokens()), strings.Compare(a.Name, b.Name))
		})
	}
	slices.Sort(e.Machines)
	slices.Sort(e.Sessions)
	return e
}

// Report is a query's rows grouped and summed.
type Report struct {
	Query   Query
	Entries []Entry
	Totals  Entry
	// Sessions describes the sessions of the rows, when the source can and
	// the report shows them (by session, by project).
	Sessions map[string]Session

	cwds map[string]string // each project's cwd (ProjectCwd)
}

// Build groups and sums rows as q says. Rows outside q's filter are left out.
func Build(rows []Row, q Query) (*Report, error) {
	flt, err := q.Filter()
	if err != nil {
		return nil, err
	}
	if q.Group == "" {
		q.Group = Daily
	}
	loc := q.loc()
	rep := &Report{Query: q}
	var accs []*acc
	at := map[string]*acc{}
	total := newAcc("Total")
	var last time.Time // the start of the last row keyed by its period, and that key
	var lastKey string
	for i := range rows {
		r := &rows[i]
		if !flt.Match(r) {
			continue
		}
		var key string
		switch {
		case q.Group == BySession || q.Group == ByProject:
			key = q.key(r, loc)
		case lastKey != "" && r.Start.Equal(last): // (rows come sorted by start)
			key = lastKey
		default:
			key = q.key(r, loc)
			last, lastKey = r.Start, key
		}
		a := at[key]
		if a == nil {
			a = newAcc(key)
			at[key] = a
			accs = append(accs, a)
		}
		a.add(r)
		total.add(r)
	}
	rep.Entries = make([]Entry, len(accs))
	for i, a := range accs {
		rep.Entries[i] = a.finish()
	}
	rep.Totals = total.finish()
	slices.SortFunc(rep.Entries, func(a, b Entry) int {
		var c int
		switch q.Group {
		case BySession:
			c = cmp.Or(a.Last.Compare(b.Last), strings.Compare(a.Key, b.Key))
		case ByProject:
			c = cmp.Or(cmp.Compare(a.Cost, b.Cost), strings.Compare(b.Key, a.Key))
		default:
			c = strings.Compare(a.Key, b.Key)
		}
		if !q.Asc {
			c = -c
		}
		return c
	})
	return rep, nil
}

// key returns the key of the entry row r belongs to.
func (q *Query) key(r *Row, loc *time.Location) string {
	t := r.Start.In(loc)
	switch q.Group {
	case Weekly:
		return WeekOf(t, q.WeekStart).Format("2006-01-02")
	case Monthly:
		return t.Format("2006-01")
	case BySession:
		return r.Session
	case ByProject:
		return r.Project
	}
	return t.Format("2006-01-02")
}

// ParseWeekday reads a day of the week by its English name, in any case.
func ParseWeekday(s string) (time.Weekday, error) {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(s, d.String()) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("%q is not a day of the week (sunday, monday, …)", s)
}

// WeekOf returns the first instant of the week that holds t, in t's zone,
// weeks starting on start.
func WeekOf(t time.Time, start time.Weekday) time.Time {
	back := (int(t.Weekday()) - int(start) + 7) % 7
	return time.Date(t.Year(), t.Month(), t.Day()-back, 0, 0, 0, 0, t.Location())
}

// Make reads the query's rows from src, and, for the reports by session
// and by project, the sessions they name when src is a Directory too (the
// others show none), and builds the report.
func Make(ctx context.Context, src Source, q Query) (*Report, error) {
	flt, err := q.Filter()
	if err != nil {
		return nil, err
	}
	rows, err := src.Rows(ctx, flt)
	if err != nil {
		return nil, err
	}
	rep, err := Build(rows, q)
	if err != nil {
		return nil, err
	}
	if dir, ok := src.(Directory); ok && (q.Group == BySession || q.Group == ByProject) {
		if rep.Sessions, err = dir.Sessions(ctx, rep.Totals.Sessions); err != nil {
			return nil, err
		}
	}
	return rep, nil
}
