package web

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// jobj is a JSON object read leniently: a field of an unexpected type reads as empty.
type jobj map[string]json.RawMessage

func parseJSON(b []byte) jobj {
	var o jobj
	if json.Unmarshal(b, &o) != nil {
		return nil
	}
	return o
}

func (o jobj) str(k string) string {
	var s string
	if json.Unmarshal(o[k], &s) != nil {
		return ""
	}
	return s
}

func (o jobj) num(k string) float64 {
	var f float64
	if json.Unmarshal(o[k], &f) != nil {
		return 0
	}
	return f
}

func (o jobj) boolean(k string) bool {
	var b bool
	return json.Unmarshal(o[k], &b) == nil && b
}

func (o jobj) has(k string) bool {
	v, ok := o[k]
	return ok && string(v) != "null"
}

func (o jobj) obj(k string) jobj { return parseJSON(o[k]) }

// blocks reads a content value: a string is one text block.
func (o jobj) blocks(k string) []jobj {
	raw := o[k]
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []jobj{{"type": json.RawMessage(`"text"`), "text": raw}}
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	out := make([]jobj, 0, len(list))
	for _, b := range list {
		if bo := parseJSON(b); bo != nil {
			out = append(out, bo)
		}
	}
	return out
}

// pretty indents JSON for display; "" for absent or null.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// imageTypes are the image types shown inline, as data: URLs.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// imageBlock shows an image block when its type is allowed and its data is base64.
func imageBlock(b jobj) views.Block {
	mt, data := strings.ToLower(b.str("mimeType")), b.str("data")
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
		URL: views.SessionURL(b.s.Header.ID) + "/text?e=" + url.QueryEscape(ref(b.s, pos))}
}

// info describes entry i.
func (b *builder) info(i int) views.EntryInfo {
	e := &b.s.Entries[i]
	return views.EntryInfo{Pos: i, Ref: ref(b.s, i), ID: e.ID, Type: e.Type, Role: e.Role, Time: entryTime(e),
		Label: b.s.LabelOf(i)}
}

// markdownBlocks renders content blocks: text as markdown, images inline, anything else as JSON.
func (b *builder) contentBlocks(blocks []jobj, markdown bool) []views.Block {
	var out []views.Block
	for _, bl := range blocks {
		switch bl.str("type") {
		case "text":
			t := bl.str("text")
			switch {
			case strings.TrimSpace(t) == "":
			case markdown:
				out = append(out, views.Block{Kind: "markdown", Sanitized: b.markdown(t)})
			default:
				out = append(out, views.Block{Kind: "text", Text: b.text(t)})
			}
		case "image":
			out = append(out, imageBlock(bl))
		case "thinking":
			if t := bl.str("thinking"); strings.TrimSpace(t) != "" {
				out = append(out, views.Block{Kind: "thinking", Text: b.text(t)})
			} else if bl.boolean("redacted") {
				out = append(out, views.Block{Kind: "thinking", Text: "(redacted thinking)"})
			}
		default:
			raw, _ := json.Marshal(bl)
			out = append(out, views.Block{Kind: "text", Text: b.text(pretty(raw))})
		}
	}
	return out
}

// entryItem builds the item for entry i from its line. results holds the
// tool results of the page by call id, for pairing; used ones are marked.
func (b *builder) entryItem(i int, line []byte, o jobj, results map[string]*pendingResult) views.Item {
	before := b.cut
	it := b.buildItem(i, line, o, results)
	it.Clip = b.clipped(i, before)
	return it
}

