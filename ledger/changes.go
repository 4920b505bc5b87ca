package ledger

import (
	"strings"

	"github.com/piweb/piweb/patch"
	"github.com/piweb/piweb/sessions"
)

// FileChange is one change pi's edit or write tool made to a file.
type FileChange struct {
	EntryID string `json:"entryId"` // the tool result's entry
	Pos     int    `json:"-"`
	Tool    string `json:"tool"`  // "edit" or "write"
	Patch   string `json:"patch"` // unified diff of this change
	Added   int    `json:"-"`
	Removed int    `json:"-"`
	// Created marks a write to a file no earlier change on the path wrote:
	// a new file, or one replaced whose content before is not in the session.
	Created bool `json:"created,omitempty"`
}

// FileChanges are the changes to one file along a path, in order.
type FileChanges struct {
	Path    string       `json:"path"`
	Added   int          `json:"added"`
	Removed int          `json:"removed"`
	Changes []FileChange `json:"changes"`

	base    string // content before the first change, when known ("" for a created file)
	final   string // content after the last change, while known
	known   bool   // final is the whole file
	created bool   // the first change created the file (as far as the session tells)
}

// Command is a bash call along a path: it may have changed files, which
// are not tracked.
type Command struct {
	EntryID string `json:"entryId"`
	Pos     int    `json:"-"`
	Command string `json:"command"`
}

// Changes are the files pi's tools changed along a path, and the shell
// commands that may have changed others.
type Changes struct {
	Files []*FileChanges
	Bash  []Command
}

// Paths returns the changed files' paths, in order of first change.
func (c *Changes) Paths() []string {
	out := make([]string, len(c.Files))
	for i, f := range c.Files {
		out[i] = f.Path
	}
	return out
}

// Changes reads the file changes along the entries at positions (a path,
// root first): each successful edit (its result's details.patch, or its
// display diff) and write (the content in its arguments), and each bash
// call, whether pi ran it as a tool or as a "!" command.
func ChangesOf(r *sessions.Reader, positions []int) (*Changes, error) {
	type call struct {
		name string
		args sessions.ToolArgs
	}
	calls := map[string]call{}
	out := &Changes{}
	byPath := map[string]*FileChanges{}
	seq := r.Sequential()
	defer seq.Close()
	for _, p := range positions {
		e := &r.Session().Entries[p]
		if e.Type != sessions.TypeMessage || (e.Role != sessions.RoleAssistant && e.Role != sessions.RoleToolResult && e.Role != sessions.RoleBash) {
			continue
		}
		line, err := seq.RawQuick(p)
		if err != nil {
			return nil, err
		}
		// Most lines change no file: the assistant's are read for their tool
		// calls alone, and a tool result only when its call was an edit or a write.
		if e.Role == sessions.RoleAssistant {
			for _, b := range sessions.ToolCallsOf(line) {
				args := b.ToolArgs()
				calls[b.ID] = call{b.Name, args}
				if b.Name == "bash" {
					out.Bash = append(out.Bash, Command{e.ID, p, args.Command})
				}
			}
			continue
		}
		if e.Role == sessions.RoleToolResult {
			if c, ok := calls[sessions.ToolCallIDOf(line)]; !ok || (c.name != "edit" && c.name != "write") {
				continue
			}
		}
		m := sessions.DecodeBody(e, line).Msg
		switch m.Role {
		case sessions.RoleBash:
			out.Bash = append(out.Bash, Command{e.ID, p, "!" + m.Command})
		case sessions.RoleToolResult:
			c, ok := calls[m.ToolCallID]
			if !ok || m.IsError || (c.name != "edit" && c.name != "write") {
				continue
			}
			path := c.args.Path
			if path == "" {
				continue
			}
			f := byPath[path]
			if f == nil {
				f = &FileChanges{Path: path}
				byPath[path] = f
				out.Files = append(out.Files, f)
			}
			ch := FileChange{EntryID: e.ID, Pos: p, Tool: c.name}
			if c.name == "write" {
				content := c.args.Content()
				first := len(f.Changes) == 0
				ch.Created = first || !f.known
				before := ""
				if f.known {
					before = f.final
				}
				ch.Patch = patch.Diff(path, before, content, ch.Created)
				if first {
					f.created, f.base = true, ""
				}
				f.final, f.known = content, true
			} else {
				d := m.ToolDetails()
				ch.Patch = d.Patch
				if ch.Patch != "" {
					ch.Patch = patch.Relabel(ch.Patch, path)
				} else {
					ch.Patch = patch.FromDisplay(path, d.Diff)
				}
				if ch.Patch == "" {
					ch.Patch = editArgsPatch(path, c.args)
				}
				if f.known {
					next, err := patch.Apply(ch.Patch, f.final)
					f.final, f.known = next, err == nil
				}
			}
			ch.Added, ch.Removed = patch.Count(ch.Patch)
			f.Added += ch.Added
			f.Removed += ch.Removed
			f.Changes = append(f.Changes, ch)
		}
	}
	return out, nil
}

// Patch returns the net unified patch of the changes: for a file the path
// created, one diff from nothing to its final content; for any other file,
// its changes' diffs in order (its content before them is not in the
// session), which patch(1) and git apply take one after another.
func (c *Changes) Patch() string {
	var b strings.Builder
	for _, f := range c.Files {
		if f.created && f.known {
			b.WriteString(patch.Diff(f.Path, f.base, f.final, true))
			continue
		}
		for _, ch := range f.Changes {
			if ch.Created {
				b.WriteString("# " + oneLineOf(f.Path) + ": written whole; its content before is not in the session\n")
			}
			b.WriteString(ch.Patch)
			if ch.Patch != "" && !strings.HasSuffix(ch.Patch, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// oneLineOf keeps a path on one line of a patch's comment.
func oneLineOf(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// editArgsPatch is the patch of an edit whose result records no diff: its
// arguments' old and new texts (pi's edits[] or the older oldText/newText),
// each a hunk whose line numbers count from the text itself; patch(1) finds
// the place by its context lines.
func editArgsPatch(path string, args sessions.ToolArgs) string {
	var b strings.Builder
	for _, ed := range args.Edits() {
		if ed.Old == ed.New {
			continue
		}
		d := patch.Diff(path, ed.Old+"\n", ed.New+"\n", false)
		if b.Len() > 0 {
			_, d, _ = strings.Cut(d, "\n+++ ") // one header for the file
			_, d, _ = strings.Cut(d, "\n")
		}
		b.WriteString(d)
	}
	return b.String()
}
