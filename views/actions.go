package views

import "net/url"

// ActionsView is the panel of write actions for the selected entry: label,
// rewind, fork and share, or the upgrade offer for a read-only file.
type ActionsView struct {
	Key      string // the session file's key
	File     string // the session file's path
	Ref      string // the entry's id; "" when it has none (no action can name it)
	Kind     string // what the entry is ("user", "assistant", "label", …), to name it
	Preview  string // a short text of the entry, to name it
	Label    string // the entry's label in force
	Leaf     string // the session's leaf when the panel was drawn, sent back as expectLeaf
	Version  int    // the file's format version
	LeafNoID bool   // the file's last line has no id: a label would change where pi resumes
	// Machine is the machine the session lives on, when this is a team
	// server's copy of it: piweb does not change it (see Elsewhere).
	Machine string

	Open    string  // the form to show open: "label", "rewind", "fork", "share" or ""
	Failed  bool    // the last action was refused: its form stays open with what was typed
	Summary string  // the rewind summary typed, kept when the rewind was refused
	Draft   *string // the label typed, kept when it was refused
}

// Outcome is what an action did, shown as a card above the conversation
// until the user dismisses it.
type Outcome struct {
	Action  string // "Label", "Rewind", "Fork", "Save", "Upgrade"
	Ref     string // the entry it acted on
	Preview string
	Failed  bool
	Message string
	Fork    *ForkResult
	Saved   string // the path an export was saved to
	Backup  string // the backup an upgrade kept
	Undo    *Undo  // a rewind that can be taken back: its Undo button
}

// Undo takes a rewind back: a rewind to the leaf pi resumed from before,
// itself what pi writes for a rewind, refused if pi moved on meanwhile.
type Undo struct {
	URL    string // the rewind action
	Entry  string // the leaf before the rewind
	Expect string // the leaf the rewind made (the undo is refused if the session moved on)
	Panel  string // the entry whose actions panel the answer draws
}

// ForkResult is a session made by "Fork from here".
type ForkResult struct {
	ID      string // the new session's id
	Key     string // its key in the library
	File    string // its absolute path
	Command string // the shell command that resumes it in pi
}

// ReadOnly reports whether piweb does not append to the file: pi rewrites
// versions 1 and 2 when it opens them, and versions after 3 are formats
// piweb does not know.
func (a ActionsView) ReadOnly() bool { return a.Version != 3 }

// Upgradable reports whether the file is in a format pi migrates (1 or 2).
func (a ActionsView) Upgradable() bool { return a.Version == 1 || a.Version == 2 }

// LabelValue is what the label field shows: the text typed before a refusal, else the current label.
func (a ActionsView) LabelValue() string {
	if a.Draft != nil {
		return *a.Draft
	}
	return a.Label
}

// ActionURL returns the URL an action form posts to.
func (a ActionsView) ActionURL(action string) string {
	return "/s/" + url.PathEscape(a.Key) + "/actions/" + action
}

// PreviewURL returns the URL of what the share form would redact.
func (a ActionsView) PreviewURL() string {
	return "/s/" + url.PathEscape(a.Key) + "/redactions"
}

// RedactionPreview is what a share will remove, shown before it is made.
type RedactionPreview struct {
	Secrets  bool // secrets are to be redacted
	Found    []FoundSecret
	Entries  int // entries holding a secret
	Thinking int // thinking blocks replaced (when thinking is redacted)
	Tools    int // tool results and bash outputs replaced (when tool output is redacted)
	Shown    int // how many of Found are listed
}

// FoundSecret is one secret a share removes: where, what found it, masked.
type FoundSecret struct {
	Entry, Rule, Masked string
	URL                 string // the entry on the session page
}

// ExportURL returns the URL the share form downloads from.
func (a ActionsView) ExportURL() string {
	return "/s/" + url.PathEscape(a.Key) + "/export"
}

// FormatVersion names a format version for people.
func FormatVersion(v int) string { return "version " + Itoa(v) }

func msgRole(failed bool) string {
	if failed {
		return "alert"
	}
	return "status"
}
