package views

import (
	"io/fs"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/piweb/piweb/static"
)

// ExportView is a branch exported as a self-contained HTML page.
type ExportView struct {
	Title     string
	Name      string // the session name in force at the end of the branch
	SessionID string // the source session's id
	Cwd       string // the working directory; "" when left out
	Leaf      string // the entry the branch ends at
	Models    []string
	Created   time.Time // when the source session started
	Exported  time.Time
	Entries   int // entries on the branch
	Messages  int
	Tokens    int64
	Cost      float64
	Redacted  []string // what was redacted, for people ("secrets", "thinking", "tool output")
	Items     []Item
	// Body, when set, writes the items instead (a long branch, rendered a
	// page at a time so the export never holds them all). A whole-session
	// export always has one: its runs (ExportRunView), drawn the same way.
	Body templ.Component
	// A whole-session export: every entry in tree order as runs, pi's tree beside them.
	Whole    bool
	Tree     []ExportRow
	TreeCut  string // why the tree shows fewer rows than it has ("" when it shows all)
	Branches int
	LeafPos  int // the position of the session's leaf, for its link
}

// ExportRun is a run of entries each the child of the one before, in a whole-session export.
type ExportRun struct {
	From    int    // position of the entry the run continues, -1 for a root
	FromRef string // its ref
	OnPath  bool   // the run is on the path to the session's leaf
}

// ExportRow is one row of pi's tree beside a whole-session export.
type ExportRow struct {
	Pos     int
	Prefix  string // pi's gutters, connector and active marker
	Kind    string
	Lead    string
	Text    string
	Label   string
	Labeled bool
	Active  bool // on the path to the leaf
	Leaf    bool
}

// ExportCSP is the Content-Security-Policy of an exported page: nothing is
// fetched or run; only its own inline style and data: images.
const ExportCSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

// exportStyle is the export page's stylesheet (the shared theme, then the
// export's own rules), inlined into every page.
var exportStyle = func() string {
	var css strings.Builder
	for _, name := range []string{"css/base.css", "css/chroma.css", "css/export.css"} {
		b, err := fs.ReadFile(static.Assets(), name)
		if err != nil {
			panic(err) // embedded
		}
		css.Write(b)
	}
	return css.String()
}()

// styleElement returns the export stylesheet as a <style> element.
func styleElement() string {
	// The stylesheet is ours; make sure it cannot close the element early anyway.
	return "<style>\n" + strings.ReplaceAll(exportStyle, "</", "<\\/") + "</style>"
}

// Day formats a time as a full date and time in UTC, for a page read elsewhere.
func Day(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// joinList joins words as "a, b and c".
func joinList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