// buildItem is entryItem without the note on cut texts.
func (b *builder) buildItem(i int, line []byte, o jobj, results map[string]*pendingResult) views.Item {
	e := &b.s.Entries[i]
	it := views.Item{Entry: b.info(i)}
	if o == nil {
		it.Kind, it.Title, it.Raw = "raw", "line "+fmt.Sprint(e.Line), b.text(string(line))
		return it
	}
	switch e.Type {
	case sessions.TypeMessage:
		return b.messageItem(it, o.obj("message"), results)
	case sessions.TypeCustomMessage:
		it.Kind, it.Title = "custom", "["+o.str("customType")+"]"
		it.Blocks = b.contentBlocks(o.blocks("content"), true)
		it.Hidden = !o.boolean("display")
		it.Raw = b.text(pretty(o["details"]))
	case sessions.TypeCompaction:
		it.Kind, it.Title = "compaction", "Compaction"
		it.Meta = "from " + views.Tokens(int64(o.num("tokensBefore"))) + " tokens"
		it.Blocks = []views.Block{{Kind: "markdown", Sanitized: b.markdown(o.str("summary"))}}
		if k := o.str("firstKeptEntryId"); k != "" {
			it.Note = "Kept from entry " + k + " on."
		}
		it.Raw = b.text(pretty(o["details"]))
	case sessions.TypeBranchSummary:
		it.Kind, it.Title = "summary", "Branch summary"
		it.Blocks = []views.Block{{Kind: "markdown", Sanitized: b.markdown(o.str("summary"))}}
		if f := o.str("fromId"); f != "" {
			it.Note = "Came back from " + f + "."
			if _, ok := b.s.Lookup(f); !ok && f != "root" {
				it.Note += " (That entry is not in this file.)"
			}
		}
		it.Raw = b.text(pretty(o["details"]))
	case sessions.TypeModelChange:
		it.Kind, it.Note = "setting", "model → "+o.str("provider")+"/"+o.str("modelId")
	case sessions.TypeThinking:
		it.Kind, it.Note = "setting", "thinking level → "+o.str("thinkingLevel")
	case sessions.TypeLabel:
		it.Kind = "setting"
		if e.Flags.Has(sessions.FlagLabelSet) {
			it.Note = fmt.Sprintf("label [%s] on %s", e.Text, e.Target)
		} else {
			it.Note = "label cleared on " + e.Target
		}
	case sessions.TypeSessionInfo:
		it.Kind, it.Note = "setting", "session named “"+o.str("name")+"”"
	case sessions.TypeCustom:
		it.Kind, it.Note, it.Raw = "setting", "custom entry ["+o.str("customType")+"]", b.text(pretty(o["data"]))
	case sessions.TypeContextEdit:
		it.Kind = "setting"
		if e.Flags.Has(sessions.FlagEditDrop) {
			it.Note = "context edit: omit " + e.Target
		} else {
			it.Note, it.Raw = "context edit: replace "+e.Target, b.text(pretty(o["replacement"]))
		}
	case sessions.TypeUsage:
		it.Kind = "setting"
		it.Note = fmt.Sprintf("usage (%s) %s · %s tokens · %s", o.str("kind"), e.Text, views.Tokens(e.Tokens), views.Cost(e.Cost))
	default:
		it.Kind, it.Title, it.Raw = "raw", cmp.Or(e.Type, "entry"), b.text(pretty(line))
	}
	return it
}

// pendingResult is a tool result of the page, waiting for its call.
type pendingResult struct {
	pos  int
	msg  jobj
	used bool
}

// messageItem builds the item for an agent message.
func (b *builder) messageItem(it views.Item, m jobj, results map[string]*pendingResult) views.Item {
	role := m.str("role")
	switch role {
	case "user":
		it.Kind, it.Title = "user", "user"
		it.Blocks = b.contentBlocks(m.blocks("content"), true)
	case "assistant":
		it.Kind, it.Title = "assistant", "assistant"
		it.Meta = assistantMeta(m)
		for _, bl := range m.blocks("content") {
			if bl.str("type") != "toolCall" {
				it.Blocks = append(it.Blocks, b.contentBlocks([]jobj{bl}, true)...)
				continue
			}
			call := b.toolCall(bl)
			if r := results[call.ID]; r != nil && !r.used && call.ID != "" && r.pos > it.Entry.Pos {
				r.used = true
				res := b.toolResult(r.pos, r.msg)
				call.Result = &res
			}
			it.Blocks = append(it.Blocks, views.Block{Kind: "call", Call: &call})
		}
		switch m.str("stopReason") {
		case "aborted":
			it.Error = "Aborted"
			if em := m.str("errorMessage"); em != "" {
				it.Error += ": " + em
			}
		case "error":
			it.Error = "Error: " + cmp.Or(m.str("errorMessage"), "unknown error")
		case "length":
			it.Note = "Stopped at the output token limit."
		}
	case "toolResult":
		it.Kind, it.Title = "tool", "tool result · "+m.str("toolName")
		res := b.toolResult(it.Entry.Pos, m)
		call := views.ToolCall{ID: m.str("toolCallId"), Name: m.str("toolName"), Summary: "(its call is not shown)", Result: &res}
		it.Blocks = []views.Block{{Kind: "call", Call: &call}}
	case "bashExecution":
		it.Kind, it.Title = "bash", "bash (user)"
		bash := &views.Bash{Command: b.text(m.str("command")), Output: b.text(m.str("output")), Truncated: m.boolean("truncated"),
			FullOutputPath: m.str("fullOutputPath"), Excluded: m.boolean("excludeFromContext")}
		switch {
		case m.boolean("cancelled"):
			bash.Status = "cancelled"
		case m.has("exitCode") && m.num("exitCode") != 0:
			bash.Status = fmt.Sprintf("exit %v", m.num("exitCode"))
		}
		it.Bash = bash
	case "custom", "hookMessage":
		it.Kind, it.Title = "custom", "["+m.str("customType")+"]"
		it.Blocks = b.contentBlocks(m.blocks("content"), true)
		it.Hidden = m.has("display") && !m.boolean("display")
		it.Raw = b.text(pretty(m["details"]))
	case "system":
		it.Kind, it.Title = "system", "system prompt"
		text := m.str("content")
		if text == "" {
			var parts []string
			for _, bl := range m.blocks("content") {
				parts = append(parts, bl.str("text"))
			}
			text = strings.Join(parts, "\n")
		}
		it.Blocks = []views.Block{{Kind: "details", Summary: "System prompt", Text: b.text(text)}}
		rest := jobj{}
		for k, v := range m {
			if k != "role" && k != "content" && k != "timestamp" {
				rest[k] = v
			}
		}
		if len(rest) > 0 {
			raw, _ := json.Marshal(rest)
			it.Raw = b.text(pretty(raw))
		}
	case "branchSummary":
		it.Kind, it.Title = "summary", "Branch summary"
		it.Blocks = []views.Block{{Kind: "markdown", Sanitized: b.markdown(m.str("summary"))}}
	case "compactionSummary":
		it.Kind, it.Title = "compaction", "Compaction summary"
		it.Meta = "from " + views.Tokens(int64(m.num("tokensBefore"))) + " tokens"
		it.Blocks = []views.Block{{Kind: "markdown", Sanitized: b.markdown(m.str("summary"))}}
	default:
		raw, _ := json.Marshal(m)
		it.Kind, it.Title, it.Raw = "raw", cmp.Or(role, "message"), b.text(pretty(raw))
	}
	return it
}

