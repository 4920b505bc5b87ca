package views

import (
	"crypto/sha256"
	"encoding/base64"
	"io/fs"
	"strings"
	"sync"
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
	// A whole-session export: every entry in tree order as runs.
	Whole    bool
	Branches int
	LeafPos  int // the position of the session's leaf, for its link
	// pi's tree beside the entries (the branch's, or the whole session's).
	Tree    []ExportRow
	TreeCut string // why the tree shows fewer rows than it has ("" when it shows all)
}

// ExportRun is a run of entries each the child of the one before, in a whole-session export.
type ExportRun struct {
	From    int    // position of the entry the run continues, -1 for a root
	FromRef string // its ref
	OnPath  bool   // the run is on the path to the session's leaf
}

// ExportRow is one row of pi's tree beside an exported page. A share
// draws the rows of pi's "all" filter; each says which filters show it
// (In: the letters of ShareFilters) and, where one draws it with other
// gutters than the default does, its prefix under that filter (Alt); the
// page's script switches between them.
type ExportRow struct {
	Pos     int
	Prefix  string // pi's gutters, connector and active marker, as the default filter draws them (or "all", for a row the default hides)
	Kind    string
	Lead    string
	Text    string
	Label   string
	Labeled bool
	Active  bool   // on the path to the leaf
	Leaf    bool   // the row of pi's leaf (or of its nearest shown ancestor) under the default filter
	In      string // the filters that show the row, as letters ("d n a")
	LeafIn  string // the filters under which it is the leaf's row
	Alt     []AltPrefix
}

// AltPrefix is a row's prefix under a filter that draws it otherwise.
type AltPrefix struct {
	Filter string // its letter
	Prefix string
}

// ShareFilter is one of pi's tree filters as a share's buttons name it.
type ShareFilter struct {
	Key   string // the letter rows list it by
	Name  string // pi's name
	Label string // the button's text
	Title string
}

// ShareFilters are pi's five tree filters, in pi's order.
var ShareFilters = []ShareFilter{
	{"d", "default", "default", "Everything but settings"},
	{"n", "no-tools", "no-tools", "The default, less tool results"},
	{"u", "user-only", "user", "Your messages only"},
	{"l", "labeled-only", "labeled", "Labeled entries only"},
	{"a", "all", "all", "Every entry"},
}

// attrs are the row's data attributes for its prefixes under other filters.
func (r ExportRow) attrs() templ.OrderedAttributes {
	var a templ.OrderedAttributes
	for _, p := range r.Alt {
		a = append(a, templ.KeyValue[string, any]{Key: "data-p" + p.Filter, Value: p.Prefix})
	}
	if r.LeafIn != "" {
		a = append(a, templ.KeyValue[string, any]{Key: "data-leaf", Value: r.LeafIn})
	}
	return a
}

// ExportCSP returns the Content-Security-Policy of an exported page:
// nothing is fetched; only its own inline style, data: images and its one
// script (by its hash) run.
func ExportCSP() string {
	return "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src '" + ShareScriptHash() + "'; base-uri 'none'; form-action 'none'"
}

// ShareScript returns the one script of an exported page
// (static/js/share.js), inlined: the tree's filters and search, the
// thinking and tool-output toggles. It loads nothing.
var ShareScript = sync.OnceValue(func() string {
	b, err := fs.ReadFile(static.Assets(), "js/share.js")
	if err != nil {
		panic(err) // embedded
	}
	if strings.Contains(string(b), "</") {
		panic("static/js/share.js holds \"</\": it would end its <script> element")
	}
	return string(b)
})

// ShareScriptHash returns ShareScript's hash as a CSP source.
var ShareScriptHash = sync.OnceValue(func() string {
	sum := sha256.Sum256([]byte(ShareScript()))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
})

// scriptElement returns the share script as a <script> element.
func scriptElement() string { return "<script>" + ShareScript() + "</script>" }

// exportStyle returns the export page's stylesheet (the shared theme,
// then the export's own rules), inlined into every page.
var exportStyle = sync.OnceValue(func() string {
	var css strings.Builder
	for _, name := range []string{"css/base.css", "css/chroma.css", "css/export.css"} {
		b, err := fs.ReadFile(static.Assets(), name)
		if err != nil {
			panic(err) // embedded
		}
		css.Write(b)
	}
	return css.String()
})

// styleElement returns the export stylesheet as a <style> element.
func styleElement() string {
	// The stylesheet is ours; make sure it cannot close the element early anyway.
	return "<style>\n" + strings.ReplaceAll(exportStyle(), "</", "<\\/") + "</style>"
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
