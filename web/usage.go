package web

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/usage"
	"github.com/piweb/piweb/usage/chart"
	"github.com/piweb/piweb/views"
)

// The usage page (/usage) and its API (/api/usage): what sessions cost, by
// day, model, project and session, from the rows of a usage.Source.

// newUsageSource returns the rows of the usage page when Options.Usage
// names none: read from the library's files.
func newUsageSource(lib Library) usage.Source {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "local"
	}
	return usage.NewFiles(lib, host)
}

// usageParams are the usage page's range, filters and toggles, as its URL
// holds them.
type usageParams struct {
	rng          string // 7d, 30d, 90d, all or custom
	since, until string // YYYY-MM-DD: the range, for custom
	tz           string
	loc          *time.Location
	projects     []string
	models       []string
	machines     []string
	by           string // model or project
	heat         string // cost or turns
}

// usageQuery reads the page's or the API's parameters.
func usageQuery(c echo.Context) (usageParams, error) {
	q := c.QueryParams()
	p := usageParams{rng: q.Get("range"), since: q.Get("since"), until: q.Get("until"), tz: q.Get("tz"), by: q.Get("by"), heat: q.Get("heat"),
		projects: nonEmpty(q["project"]), models: nonEmpty(q["model"]), machines: nonEmpty(q["machine"])}
	p.loc = time.Local
	if p.tz != "" {
		loc, err := time.LoadLocation(p.tz)
		if err != nil || strings.HasPrefix(p.tz, "/") || strings.Contains(p.tz, "..") {
			return p, errBadRequest("There is no time zone called "+strconv.Quote(p.tz)+".", err)
		}
		p.loc = loc
	}
	switch p.rng {
	case "7d", "30d", "90d", "all", "custom":
	case "":
		p.rng = "30d"
		if p.since != "" || p.until != "" {
			p.rng = "custom"
		}
	default:
		return p, errBadRequest("The range must be 7d, 30d, 90d, all or custom.", nil)
	}
	for _, d := range []string{p.since, p.until} {
		if d != "" {
			if _, err := usage.ParseDay(d, p.loc); err != nil {
				return p, errBadRequest("Dates are written YYYY-MM-DD.", err)
			}
		}
	}
	if p.by != "project" {
		p.by = "model"
	}
	if p.heat != "turns" {
		p.heat = "cost"
	}
	return p, nil
}