// assistantMeta is the model, tokens and cost of an assistant message.
func assistantMeta(m jobj) string {
	var parts []string
	if mod := m.str("model"); mod != "" {
		parts = append(parts, mod)
	}
	if u := m.obj("usage"); u != nil {
		t := u.num("totalTokens")
		if t == 0 {
			t = u.num("input") + u.num("output") + u.num("cacheRead") + u.num("cacheWrite")
		}
		parts = append(parts, views.Tokens(int64(t))+" tok", views.Cost(u.obj("cost").num("total")))
	}
	return strings.Join(parts, " · ")
}

// toolCall reads a toolCall block.
func (b *builder) toolCall(bl jobj) views.ToolCall {
	args := bl.obj("arguments")
	return views.ToolCall{ID: bl.str("id"), Name: bl.str("name"), Summary: toolSummary(bl.str("name"), args, bl["arguments"], b.home),
		Args: b.text(pretty(bl["arguments"]))}
}

// toolResult reads a toolResult message at entry pos.
func (b *builder) toolResult(pos int, m jobj) views.ToolResult {
	before := b.cut
	r := views.ToolResult{Entry: b.info(pos), IsError: m.boolean("isError"), Blocks: b.contentBlocks(m.blocks("content"), false)}
	if d := m.obj("details"); d != nil {
		r.Diff = b.text(d.str("diff"))
		if r.Diff != "" {
			delete(d, "diff")
		}
		if len(d) > 0 {
			raw, _ := json.Marshal(d)
			r.Details = b.text(pretty(raw))
		}
	} else {
		r.Details = b.text(pretty(m["details"]))
	}
	r.Clip = b.clipped(pos, before)
	b.cut = before // the result's own note covers it
	return r
}

// toolSummary is the one-line gist of a tool call, as pi's tree shows it.
func toolSummary(name string, args jobj, raw json.RawMessage, home string) string {
	short := func(p string) string {
		if home != "" && (p == home || strings.HasPrefix(p, home+"/")) {
			return "~" + p[len(home):]
		}
		return p
	}
	path := cmp.Or(args.str("path"), args.str("file_path"))
	switch name {
	case "read", "write", "edit", "ls":
		return short(cmp.Or(path, "."))
	case "bash":
		return oneLine(args.str("command"), 200)
	case "grep":
		return "/" + args.str("pattern") + "/ in " + short(cmp.Or(path, "."))
	case "find":
		return args.str("pattern") + " in " + short(cmp.Or(path, "."))
	}
	return oneLine(string(raw), 120)
}
