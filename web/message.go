package web

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// imageTypes are the image types shown inline, as data: URLs.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// imageBlock shows an image block when its type is allowed and its data is base64.
func imageBlock(b sessions.Block) views.Block {
	mt, data := strings.ToLower(b.MimeType), b.Data
	if !imageTypes[mt] {
		return views.Block{Kind: "text", Text: fmt.Sprintf("[image of type %q not shown]", mt)}
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil {
		return views.Block{Kind: "text", Text: "[image not shown: its data is not valid base64]"}
	}
	return views.Block{Kind: "image", Mime: mt, Image: "data:" + mt + ";base64," + data}
}

// builder turns entry lines into conversation items.
type builder struct {
	md   *markdown
	s    *sessions.Session
	key  string // the session file's key, for links ("" in exports)
	home string
	clip bool // cut long texts (the page; an export keeps everything)
	cut  int  // bytes cut from the item being built
}

// Limits of what the page shows of one text; the rest is a "Full text" link
// away. pi itself cuts tool output at 2000 lines or 50 KB, so real sessions
// rarely reach them; a hand-made 100 MB line would stall the browser.
const (
	shownBytes    = 64 << 10
	shownLines    = 2000
	shownMarkdown = 128 << 10
)

// trim returns s, or when clipping its first shownLines lines and at most
// shownBytes bytes followed by "…", counting what it cut.
func (b *builder) trim(s string, limit int) string {
	if !b.clip || len(s) <= limit && strings.Count(s, "\n") < shownLines {
		return s
	}
	end := min(len(s), limit)
	for k, at := 0, 0; k < shownLines; k++ {
		nl := strings.IndexByte(s[at:end], '\n')
		if nl < 0 {
			break
		}
		at += nl + 1
		if k == shownLines-1 {
			end = at
		}
	}
	for end > 0 && end < len(s) && !utf8.RuneStart(s[end]) {
		end--
	}
	if end >= len(s) {
		return s
	}
	b.cut += len(s) - end
	return s[:end] + "…"
}

// text is trim with the plain-text limit.
func (b *builder) text(s string) string { return b.trim(s, shownBytes) }

// markdown renders s, cut first when clipping and it is very long.
func (b *builder) markdown(s string) string { return b.md.render(b.trim(s, shownMarkdown)) }

// clipped returns the note for the item or tool result of entry pos when
// texts were cut while building it (b.cut grew past before), or nil.
func (b *builder) clipped(pos, before int) *views.Clip {
	if b.cut == before {
		return nil
	}
	return &views.Clip{Omitted: views.Bytes(int64(b.cut - before)),
		URL: views.SessionURL(b.key) + "/text?e=" + url.QueryEscape(ref(b.s, pos))}
}

// info describes entry i.
func (b *builder) info(i int) views.EntryInfo {
	e := &b.s.Entries[i]
	return views.EntryInfo{Pos: i, Ref: ref(b.s, i), ID: e.ID, Type: e.Type, Role: e.Role, Time: entryTime(e),
		Label: b.s.LabelOf(i)}
}

// contentBlocks renders content blocks: text as markdown (or plain), thinking
// folded, images inline, anything else as JSON.
func (b *builder) contentBlocks(blocks []sessions.Block, markdown bool) []views.Block {
	var out []views.Block
	for _, bl := range blocks {
		switch bl.Type {
		case sessions.BlockText:
			t := bl.Text
			switch {
			case strings.TrimSpace(t) == "":
			case markdown:
				out = append(out, views.Block{Kind: "markdown", Sanitized: b.markdown(t)})
			default:
				out = append(out, views.Block{Kind: "text", Text: b.text(t)})
			}
		case sessions.BlockImage:
			out = append(out, imageBlock(bl))
		case sessions.BlockThinking:
			if strings.TrimSpace(bl.Text) != "" {
				out = append(out, views.Block{Kind: "thinking", Text: b.text(bl.Text)})
			} else if bl.Redacted {
				out = append(out, views.Block{Kind: "thinking", Text: "(redacted thinking)"})
			}
		default:
			out = append(out, views.Block{Kind: "text", Text: b.text(pretty(bl.Raw))})
		}
	}
	return out
}

// entryItem builds the item for entry i from its decoded line. results
// holds the tool results of the page by call id, for pairing; used ones are marked.
func (b *builder) entryItem(body *sessions.Body, results map[string]*pendingResult) views.Item {
	before := b.cut
	it := b.buildItem(body, results)
	it.Clip = b.clipped(it.Entry.Pos, before)
	return it
}

// buildItem is entryItem without the note on cut texts.
func (b *builder) buildItem(body *sessions.Body, results map[string]*pendingResult) views.Item {
	e := body.Entry
	it := views.Item{Entry: b.info(body.Pos)}
	if e.Flags.Has(sessions.FlagNotObject) {
		it.Kind, it.Title, it.Raw = "raw", "line "+fmt.Sprint(e.Line), b.text(string(body.Line))
		return it
	}
	switch e.Type {
	case sessions.TypeMessage:
		return b.messageItem(it, body.Msg, results)
	case sessions.TypeCustomMessage:
		it.Kind, it.Title = "custom", "["+body.CustomType+"]"
		it.Blocks = b.contentBlocks(body.Msg.Content.Blocks(), true)
		it.Hidden = !body.Msg.Display
		it.Raw = b.text(pretty(body.Details))
	case sessions.TypeCompaction:
		it.Kind, it.Title = "compaction", "Compaction"
		it.Meta = "from " + views.Tokens(int64(body.TokensBefore)) + " tokens"
		it.Blocks = []views.Block{{Kind: "markdown", Sanitized: b.markdown(body.Summary)}}
		if k := body.FirstKept; k != "" {
			it.Note = "Kept from entry " + k + " on."
		}
		it.Raw = b.text(pretty(body.Details))
	case sessions.TypeBranchSummary:
		it.Kind, it.Title = "summary", "Branch summary"
		it.Blocks = []views.Block{{Kind: "markdown", Sanitized: b.markdown(body.Summary)}}
		if f := body.FromID; f != "" {
			it.Note = "Came back from " + f + "."
			if _, ok := b.s.Lookup(f); !ok && f != "root" {
				it.Note += " (That entry is not in this file.)"
			}
		}
		it.Raw = b.text(pretty(body.Details))
	case sessions.TypeModelChange:
		it.Kind, it.Note = "setting", "model → "+body.Provider+"/"+body.ModelID
	case sessions.TypeThinking:
		it.Kind, it.Note = "setting", "thinking level → "+body.Level
	case sessions.TypeLabel:
		it.Kind = "setting"
		if e.Flags.Has(sessions.FlagLabelSet) {
			it.Note = fmt.Sprintf("label [%s] on %s", e.Text, e.Target)
		} else {
			it.Note = "label cleared on " + e.Target
		}
	case sessions.TypeSessionInfo:
		it.Kind, it.Note = "setting", "session named “"+body.Name+"”"
	case sessions.TypeCustom:
		it.Kind, it.Note, it.Raw = "setting", "custom entry ["+body.CustomType+"]", b.text(pretty(body.Data))
	case sessions.TypeContextEdit:
		it.Kind = "setting"
		if e.Flags.Has(sessions.FlagEditDrop) {
			it.Note = "context edit: omit " + e.Target
		} else {
			it.Note, it.Raw = "context edit: replace "+e.Target, b.text(pretty(body.Replacement))
		}
	case sessions.TypeUsage:
		it.Kind = "setting"
		it.Note = fmt.Sprintf("usage (%s) %s · %s tokens · %s", body.Kind, e.Text, views.Tokens(e.Tokens), views.Cost(e.Cost))
	default:
		it.Kind, it.Title, it.Raw = "raw", cmp.Or(e.Type, "entry"), b.text(pretty(body.Line))
	}
	return it
}

// pendingResult is a tool result of the page, waiting for its call.
type pendingResult struct {
	pos  int
	msg  *sessions.Message
	used bool
}

// messageItem builds the item for an agent message.
func (b *builder) messageItem(it views.Item, m *sessions.Message, results map[string]*pendingResult) views.Item {
	switch m.Role {
	case sessions.RoleUser:
		it.Kind, it.Title = "user", "user"
		it.Blocks = b.contentBlocks(m.Content.Blocks(), true)
	case sessions.RoleAssistant:
		it.Kind, it.Title = "assistant", "assistant"
		it.Meta = assistantMeta(m)
		for _, bl := range m.Content.Blocks() {
			if bl.Type != sessions.BlockToolCall {
				it.Blocks = append(it.Blocks, b.contentBlocks([]sessions.Block{bl}, true)...)
				continue
			}
			call := b.toolCall(bl)
			if r := results[call.ID]; r != nil && !r.used && call.ID != "" && r.pos > it.Entry.Pos {
				r.used = true
				res := b.toolResult(r.pos, r.msg, &call)
				call.Result = &res
			}
			it.Blocks = append(it.Blocks, views.Block{Kind: "call", Call: &call})
		}
		switch m.StopReason {
		case "aborted":
			it.Error = "Aborted"
			if m.ErrorMessage != "" {
				it.Error += ": " + m.ErrorMessage
			}
		case "error":
			it.Error = "Error: " + cmp.Or(m.ErrorMessage, "unknown error")
		case "length":
			it.Note = "Stopped at the output token limit."
		}
	case sessions.RoleToolResult:
		it.Kind, it.Title = "tool", "tool result · "+m.ToolName
		call := views.ToolCall{ID: m.ToolCallID, Name: m.ToolName, Summary: "(its call is not shown)"}
		res := b.toolResult(it.Entry.Pos, m, &call)
		res.Own = true
		call.Result = &res
		it.Blocks = []views.Block{{Kind: "call", Call: &call}}
	case sessions.RoleBash:
		it.Kind, it.Title = "bash", "bash (user)"
		bash := &views.Bash{Command: b.text(m.Command), Output: b.text(m.Output), Truncated: m.Truncated,
			FullOutputPath: m.FullOutputPath, Excluded: m.ExcludeFromContext}
		switch {
		case m.Cancelled:
			bash.Status = "cancelled"
		case m.ExitCode != nil && *m.ExitCode != 0:
			bash.Status = fmt.Sprintf("exit %v", *m.ExitCode)
		}
		it.Bash = bash
	case sessions.RoleCustom:
		it.Kind, it.Title = "custom", "["+m.CustomType+"]"
		it.Blocks = b.contentBlocks(m.Content.Blocks(), true)
		it.Hidden = !m.Display
		it.Raw = b.text(pretty(m.Details))
	case sessions.RoleSystem:
		it.Kind, it.Title = "system", "system prompt"
		it.Blocks = []views.Block{{Kind: "details", Summary: "System prompt", Text: b.text(m.Content.Text("\n"))}}
		if rest := m.Without("role", "content", "timestamp"); rest != nil {
			it.Raw = b.text(pretty(rest))
		}
	case sessions.RoleBranchSummary:
		it.Kind, it.Title = "summary", "Branch summary"
		it.Blocks = []views.Block{{Kind: "markdown", Sanitized: b.markdown(m.Summary)}}
	case sessions.RoleCompactionSummary:
		it.Kind, it.Title = "compaction", "Compaction summary"
		it.Meta = "from " + views.Tokens(int64(m.TokensBefore)) + " tokens"
		it.Blocks = []views.Block{{Kind: "markdown", Sanitized: b.markdown(m.Summary)}}
	default:
		it.Kind, it.Title, it.Raw = "raw", cmp.Or(m.Role, "message"), b.text(pretty(m.Obj.JSON()))
	}
	return it
}

// assistantMeta is the model, tokens and cost of an assistant message.
func assistantMeta(m *sessions.Message) string {
	var parts []string
	if m.Model != "" {
		parts = append(parts, m.Model)
	}
	if m.UsageWritten {
		parts = append(parts, views.Tokens(int64(m.Usage.Tokens()))+" tok", views.Cost(m.Usage.Cost))
	}
	return strings.Join(parts, " · ")
}

// toolCall reads a toolCall block, as pi's export shows its own tools.
func (b *builder) toolCall(bl sessions.Block) views.ToolCall {
	args := bl.ToolArgs()
	c := views.ToolCall{ID: bl.ID, Name: bl.Name, Summary: toolSummary(bl.Name, args, bl.Args, b.home),
		Args: b.text(pretty(bl.Args))}
	path := args.Path
	switch bl.Name {
	case "bash", "grep", "find":
		c.Kind = bl.Name
	case "read":
		c.Kind, c.Path, c.Range = "read", shortPath(cmp.Or(path, "."), b.home), readRange(args)
	case "write":
		c.Kind, c.Path = "write", shortPath(path, b.home)
		if content := args.Content(); content != "" {
			if n := strings.Count(content, "\n") + 1; n > 10 {
				c.Extra = fmt.Sprintf("(%d lines)", n)
			}
			c.Content = b.code(content, path, 10)
		}
	case "edit":
		c.Kind, c.Path = "edit", shortPath(path, b.home)
	case "ls":
		c.Kind, c.Path = "ls", shortPath(cmp.Or(path, "."), b.home)
		if l := args.Limit; len(l) > 0 {
			c.Extra = "(limit " + js.ToString(l) + ")"
		}
	default:
		c.ArgsCode = b.code(c.Args, "args.json", 10)
	}
	return c
}

// outputLines is how many lines of a tool's output show before "… (N more lines)", as in pi's export.
var outputLines = map[string]int{"bash": 5, "read": 10, "ls": 20, "grep": 10, "find": 10}

// code makes text into code to show: cut when very long (see trim),
// highlighted for file's type, collapsed to its first preview lines.
func (b *builder) code(text, file string, preview int) *views.Code {
	text = b.text(text)
	c := &views.Code{}
	c.HTML, _ = codeHTML(text, "", file)
	lines := strings.Split(text, "\n")
	if len(lines) > preview+1 { // pi shows up to one more line than the preview rather than a "1 more line" note
		c.PreviewHTML, _ = codeHTML(strings.Join(lines[:preview], "\n"), "", file)
		c.More = len(lines) - preview
	}
	return c
}

// readRange is pi's formatReadLineRange of a read's offset and limit: ":start-end".
func readRange(args sessions.ToolArgs) string {
	num := func(v []byte) (float64, bool) {
		if len(v) == 0 || js.IsNull(v) {
			return 0, false
		}
		f := js.ToNumber(v)
		return f, f == f
	}
	offset, hasOff := num(args.Offset)
	limit, hasLim := num(args.Limit)
	if !hasOff && !hasLim {
		return ""
	}
	start := 1.0
	if hasOff {
		start = offset
	}
	if !hasLim {
		return ":" + js.FormatNumber(start)
	}
	return ":" + js.FormatNumber(start) + "-" + js.FormatNumber(start+limit-1)
}

// shortPath is a path as pi shows it: inside the home folder, from "~".
func shortPath(p, home string) string {
	if home != "" && (p == home || strings.HasPrefix(p, home+"/")) {
		return "~" + p[len(home):]
	}
	return p
}

// toolResult reads a toolResult message at entry pos, the result of call.
// The text of pi's own tools shows as pi's export shows it (read
// highlighted by the file's type), collapsed to its first lines.
func (b *builder) toolResult(pos int, m *sessions.Message, call *views.ToolCall) views.ToolResult {
	before := b.cut
	r := views.ToolResult{Entry: b.info(pos), IsError: m.IsError}
	blocks := m.Content.Blocks()
	var texts []string
	var others []sessions.Block
	for _, bl := range blocks {
		if bl.Type == sessions.BlockText {
			texts = append(texts, bl.Text)
		} else {
			others = append(others, bl)
		}
	}
	if text := strings.Join(texts, "\n"); strings.TrimSpace(text) != "" {
		file := ""
		if call.Kind == "read" {
			file = m.ToolDetails().Path
			if file == "" {
				file = call.Path
			}
		}
		if call.Kind == "bash" || call.Kind == "ls" {
			text = strings.TrimSpace(text)
		}
		r.Output = b.code(text, file, cmp.Or(outputLines[call.Kind], 10))
		blocks = others
	}
	r.Blocks = b.contentBlocks(blocks, false)
	if len(m.Details) > 0 && m.Details[0] == '{' {
		d := m.ToolDetails()
		r.Diff = b.text(d.Diff)
		var rest json.RawMessage
		if r.Diff != "" {
			rest = d.Without("diff")
		} else {
			rest = d.Without()
		}
		if rest != nil {
			r.Details = b.text(pretty(rest))
		}
	} else {
		r.Details = b.text(pretty(m.Details))
	}
	r.Clip = b.clipped(pos, before)
	b.cut = before // the result's own note covers it
	return r
}

// toolSummary is the one-line gist of a tool call, as pi's tree shows it.
func toolSummary(name string, args sessions.ToolArgs, raw json.RawMessage, home string) string {
	short := func(p string) string {
		if home != "" && (p == home || strings.HasPrefix(p, home+"/")) {
			return "~" + p[len(home):]
		}
		return p
	}
	path := args.Path
	switch name {
	case "read", "write", "edit", "ls":
		return short(cmp.Or(path, "."))
	case "bash":
		return oneLine(args.Command, 200)
	case "grep":
		return "/" + args.Pattern + "/ in " + short(cmp.Or(path, "."))
	case "find":
		return args.Pattern + " in " + short(cmp.Or(path, "."))
	}
	return oneLine(string(raw), 120)
}
