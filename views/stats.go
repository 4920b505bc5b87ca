package views

import "time"

// Totals are counts, tokens and cost summed with pi's arithmetic over some
// entries (a file, a path, one side of a comparison).
type Totals struct {
	Entries, User, Assistant, ToolCalls, ToolResults int
	Compactions, Summaries, Errors                   int
	Input, Output, CacheRead, CacheWrite, Tokens     float64
	Cost                                             float64
}

// ModelUse is what one model (or pi's "Tools/summaries" bucket) spent.
type ModelUse struct {
	Name      string
	Assistant int
	Tokens    float64
	Cost      float64
}

// FileView is a file changed along a path, with its changes in order.
type FileView struct {
	Path    string
	Added   int
	Removed int
	Changes []ChangeView
	Side    string // in a comparison: "a", "b" or "both"
}

// ChangeView is one change to a file: an edit or a write, linked to its entry.
type ChangeView struct {
	Pos     int
	Ref     string
	URL     string // the session page with the tool result selected
	Tool    string
	Created bool
	Added   int
	Removed int
	Patch   string
}

// FilesView is the files-changed panel of a path.
type FilesView struct {
	Files    []FileView
	Bash     []CommandView
	PatchURL string // the path's net patch, as a download
}

// CommandView is a shell command along a path: it may have changed files, not tracked.
type CommandView struct {
	Pos     int
	Ref     string
	URL     string
	Command string
}

// CompareView is the comparison page of two entries.
type CompareView struct {
	Key, Title   string
	SessionURL   string
	A, B         CompareSide
	Ancestor     *EntryInfo // nil when the two are in trees of different roots
	AncestorText string
	AncestorURL  string
	Relation     string // "a-ancestor", "b-ancestor", "same" or ""
	Turns        []TurnPair
	MoreURL      string // the next turns, when there are more
	From         int    // the first turn shown
	TotalTurns   int
	FilesOnlyA   []string
	FilesOnlyB   []string
	FilesBoth    []string
	FilesA       []FileView
	FilesB       []FileView
	Demo         bool
	SwapURL      string
}

// ComparePickView is the compare page without both entries: the session's
// branch tips to pick A and B from.
type ComparePickView struct {
	Key, Title string
	SessionURL string
	Action     string // the comparison page, which the form asks with a and b
	Tips       []PickTip
	More       int    // older tips not listed
	A, B       string // the refs picked at first
	Demo       bool
}

// PickTip is a branch tip on the compare picker.
type PickTip struct {
	Ref    string
	Kind   string // its role or type
	Text   string // a preview of the tip
	First  string // the first user message of its branch
	Depth  int    // entries from the root
	Cost   float64
	Time   time.Time
	Resume bool   // where pi resumes
	URL    string // the session page at the tip
}

// CompareSide is one side of a comparison: its entry and its totals from the fork.
type CompareSide struct {
	Ref      string
	Text     string // a preview of the entry
	URL      string // the session page at the entry
	Totals   Totals
	Turns    int
	Duration string // from the first entry after the fork to the last
	Files    int
}

// TurnPair is turn k of each side (nil where a side has fewer turns).
type TurnPair struct {
	K     int
	A, B  []Item
	Same  bool // the two turns say the same: shown folded
	Count int  // for a run of identical turns folded into one pair: how many
}

// turnName names turn k of a comparison: 0 is what comes before the first user message.
func turnName(k int) string {
	if k == 0 {
		return "Before the first user message"
	}
	return "Turn " + Itoa(k)
}
