package usage

import (
	"context"
	"fmt"
	"time"

	"github.com/mattn/go-runewidth"
)

// Status is what the status line shows: the cost of today and of this
// week in a time zone, and of the session used last.
type Status struct {
	Today, Week float64
	// Newest is the session with the latest usage ("" Key: none), and
	// NewestCost all it cost.
	Newest     Session
	NewestCost float64
}

// MakeStatus reads the status at now from src: days and weeks in loc,
// weeks starting on weekStart.
func MakeStatus(ctx context.Context, src Source, now time.Time, loc *time.Location, weekStart time.Weekday) (Status, error) {
	var st Status
	now = now.In(loc)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	week := WeekOf(now, weekStart)
	rows, err := src.Rows(ctx, Filter{Since: week})
	if err != nil {
		return st, err
	}
	if len(rows) == 0 {
		// Nothing this week: the newest session is older.
		if rows, err = src.Rows(ctx, Filter{}); err != nil {
			return st, err
		}
	}
	var newest Row
	for _, r := range rows {
		if !r.Start.Before(week) {
			st.Week += r.Cost
		}
		if !r.Start.Before(day) {
			st.Today += r.Cost
		}
		if newest.Session == "" || r.Start.After(newest.Start) || r.Start.Equal(newest.Start) && r.Session > newest.Session {
			newest = r
		}
	}
	if newest.Session == "" {
		return st, nil
	}
	st.Newest = Session{Key: newest.Session, ID: newest.SessionID, Project: newest.Project}
	if dir, ok := src.(Directory); ok {
		ss, err := dir.Sessions(ctx, []string{newest.Session})
		if err != nil {
			return st, err
		}
		if s, ok := ss[newest.Session]; ok {
			st.Newest = s
		}
	}
	mine, err := src.Rows(ctx, Filter{Sessions: []string{newest.Session}})
	if err != nil {
		return st, err
	}
	for _, r := range mine {
		st.NewestCost += r.Cost
	}
	return st, nil
}

// String returns the status line: "$1.20 today · $8.75 this week · $0.42 last session (title)".
func (s Status) String() string {
	line := fmt.Sprintf("%s today · %s this week", Dollars(s.Today), Dollars(s.Week))
	if s.Newest.Key != "" {
		line += " · " + Dollars(s.NewestCost) + " last session"
		if t := Clean(s.Newest.Title()); t != "" && t != "(no messages)" {
			line += " (" + runewidth.Truncate(t, 30, "…") + ")"
		}
	}
	return line
}
