package views

import (
	"strconv"
	"time"
)

// ListView is the sessions page.
type ListView struct {
	Query    string
	Sort     string // SortActivity, SortName or SortFirst
	Groups   []ProjectGroup
	Total    int // sessions in the library
	Shown    int // sessions matching Query
	Demo     bool
	Root     string
	Problems int // files under the root that are not readable sessions
	// Unreadable lists them (on the first window of the list), with why.
	Unreadable []Unreadable
	Progress   *ProgressView // indexing progress, while piweb indexes (nil when done)
	More       int           // matching sessions after the window shown
	MoreURL    string        // the next window
	Machines   []string      // a team server's machines, to filter by (none elsewhere)
	Machine    string        // the machine filtered by ("" for all)
}

// Unreadable is a file under the sessions root that is not a readable
// session: its path under the root, and why.
type Unreadable struct {
	File string
	Why  string
}

// Sort orders of the sessions page.
const (
	SortActivity = "activity"
	SortName     = "name"
	SortFirst    = "first"
	SortFamilies = "families" // forks under the session they came from, newest family first
)

// ProjectGroup is the sessions of one working directory.
type ProjectGroup struct {
	DOMID     string
	Machine   string // on a team server: the machine the sessions were pushed from
	Cwd       string
	Sessions  []SessionItem // the group's sessions in the window shown
	Count     int           // all its sessions matching the search
	Continued bool          // the window starts inside the group: its first sessions came before
	Tokens    int64
	Cost      float64
}

// SessionItem is one row of the sessions page.
type SessionItem struct {
	ID           string // the session id
	Key          string // the session file's key
	CopyOf       string // the key of the file holding the same session id under pi's name, for a copy
	File         string
	DOMID        string
	GroupID      string // DOMID of its ProjectGroup
	Name         string
	FirstMessage string
	Cwd          string
	Created      time.Time
	Modified     time.Time
	Entries      int
	Messages     int
	Branches     int
	Leaves       int
	Tokens       int64
	Cost         float64
	Models       []string
	Depth        int    // in the families view: how many forks down from its family's first session
	ShowCwd      bool   // the row says its project (the families view mixes them)
	ParentKey    string // the session it was forked from, when indexed
	ParentTitle  string
	ParentFile   string // parentSession as written, when it is not indexed
	Diagnostics  int
	Version      int    // the file's format version
	Machine      string // on a team server: the machine it was pushed from
}

// Title returns the session's name, or its first message.
func (s SessionItem) Title() string {
	if s.Name != "" {
		return s.Name
	}
	return s.FirstMessage
}

// pluralWord is one or many, by n.
func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// familyIndent is the class that indents a fork under the session it came
// from (no inline styles: the CSP forbids them).
func familyIndent(depth int) string {
	if depth <= 0 {
		return ""
	}
	return "depth-" + strconv.Itoa(min(depth, 6))
}