// nonEmpty drops empty values.
func nonEmpty(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// url returns the page's URL with these parameters and the changes
// (name, value pairs) made.
func (p usageParams) url(changes ...string) string {
	v := url.Values{}
	v.Set("range", p.rng)
	if p.rng == "custom" {
		v.Set("since", p.since)
		v.Set("until", p.until)
	}
	if p.tz != "" {
		v.Set("tz", p.tz)
	}
	for k, list := range map[string][]string{"project": p.projects, "model": p.models, "machine": p.machines} {
		for _, x := range list {
			v.Add(k, x)
		}
	}
	v.Set("by", p.by)
	v.Set("heat", p.heat)
	for i := 0; i+1 < len(changes); i += 2 {
		v.Set(changes[i], changes[i+1])
	}
	for k, vs := range v {
		if len(vs) == 1 && vs[0] == "" {
			delete(v, k)
		}
	}
	return "/usage?" + v.Encode()
}

// usagePage answers GET /usage: the page, or for htmx its body.
func (s *Server) usagePage(c echo.Context) error {
	p, err := usageQuery(c)
	if err != nil {
		return err
	}
	v, err := s.usageView(c.Request().Context(), p, views.Now())
	if err != nil {
		return err
	}
	if isHTMX(c) {
		return respond(c, views.UsageBody(v))
	}
	return respond(c, views.UsagePage(v))
}

// settleWait bounds how long the usage stream waits for a source that
// follows the files with a lag (the store) to hold a change.
const settleWait = 5 * time.Second

// usageEvents streams "changed" whenever a session changes and the rows
// hold the change (a source that lags, the store, is waited for; a store
// that falls behind for longer is not): the page then draws itself again.
func (s *Server) usageEvents(c echo.Context) error {
	return s.follow(c, func(*stream) error { return nil }, func(w *stream, ev library.Change) error {
		if ev.Key == "" || ev.Kind == library.KindError {
			return nil
		}
		if st, ok := s.usage.(usage.Settler); ok {
			ctx, cancel := context.WithTimeout(c.Request().Context(), settleWait)
			_ = st.Settle(ctx) // (behind: the page draws what the store holds, and again at the next change)
			cancel()
		}
		return w.send("changed", strconv.FormatUint(ev.Gen, 10))
	})
}

// apiUsage answers GET /api/usage?group=day|week|month|session|project&since=&until=&tz=
// (and project=, model=, machine=, order=asc, weekStart=monday): the report
// as `piweb usage --json` prints it.
func (s *Server) apiUsage(c echo.Context) error {
	p, err := usageQuery(c)
	if err != nil {
		return err
	}
	group, err := usage.ParseGroup(cmp.Or(c.QueryParam("group"), "day"))
	if err != nil {
		return errBadRequest("group must be day, week, month, session or project.", err)
	}
	q := usage.Query{Group: group, Loc: p.loc, Since: p.since, Until: p.until, Projects: p.projects, Models: p.models, Machines: p.machines,
		Asc: c.QueryParam("order") == "asc"}
	if ws := c.QueryParam("weekStart"); ws != "" {
		d, err := usage.ParseWeekday(ws)
		if err != nil {
			return errBadRequest("weekStart must be a day of the week.", err)
		}
		q.WeekStart = d
	}
	if _, err := q.Filter(); err != nil {
		return errBadRequest("since must not be after until.", err)
	}
	rep, err := usage.Make(c.Request().Context(), s.usage, q)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSONBlob(http.StatusOK, b.Bytes())
}

// slotter puts times into the bars of a chart: days, or weeks or months
// when days would be too many to draw.
type slotter struct {
	loc   *time.Location
	unit  string // day, week or month
	first time.Time
	keys  map[string]int
	names []string // long, for tooltips
	short []string // for the tables
}

// maxSlots is the most bars a chart draws: past it, bars are weeks, then months.
const maxSlots = 400

// newSlotter returns the slots from the day of since to the day of until.
func newSlotter(since, until time.Time, loc *time.Location) *slotter {
	s := &slotter{loc: loc, unit: "day", keys: map[string]int{}}
	days := int(until.Sub(since).Hours()/24) + 1
	switch {
	case days > maxSlots*7:
		s.unit = "month"
		since = time.Date(since.Year(), since.Month(), 1, 0, 0, 0, 0, loc)
	case days > maxSlots:
		s.unit = "week"
		since = usage.WeekOf(since, time.Monday)
	}
	s.first = since
	years := since.Year() != until.Year()
	for t := since; !t.After(until); t = s.next(t) {
		s.keys[s.key(t)] = len(s.names)
		s.names = append(s.names, s.name(t))
		s.short = append(s.short, s.shortName(t, years))
	}
	return s
}

// shortName names a slot in a table: the year only when the range has several.
func (s *slotter) shortName(t time.Time, years bool) string {
	switch {
	case s.unit == "month":
		return t.Format("Jan 2006")
	case s.unit == "week" && years:
		return t.Format("wk Jan 2, 2006")
	case s.unit == "week":
		return t.Format("wk Jan 2")
	case years:
		return t.Format("Jan 2, 2006")
	}
	return t.Format("Mon Jan 2")
}

func (s *slotter) next(t time.Time) time.Time {
	switch s.unit {
	case "month":
		return t.AddDate(0, 1, 0)
	case "week":
		return t.AddDate(0, 0, 7)
	}
	return t.AddDate(0, 0, 1)
}

func (s *slotter) key(t time.Time) string {
	t = t.In(s.loc)
	switch s.unit {
	case "month":
		return t.Format("2006-01")
	case "week":
		return usage.WeekOf(t, time.Monday).Format(time.DateOnly)
	}
	return t.Format(time.DateOnly)
}

func (s *slotter) name(t time.Time) string {
	switch s.unit {
	case "month":
		return t.Format("Jan 2006")
	case "week":
		return "week of " + t.Format("Jan 2, 2006")
	}
	return t.Format("Mon Jan 2, 2006")
}

// of returns the slot of a bucket starting at t, or -1.
func (s *slotter) of(t time.Time) int {
	if i, ok := s.keys[s.key(t)]; ok {
		return i
	}
	return -1
}

// dayOf returns the first instant of t's day in loc.
func dayOf(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
}

// usageView reads the rows of the page's range and draws the page.
func (s *Server) usageView(ctx context.Context, p usageParams, now time.Time) (views.UsageView, error) {
	loc := p.loc
	today := dayOf(now, loc)
	since, until := time.Time{}, today // the first and last days shown; no first: from the first usage
	switch p.rng {
	case "7d", "30d", "90d":
		n, _ := strconv.Atoi(strings.TrimSuffix(p.rng, "d"))
		since = today.AddDate(0, 0, 1-n)
	case "custom":
		if p.since != "" {
			since, _ = usage.ParseDay(p.since, loc)
		}
		if p.until != "" {
			until, _ = usage.ParseDay(p.until, loc)
		}
	}
	flt := usage.Filter{Since: since, Until: until.AddDate(0, 0, 1)}
	if p.rng == "all" {
		flt.Until = time.Time{} // and usage stamped later than today, by a clock ahead
	}
	all, err := s.usage.Rows(ctx, flt)
	if err != nil {
		return views.UsageView{}, err
	}
	// The filters' choices come from the whole range; the rows shown pass them.
	sel := usage.Filter{Projects: p.projects, Models: p.models, Machines: p.machines}
	var rows []usage.Row
	projects, models, machines := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := range all {
		r := &all[i]
		projects[r.Project], models[r.Model], machines[r.Machine] = true, true, true
		if sel.Match(r) {
			rows = append(rows, *r)
		}
	}
	if since.IsZero() { // all time, or from the first day
		since = today
		for _, r := range rows {
			if d := dayOf(r.Start, loc); d.Before(since) {
				since = d
			}
		}
	}
	if p.rng == "all" {
		for _, r := range rows {
			if d := dayOf(r.Start, loc); d.After(until) {
				until = d
			}
		}
	}
	if since.After(until) {
		since = until
	}
	var meta map[string]usage.Session
	if dir, ok := s.usage.(usage.Directory); ok {
		keys := map[string]bool{}
		for _, r := range all {
			keys[r.Session] = true
		}
		if meta, err = dir.Sessions(ctx, slices.Sorted(maps.Keys(keys))); err != nil {
			return views.UsageView{}, err
		}
	}
	rep := &usage.Report{Sessions: meta}

	c := views.UsageControls{Range: p.rng, Since: since.Format(time.DateOnly), Until: until.Format(time.DateOnly), TZ: p.tz,
		Project: first(p.projects), Model: first(p.models), Machine: first(p.machines), By: p.by, Heat: p.heat,
		ByModelURL: p.url("by", "model"), ByProjectURL: p.url("by", "project"), HeatCostURL: p.url("heat", "cost"), HeatTurnsURL: p.url("heat", "turns")}
	for _, k := range slices.Sorted(maps.Keys(projects)) {
		c.Projects = append(c.Projects, views.UsageOption{Value: k, Label: rep.ProjectName(k)})
	}
	for _, k := range slices.Sorted(maps.Keys(models)) {
		c.Models = append(c.Models, views.UsageOption{Value: k, Label: k})
	}
	for _, k := range slices.Sorted(maps.Keys(machines)) {
		c.Machines = append(c.Machines, views.UsageOption{Value: k, Label: k})
	}
	v := views.UsageView{Demo: s.opt.Demo, Controls: c, Events: "/usage/events", Zone: zoneLabel(loc, p.tz),
		Span: daySpan(since, until), Empty: len(rows) == 0}
	if v.Empty {
		return v, nil
	}

	slots := newSlotter(since, until, loc)
	n := len(slots.names)
	var total usage.Sums
	var abandoned usage.Sums
	var errs, aborted int64
	sessionsSeen := map[string]bool{}
	// Cost by series (model or project), tokens by kind, resumed and abandoned cost; per slot.
	series := map[string][]float64{}
	seriesTotal := map[string]float64{}
	kinds := make([][]float64, 4)
	for k := range kinds {
		kinds[k] = make([]float64, n)
	}
	waste := [][]float64{make([]float64, n), make([]float64, n)}
	var heat [7][24]float64
	type sess struct {
		key        string
		cost, lost float64
		last       time.Time
	}
	bySession := map[string]*sess{}
	for i := range rows {
		r := &rows[i]
		total.Add(r.Sums)
		abandoned.Add(r.Abandoned)
		errs += r.Errors
		aborted += r.Aborted
		sessionsSeen[r.Session] = true
		name := r.Model
		if p.by == "project" {
			name = rep.ProjectName(r.Project)
		}
		seriesTotal[name] += r.Cost
		if k := slots.of(r.Start); k >= 0 {
			if series[name] == nil {
				series[name] = make([]float64, n)
			}
			series[name][k] += r.Cost
			kinds[0][k] += float64(r.Input)
			kinds[1][k] += float64(r.Output)
			kinds[2][k] += float64(r.CacheRead)
			kinds[3][k] += float64(r.CacheWrite)
			waste[0][k] += r.Cost - r.Abandoned.Cost
			waste[1][k] += r.Abandoned.Cost
		}
		t := r.Start.In(loc)
		d := (int(t.Weekday()) + 6) % 7 // Monday first
		if p.heat == "turns" {
			heat[d][t.Hour()] += float64(r.Turns)
		} else {
			heat[d][t.Hour()] += r.Cost
		}
		ss := bySession[r.Session]
		if ss == nil {
			ss = &sess{key: r.Session}
			bySession[r.Session] = ss
		}
		ss.cost += r.Cost
		ss.lost += r.Abandoned.Cost
		if r.Start.After(ss.last) {
			ss.last = r.Start
		}
	}

	v.Summary = []views.UsageStat{
		{Label: "Cost", Value: dollars(total.Cost), Hint: "what pi recorded for every reply, each copy in a fork counted once"},
		{Label: "Tokens", Value: views.Tokens(total.Tokens()), Hint: fmt.Sprintf("%s input, %s output, %s cache read, %s cache write",
			views.Tokens(total.Input), views.Tokens(total.Output), views.Tokens(total.CacheRead), views.Tokens(total.CacheWrite))},
		{Label: "Turns", Value: views.Count(int(total.Turns)), Hint: "assistant replies"},
		{Label: "Sessions", Value: views.Count(len(sessionsSeen))},
		{Label: "Abandoned", Value: percent(abandoned.Cost, total.Cost), Hint: dollars(abandoned.Cost) + " on branches pi will not resume"},
		{Label: "Cache reads", Value: percent(float64(total.CacheRead), float64(total.Input+total.CacheRead+total.CacheWrite)), Hint: "of prompt tokens, read from the cache"},
		{Label: "Errors", Value: views.Count(int(errs)), Hint: views.Plural(int(aborted), "reply", "replies") + " aborted"},
	}

	// The cost chart: the seven costliest series, the rest as one.
	names := slices.SortedFunc(maps.Keys(seriesTotal), func(a, b string) int {
		return cmp.Or(cmp.Compare(seriesTotal[b], seriesTotal[a]), strings.Compare(a, b))
	})
	var stack []chart.Series
	for i, name := range names {
		if i == chart.Patterns-1 && len(names) > chart.Patterns {
			rest := chart.Series{Name: fmt.Sprintf("%d others", len(names)-i), Values: make([]float64, n)}
			for _, o := range names[i:] {
				for k, x := range series[o] {
					rest.Values[k] += x
				}
			}
			stack = append(stack, rest)
			break
		}
		vals := series[name]
		if vals == nil { // its cost fell outside the slots drawn
			vals = make([]float64, n)
		}
		stack = append(stack, chart.Series{Name: name, Values: vals})
	}
	per := map[string]string{"day": "day", "week": "week", "month": "month"}[slots.unit]
	v.Cost = bars("cost", fmt.Sprintf("Cost per %s by %s", per, p.by), slots, stack, dollars, axisDollars)
	v.Cost.Head = []string{strings.ToUpper(per[:1]) + per[1:], "Cost", "By " + p.by}
	for k := n - 1; k >= 0; k-- {
		sum := 0.0
		var parts []string
		for _, s := range stack {
			if x := s.Values[k]; x > 0 {
				sum += x
				parts = append(parts, s.Name+" "+dollars(x))
			}
		}
		if sum > 0 {
			v.Cost.Rows = append(v.Cost.Rows, []string{slots.short[k], dollars(sum), strings.Join(parts, " · ")})
		}
	}

	v.Tokens = bars("tokens", fmt.Sprintf("Tokens per %s by kind", per), slots, []chart.Series{
		{Name: "input", Values: kinds[0]}, {Name: "output", Values: kinds[1]}, {Name: "cache read", Values: kinds[2]}, {Name: "cache write", Values: kinds[3]},
	}, tokens, tokens)
	v.Tokens.Head = []string{v.Cost.Head[0], "Input", "Output", "Cache read", "Cache write"}
	for k := n - 1; k >= 0; k-- {
		if kinds[0][k]+kinds[1][k]+kinds[2][k]+kinds[3][k] > 0 {
			v.Tokens.Rows = append(v.Tokens.Rows, []string{slots.short[k], views.Tokens(int64(kinds[0][k])), views.Tokens(int64(kinds[1][k])),
				views.Tokens(int64(kinds[2][k])), views.Tokens(int64(kinds[3][k]))})
		}
	}

	v.Waste = bars("waste", "Cost on abandoned branches", slots, []chart.Series{{Name: "resumed", Values: waste[0]}, {Name: "abandoned", Values: waste[1]}}, dollars, axisDollars)
	v.Waste.Head = []string{v.Cost.Head[0], "Cost", "Abandoned", "Share"}
	for k := n - 1; k >= 0; k-- {
		if c := waste[0][k] + waste[1][k]; c > 0 {
			v.Waste.Rows = append(v.Waste.Rows, []string{slots.short[k], dollars(c), dollars(waste[1][k]), percent(waste[1][k], c)})
		}
	}
	v.WasteShare = fmt.Sprintf("%s of the cost (%s) went on branches pi will not resume", percent(abandoned.Cost, total.Cost), dollars(abandoned.Cost))
	v.WasteMeter = chart.Meter("waste-all", v.WasteShare, total.Cost, []chart.Part{
		{Value: total.Cost - abandoned.Cost, Series: 0, Title: "resumed " + dollars(total.Cost-abandoned.Cost)},
		{Value: abandoned.Cost, Series: -1, Title: "abandoned " + dollars(abandoned.Cost)}})

	days := [7]string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
	hm := chart.Heatmap{Days: days, Values: heat, Label: "Cost by weekday and hour", Format: dollars}
	if p.heat == "turns" {
		hm.Label = "Turns by weekday and hour"
		hm.Format = func(x float64) string { return views.Plural(int(x), "turn", "turns") }
	}
	v.Heat = views.UsageHeat{Title: hm.Label, SVG: hm.SVG(), Days: days, Head: append([]string{"Hour"}, days[:]...)}
	if p.heat != "turns" {
		v.Heat.Head[0] = "Hour ($)"
	}
	for h := range 24 {
		row := []string{fmt.Sprintf("%02d:00", h)}
		used := false
		for d := range 7 {
			x := heat[d][h]
			used = used || x > 0
			switch {
			case x == 0:
				row = append(row, "·")
			case p.heat == "turns":
				row = append(row, strconv.Itoa(int(x)))
			default:
				row = append(row, shortDollars(x))
			}
		}
		if used {
			v.Heat.Rows = append(v.Heat.Rows, row)
		}
	}

	tops := make([]*sess, 0, len(bySession))
	for _, ss := range bySession {
		tops = append(tops, ss)
	}
	slices.SortFunc(tops, func(a, b *sess) int { return cmp.Or(cmp.Compare(b.cost, a.cost), strings.Compare(a.key, b.key)) })
	tops = tops[:min(len(tops), 10)]
	for i, t := range tops {
		m := meta[t.key]
		title := usage.Clean(m.Title())
		if title == "" || title == "(no messages)" {
			title = t.key
		}
		label := fmt.Sprintf("%s: %s, %s abandoned", title, dollars(t.cost), dollars(t.lost))
		v.Top = append(v.Top, views.UsageTop{URL: views.SessionURL(t.key), Title: oneLine(title, 80), Project: rep.ProjectName(m.Project),
			When: t.last.In(loc).Format("Jan 2"), Cost: dollars(t.cost), Abandoned: dollars(t.lost),
			Meter: chart.Meter(fmt.Sprintf("top%d", i), label, tops[0].cost, []chart.Part{
				{Value: t.cost - t.lost, Series: 0, Title: "resumed " + dollars(t.cost-t.lost)},
				{Value: t.lost, Series: -1, Title: "abandoned " + dollars(t.lost)}})})
	}
	return v, nil
}

// bars draws a bar chart with its axis labels (axis) and legend.
func bars(id, title string, slots *slotter, series []chart.Series, format, axis func(float64) string) views.UsageBars {
	b := chart.Bars{ID: id, Label: title, Slots: slots.names, Series: series, Format: format}
	svg, top := b.SVG()
	out := views.UsageBars{ID: id, Title: title, SVG: svg, Top: axis(top), Mid: axis(top / 2), First: slots.short[0], Last: slots.short[len(slots.short)-1]}
	for k, s := range series {
		out.Legend = append(out.Legend, views.UsageLegend{Name: s.Name, Swatch: chart.Swatch(fmt.Sprintf("%s-key%d", id, k), k)})
	}
	return out
}

// tokens formats a count of tokens.
func tokens(x float64) string { return views.Tokens(int64(x)) }

// dollars formats a cost for the page: cents, or a tenth of a cent below a dollar.
func dollars(c float64) string {
	if c != 0 && c < 1 && c > -1 {
		return fmt.Sprintf("$%.3f", c)
	}
	return usage.Dollars(c)
}

// shortDollars writes a cost in at most five characters, without the
// dollar sign (the column says it): 0.07, 4.32, 12.3, 420, 1.2k.
func shortDollars(c float64) string {
	switch {
	case c < 10:
		return fmt.Sprintf("%.2f", c)
	case c < 100:
		return fmt.Sprintf("%.1f", c)
	case c < 1000:
		return fmt.Sprintf("%.0f", c)
	case c < 100_000:
		return fmt.Sprintf("%.1fk", c/1000)
	}
	return fmt.Sprintf("%.0fk", c/1000)
}

// axisDollars labels a chart's axis: whole dollars from $10 on.
func axisDollars(c float64) string {
	if c >= 10 {
		return "$" + usage.Count(int64(math.Round(c)))
	}
	return dollars(c)
}

// percent returns part of whole as a percentage.
func percent(part, whole float64) string {
	if whole <= 0 {
		return "0%"
	}
	p := part / whole * 100
	if p > 0 && p < 0.1 {
		return "<0.1%"
	}
	if p > 0 && p < 1 {
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}

// daySpan describes a range of days.
func daySpan(since, until time.Time) string {
	if since.Equal(until) {
		return since.Format("Mon Jan 2, 2006")
	}
	if since.Year() == until.Year() {
		return since.Format("Jan 2") + " – " + until.Format("Jan 2, 2006")
	}
	return since.Format("Jan 2, 2006") + " – " + until.Format("Jan 2, 2006")
}

// zoneLabel names the page's time zone.
func zoneLabel(loc *time.Location, asked string) string {
	if asked != "" {
		return "times in " + asked
	}
	name, _ := time.Now().In(loc).Zone()
	return "times in piweb's zone (" + name + ")"
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
