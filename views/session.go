package views

import (
	"net/url"
	"strings"
	"time"
)

// SessionView is the session page: the tree on the left, the conversation on the right.
type SessionView struct {
	ID           string // the session id
	Key          string // the session file's key
	CopyOf       string // the key of the file holding the same session id under pi's name, for a copy
	Title        string
	Name         string
	Cwd          string
	File         string
	Created      time.Time
	Stats        SessionStats
	ParentKey    string
	ParentTitle  string
	ParentFile   string
	ParentAt     string     // the entry of the parent session the fork left from ("" when unknown)
	ChildForks   []ForkLink // sessions forked from this one
	Diagnostics  []string
	State        TreeState
	Tree         TreeWindow
	Conversation *PathView // the selected entry's path; nil when the tree is empty
	Demo         bool
	Version      string // the index state the page was drawn from, for the live stream
	Note         string // why the page shows another entry than the one its address names
	Format       int    // the file's format version when it is not 3 (read-only), else 0
	Pane         string // on a narrow screen, the pane shown first: "tree" or "conv"
	ShowMap      bool   // the tree pane shows the map (?view=map)
	Highlight    string // words to mark in the conversation when the address's search (q) could not filter the tree
}

// SessionStats are a session's counts for the page header.
type SessionStats struct {
	Entries  int
	Messages int
	Leaves   int
	Tokens   int64
	Cost     float64
	Models   []string
	// What pi's /session shows (getSessionStats), the part off pi's path, and by model.
	File      Totals
	Abandoned Totals
	ByModel   []ModelUse
}

// TreeState is what the tree shows: pi's filter, search and folds, the
// active leaf and the selected entry. Leaf and Target are entry refs.
type TreeState struct {
	Filter string   // pi's filter mode; "" or "default" for the default
	Search string   // pi's search tokens
	Folds  []string // ids of folded entries
	Open   []string // refs of the first rows of the runs of settings rows drawn row by row (piweb's own fold)
	Leaf   string   // the entry whose path is "active"; "" follows the session's leaf
	Target string   // the selected entry; "" selects the leaf
}

// Values encodes the state as URL query values, leaving out defaults.
func (t TreeState) Values() url.Values {
	v := url.Values{}
	if t.Filter != "" && t.Filter != "default" {
		v.Set("filter", t.Filter)
	}
	if t.Search != "" {
		v.Set("q", t.Search)
	}
	if len(t.Folds) > 0 {
		v.Set("fold", strings.Join(t.Folds, ","))
	}
	if len(t.Open) > 0 {
		v.Set("open", strings.Join(t.Open, ","))
	}
	if t.Leaf != "" {
		v.Set("leaf", t.Leaf)
	}
	if t.Target != "" {
		v.Set("target", t.Target)
	}
	return v
}

// FilterName returns the filter, "default" when unset.
func (t TreeState) FilterName() string {
	if t.Filter == "" {
		return "default"
	}
	return t.Filter
}

// TreeWindow is a run of consecutive tree rows.
type TreeWindow struct {
	Key      string // the session file's key
	Rows     []RowView
	First    int  // row index of Rows[0]
	Total    int  // rows in the whole (filtered) tree
	Before   bool // rows exist before the window
	After    bool // rows exist after the window
	Selected int  // entry position of the selected row, -1 for none
}

// RowView is one tree row as pi draws it.
type RowView struct {
	Pos      int    // entry position in the file's index
	Parent   int    // position of the visible parent row's entry, -1 for a root
	Kids     int    // visible children
	Ref      string // entry ref for URLs: the id, or "~pos" for an entry without one
	Pre      string // gutters and connector before the fold glyph
	Fold     string // "⊟", "⊞" or ""
	Post     string // the rest of the prefix after the fold glyph
	Active   bool   // on the active path (pi's "•")
	Leaf     bool   // the leaf of the path the tree shows
	Viewing  bool   // the tree shows another path than the one pi resumes from
	Resume   bool   // pi's own leaf, while the tree shows another path
	Forks    int    // children in the whole tree when it is a branch point, else 0
	Folded   bool
	Foldable bool
	Label    string
	Labeled  bool   // a label is in force, even one that shows as "" (pi's [] label)
	LabelAt  string // "when " the label was set (LabelTime), shown with shift+T as in pi; "" for none
	Kind     string // CSS modifier: user, assistant, tool, bash, custom, compaction, summary, setting, error
	Lead     string // the colored lead of the preview ("user: ")
	Text     string // the rest of the preview
	Hint     string // tooltip: type, id and time
	Spent    string // on the first row of each branch of a branch point: what that attempt cost
	// A run of settings rows folded into this one: how many, and its words
	// ("× 1,204 thinking-level changes"); the others name this row's entry.
	NoiseRun  int
	NoiseText string
	NoiseOpen bool // the run is drawn row by row
}

// Mark returns pi's active-path marker for the row, or "".
func (r RowView) Mark() string {
	if r.Active {
		return "• "
	}
	return ""
}

// LabelText returns "[label] ", or "".
func (r RowView) LabelText() string {
	if !r.Labeled {
		return ""
	}
	return "[" + r.Label + "] "
}

// Here returns the leaf marker, or "".
func (r RowView) Here() string {
	switch {
	case r.Leaf && r.Viewing:
		return " ← viewing"
	case r.Leaf, r.Resume:
		return " ← active"
	}
	return ""
}

// ForkText marks a branch point with its number of branches, or "".
func (r RowView) ForkText() string {
	if r.Forks < 2 {
		return ""
	}
	return "  (" + Itoa(r.Forks) + " branches)"
}

// ForkLink is a session forked from this one and the entry it left from.
type ForkLink struct {
	Key, Title string
	At         string // the entry of this session it left from ("" when unknown)
}
