package views

import (
	"net/url"
	"strings"
	"time"
)

// PathView is the conversation along the root-to-entry path of the selected
// entry, or one earlier page of it.
type PathView struct {
	Key        string // the session file's key
	Target     EntryInfo
	Tab        string // TabConversation or TabContext
	Depth      int    // entries on the path: the selected entry's depth
	PathLen    int    // entries on the path read (longer than Depth when the depth box selected an entry on a longer one)
	Model      string // the model in force at the entry
	Thinking   string // the thinking level in force at the entry
	Messages   int    // model messages in the context at the entry (context tab)
	Items      []Item
	Earlier    int          // entries (or context entries) before this page
	EarlierURL string       // the previous page; "" at the root
	Later      int          // entries after this page (a page opened at a depth)
	LaterURL   string       // the next page down; "" at the end
	JumpURL    string       // the conversation's page at a depth: add depth=N (1-based)
	Page       bool         // an earlier page: items only
	LeafURL    string       // the session page viewing the path to the entry (pi's leaf unchanged)
	Viewing    string       // the leaf of the path the page views when it is not pi's, else ""
	ResumeRef  string       // pi's leaf while Viewing: where pi resumes
	ResumeURL  string       // the session page back on pi's own path
	LinkURL    string       // a deep link to the entry
	Actions    *ActionsView // the write actions on the entry; nil on an earlier page
	State      TreeState
	Note       string     // why another entry than the one asked for is shown: the page reloads its rows
	Path       Totals     // summed along the path (pi's arithmetic)
	Files      int        // files changed along the path
	Commands   int        // bash calls along the path (may have changed files, not tracked)
	FilesView  *FilesView // the files tab
	CompareURL string     // the comparison page with this entry as "a"; the second entry is added as b
}

// Tabs of the conversation pane.
const (
	TabConversation = "conversation"
	TabContext      = "context"
	TabFiles        = "files"
)

// EntryInfo identifies an entry.
type EntryInfo struct {
	Pos   int
	Ref   string // id, or "~pos"
	ID    string
	Type  string
	Role  string
	Time  time.Time
	Label string
}

// Item is one entry (or, in the context tab, one model message) as the conversation shows it.
type Item struct {
	Kind   string // user, assistant, tool, bash, custom, summary, compaction, system, setting, raw
	Entry  EntryInfo
	Target bool   // the selected entry
	Title  string // the header line ("assistant", "[reminder]", "Branch summary")
	Meta   string // right-aligned details: model, tokens, cost
	Blocks []Block
	Error  string // an error or abort message
	Note   string // one-line text of a setting entry
	Raw    string // indented JSON (details, data, unknown entries)
	Hidden bool   // a custom message pi does not display
	Kept   bool   // context tab: kept from before the compaction
	Edited bool   // context tab: changed or dropped by a context edit
	Bash   *Bash
	Link   string // a link to the entry on the session page, for its copy button ("" in exports)
	Export bool   // in an offline export, where the entry id links to the entry itself (there is no tree)
	Clip   *Clip
	Sub    int    // a second (third, …) item of the same entry (a compaction's system prompt and summary): its own element ids
	From   string // the item is not an entry of its own but comes from this one (a compaction's system prompt)
	// A run of settings entries (Kind "noise"), one line that opens on its
	// first entries (Members) and says how many more it holds.
	Members []Item
	More    int
}

// DOMID is the item's element id: m<pos>, or m<pos>.<sub> for a further item of one entry.
func (it Item) DOMID() string {
	if it.Sub > 0 {
		return "m" + Itoa(it.Entry.Pos) + "." + Itoa(it.Sub)
	}
	return "m" + Itoa(it.Entry.Pos)
}

// Bash is a user's ! command (a bashExecution message).
type Bash struct {
	Command        string
	Output         string
	Status         string // "exit 1", "cancelled", "" for success
	Truncated      bool
	FullOutputPath string
	Excluded       bool // excluded from the model's context (!!)
}

