package views

import "time"

// Seg is a piece of a snippet, marked when it matches the query.
type Seg struct {
	Text string
	Mark bool
}

// SearchHitView is one hit of the search page.
type SearchHitView struct {
	URL     string // the session page with the entry selected
	EntryID string
	Kind    string // what the piece is: "user", "assistant", "thinking", "tool call", …
	Place   string // "path", "offpath", "compacted"
	Snippet []Seg
	When    time.Time
	Label   string
}

// SearchGroup is the hits of one session.
type SearchGroup struct {
	Key     string
	URL     string
	Title   string
	Project string
	Hits    []SearchHitView
}

// SearchView is the search page.
type SearchView struct {
	Query    string
	Error    string // why the query cannot run
	Groups   []SearchGroup
	Hits     int
	Next     string // the address of the next page, "" when none
	Partial  bool   // more may match: the index is still being built, or a scan stopped
	Scanned  bool
	Demo     bool
	Progress *ProgressView
}

// ProgressView is indexing progress, for the progress bar.
type ProgressView struct {
	Indexing    bool
	FilesDone   int64
	FilesTotal  int64
	BytesDone   int64
	BytesTotal  int64
	Rate        int64 // bytes a second
	Searching   bool  // the search index is being built
	SearchDone  int64
	SearchTotal int64
	Poll        string // the address the bar refreshes itself from ("" when done)
}

// PaletteItem is one line of the command palette.
type PaletteItem struct {
	URL   string
	Title string
	Sub   string
	Place string
	Seg   []Seg
}

// PaletteView is the command palette's results.
type PaletteView struct {
	Query    string
	Sessions []PaletteItem
	Labels   []PaletteItem
	Entries  []PaletteItem
	Error    string
	All      string // the search page for the query
}

// PlaceWord says where an entry lies, for a tag ("" on the path).
func PlaceWord(place string) string {
	switch place {
	case "offpath":
		return "off-path"
	case "compacted":
		return "compacted away"
	}
	return ""
}

// Percent is done of total as a whole percentage.
func Percent(done, total int64) string {
	if total <= 0 {
		return "0"
	}
	return Itoa(int(done * 100 / total))
}
