// Package usage answers "what did it cost": the tokens and cost pi records
// in session files, summed per quarter hour, session, model and machine
// (Row), then grouped into the reports ccusage makes (daily, weekly,
// monthly, per session; and per project) in any time zone, written as JSON
// shaped like @ccusage/pi's, as a terminal table, or as one status line.
//
// The contract with the stores that feed it:
//
//   - A Source hands over Rows for a Filter. Files reads the session files
//     of a library (library.Library) directly; the index store hands over
//     the rows it keeps aggregated (usage/storesource). Both give the same
//     rows, costs added in the same order.
//   - A Row's Start is the start of a 15-minute bucket in UTC. Every time
//     zone's offset is a multiple of 15 minutes, so any zone's days, weeks
//     and hours are exact unions of buckets.
//   - Each usage pi records counts once: an entry that pi's forkFrom or
//     createBranchedSession copied into another file (the same id and
//     timestamp, in a file whose parentSession lineage reaches the file
//     that holds it first) counts only where it was first written.
//   - What counts is what pi's getSessionStats adds: the usage of assistant
//     messages, of tool results, of usage entries, and of compactions and
//     branch summaries that carry one. Turns count assistant messages.
//   - Abandoned is the part of the sums spent on entries that no file of
//     the lineage will resume: off the path from each file's last entry
//     (the leaf pi opens it at), in the file that holds it and every copy.
//
// This package knows no HTTP and no HTML.
package usage

import (
	"context"
	"slices"
	"time"
)

// Bucket is the width of a Row's time bucket.
const Bucket = 15 * time.Minute

// ToolsModel is the model name of usage no model is named for (tool
// results, compactions, branch summaries), as pi's /session shows it.
const ToolsModel = "Tools/summaries"

// Sums are tokens and cost summed over usage records.
type Sums struct {
	Turns      int64   `json:"turns"` // assistant messages
	Input      int64   `json:"input"`
	Output     int64   `json:"output"`
	CacheRead  int64   `json:"cacheRead"`
	CacheWrite int64   `json:"cacheWrite"`
	Cost       float64 `json:"cost"`
}

// Tokens returns the four kinds of tokens summed, as pi's totals show them.
func (s Sums) Tokens() int64 { return s.Input + s.Output + s.CacheRead + s.CacheWrite }

// Add adds o to s.
func (s *Sums) Add(o Sums) {
	s.Turns += o.Turns
	s.Input += o.Input
	s.Output += o.Output
	s.CacheRead += o.CacheRead
	s.CacheWrite += o.CacheWrite
	s.Cost += o.Cost
}

// CacheShare returns the share of prompt tokens read from the cache:
// cache reads over input, cache reads and cache writes (0 without any).
func (s Sums) CacheShare() float64 {
	prompt := s.Input + s.CacheRead + s.CacheWrite
	if prompt == 0 {
		return 0
	}
	return float64(s.CacheRead) / float64(prompt)
}

// Row holds the sums over the usage records that share one 15-minute UTC
// bucket, session, model and machine.
type Row struct {
	Start     time.Time `json:"start"`     // the bucket's start, UTC, a multiple of Bucket
	Session   string    `json:"session"`   // piweb's key of the session
	SessionID string    `json:"sessionId"` // the id in the session's header
	Project   string    `json:"project"`   // the session's folder under the root (its cwd, as pi names it)
	Machine   string    `json:"machine"`
	Model     string    `json:"model"` // "provider/model", or ToolsModel
	Sums
	// Abandoned is the part of Sums spent on branches pi will not resume.
	Abandoned Sums  `json:"abandoned"`
	Errors    int64 `json:"errors"`  // assistant messages that stopped with an error
	Aborted   int64 `json:"aborted"` // assistant messages the user aborted
}

// Filter selects rows: Since and Until bound the buckets' starts
// (Since ≤ Start < Until; a zero time leaves that side open), and each
// list, when not empty, names the values a row may have.
type Filter struct {
	Since, Until time.Time
	Projects     []string
	Models       []string
	Machines     []string
	Sessions     []string // piweb keys
}

// Match reports whether r passes the filter.
func (f *Filter) Match(r *Row) bool {
	return f.MatchTime(r.Start) &&
		(len(f.Projects) == 0 || slices.Contains(f.Projects, r.Project)) &&
		(len(f.Models) == 0 || slices.Contains(f.Models, r.Model)) &&
		(len(f.Machines) == 0 || slices.Contains(f.Machines, r.Machine)) &&
		(len(f.Sessions) == 0 || slices.Contains(f.Sessions, r.Session))
}

// MatchTime reports whether a bucket starting at t is in the filter's range.
func (f *Filter) MatchTime(t time.Time) bool {
	return (f.Since.IsZero() || !t.Before(f.Since)) && (f.Until.IsZero() || t.Before(f.Until))
}

// Source hands over the rows a filter selects, in no particular order.
type Source interface {
	Rows(ctx context.Context, f Filter) ([]Row, error)
}

// Session is what the reports show of a session besides its sums.
type Session struct {
	Key          string    `json:"key"`
	ID           string    `json:"id"`
	Project      string    `json:"project"`
	Cwd          string    `json:"cwd"`
	Name         string    `json:"name,omitempty"`
	FirstMessage string    `json:"firstMessage"`
	Modified     time.Time `json:"modified"` // the last user or assistant activity
}

// Title returns the session's name, else its first message.
func (s Session) Title() string {
	if s.Name != "" {
		return s.Name
	}
	return s.FirstMessage
}

// Directory describes sessions by key; a Source may be one too.
type Directory interface {
	Sessions(ctx context.Context, keys []string) (map[string]Session, error)
}

// Settler is a Source whose rows follow the session files with a lag
// (the index store, kept current by the catalog): Settle returns once
// its rows include the changes made to the files so far, or ctx is done.
type Settler interface {
	Settle(ctx context.Context) error
}

// Start returns the start of the bucket that holds t.
func Start(t time.Time) time.Time { return t.UTC().Truncate(Bucket) }