// Block is one part of a message.
type Block struct {
	Kind string // markdown, text, thinking, details, image, call
	// Sanitized is markdown rendered to HTML and passed through bluemonday;
	// only web's renderer sets it.
	Sanitized string
	Text      string
	Summary   string // the label of a details block
	Image     string // a data: URL of a checked image/png|jpeg|gif|webp payload
	Mime      string
	Call      *ToolCall
}

// ToolCall is an assistant's tool call with its result when the path holds one.
type ToolCall struct {
	ID      string
	Name    string
	Summary string // the main argument (path, command), one line
	Args    string // indented JSON
	Result  *ToolResult

	// How pi shows the call, for its own tools: Kind is "bash", "read",
	// "write", "edit", "ls", "grep", "find", or "" for any other tool (its
	// name and arguments).
	Kind     string
	Path     string // read, write, edit, ls: the file or folder (~ for home)
	Range    string // read: ":start-end"
	Extra    string // write: "(N lines)"; ls: "(limit N)"
	Content  *Code  // write: the content written, highlighted by the file's type
	ArgsCode *Code  // another tool: its arguments
}

// Code is a text shown as code: highlighted when its language is known,
// collapsed to its first lines ("… (N more lines)") when it is long, as
// pi's export shows tool output. HTML and PreviewHTML are escaped or
// highlighted text, never session markup.
type Code struct {
	HTML        string // the whole text
	PreviewHTML string // its first lines, when it is collapsed
	More        int    // lines not in the preview; 0 when it is not collapsed
}

// ToolResult is a tool's output.
type ToolResult struct {
	Entry   EntryInfo
	Target  bool
	Blocks  []Block // text and image blocks
	IsError bool
	Diff    string
	Details string // indented JSON of details other than diff
	Clip    *Clip  // set when long texts of the result were cut
	Own     bool   // the result is an item of its own (its call is not shown): the item carries its id
	Output  *Code  // the result's text, as pi's tool shows it (highlighted for read); nil: Blocks show it
}

// Clip says that long texts of an entry were cut on the page and where its full text is.
type Clip struct {
	Omitted string // how much was cut ("19.9 MB")
	URL     string // the entry's full text, as plain text
}

// EntryURL returns the URL of the conversation fragment for entry ref, keeping
// the tree state st for its links; before >= 0 asks for an earlier page.
func EntryURL(session, ref, tab string, before int, st TreeState) string {
	st.Target = ""
	v := st.Values()
	v.Set("e", ref)
	if tab == TabContext || tab == TabFiles {
		v.Set("view", tab)
	}
	if before >= 0 {
		v.Set("before", Itoa(before))
	}
	return "/s/" + url.PathEscape(session) + "/entry?" + v.Encode()
}

func tabQuery(name string) string {
	if name == TabContext || name == TabFiles {
		return "&view=" + name
	}
	return ""
}

func ariaCurrent(on bool) string {
	if on {
		return "page"
	}
	return "false"
}

func orDash(s string) string {
	if s == "" {
		return "no model"
	}
	return s
}

// entryTitle names an entry for the conversation header.
func entryTitle(e EntryInfo) string {
	if e.Role != "" {
		return e.Role
	}
	return strings.ReplaceAll(e.Type, "_", " ")
}

// DiffLine is one line of a diff with its CSS class.
type DiffLine struct{ Class, Text string }

func diffLines(d string) []DiffLine {
	lines := strings.Split(d, "\n")
	out := make([]DiffLine, len(lines))
	for i, l := range lines {
		c := "ctx"
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		}
		out[i] = DiffLine{c, l + "\n"}
	}
	return out
}

// filesTab is the files tab's label with the number of files.
func filesTab(n int) string {
	if n == 0 {
		return "Files"
	}
	return "Files (" + Itoa(n) + ")"
}
