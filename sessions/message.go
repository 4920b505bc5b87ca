package sessions

// pi's message model, decoded once: every page, export, tree row and copy
// reads messages and entry bodies through Body and Message, never the JSON
// itself. Decoding is as lenient as pi's readers are: a member of an
// unexpected type reads as its zero value, and the object as written stays
// at hand (Obj) for the few readers that must reproduce JavaScript exactly
// (pi's /tree text, the model context).

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/piweb/piweb/internal/js"
)

// Roles of pi's agent messages.
const (
	RoleUser              = "user"
	RoleAssistant         = "assistant"
	RoleToolResult        = "toolResult"
	RoleBash              = "bashExecution"
	RoleCustom            = "custom"
	RoleSystem            = "system"
	RoleBranchSummary     = "branchSummary"
	RoleCompactionSummary = "compactionSummary"
	roleHookMessage       = "hookMessage" // version 2's name for custom
)

// Block types of message content.
const (
	BlockText     = "text"
	BlockThinking = "thinking"
	BlockImage    = "image"
	BlockToolCall = "toolCall"
)

// Block is one block of message content.
type Block struct {
	Type     string          // BlockText, BlockThinking, BlockImage, BlockToolCall, or another type as written
	Text     string          // a text block's text, a thinking block's thinking
	Redacted bool            // a thinking block the provider withheld
	ID       string          // a tool call's id
	Name     string          // a tool call's tool name
	Args     json.RawMessage // a tool call's arguments as written (nil when absent)
	MimeType string          // an image's type
	Data     string          // an image's base64 data
	Raw      json.RawMessage // the block as written
}

// Content is a message's content as written: a string, an array of blocks,
// or absent. It decodes on demand, so a reader that needs only a prefix
// (a tree row) does not decode a long text.
type Content struct{ raw json.RawMessage }

// NewContent returns content as written.
func NewContent(raw json.RawMessage) Content { return Content{raw} }

// Raw returns the content as written (nil when absent).
func (c Content) Raw() json.RawMessage { return c.raw }

// IsString reports whether the content is a plain string.
func (c Content) IsString() bool { return len(c.raw) > 0 && c.raw[0] == '"' }

// Blocks returns the content's blocks; a string is one text block.
func (c Content) Blocks() []Block {
	if s, ok := js.String(c.raw); ok {
		return []Block{{Type: BlockText, Text: s, Raw: c.raw}}
	}
	var out []Block
	js.Elems(c.raw, func(el []byte) bool {
		if len(el) > 0 && el[0] == '{' {
			out = append(out, decodeBlock(el))
		}
		return true
	})
	return out
}

// Text returns the string content, or the text blocks joined by sep.
func (c Content) Text(sep string) string {
	if s, ok := js.String(c.raw); ok {
		return s
	}
	var parts []string
	for _, b := range c.Blocks() {
		if b.Type == BlockText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, sep)
}

// FullText is pi's extractFullContent: the string, or the text blocks
// joined with nothing between them (a non-string text as String() shows it).
func (c Content) FullText() string {
	if s, ok := js.String(c.raw); ok {
		return s
	}
	var b strings.Builder
	js.Elems(c.raw, func(el []byte) bool {
		blk := js.ObjectOf(el)
		if ty, _ := js.String(blk.Val("type")); ty == BlockText {
			if s, ok := js.StringWTF8(blk.Val("text")); ok {
				b.WriteString(s) // halves of an emoji in two blocks join up, as in pi
			} else {
				b.WriteString(js.ToString(blk.Val("text")))
			}
		}
		return true
	})
	return js.FromWTF8(b.String())
}

// Prefix is pi's extractContent: the text of the content cut to n UTF-16
// units; only that much of it is decoded.
func (c Content) Prefix(n int) string {
	raw := c.raw
	if len(raw) > 0 && raw[0] == '"' {
		return js.UTF16Prefix(js.Prefix(raw, n), n)
	}
	var b strings.Builder
	units := 0
	js.Elems(raw, func(el []byte) bool {
		blk := js.ObjectOf(el)
		if ty, _ := js.String(blk.Val("type")); ty == BlockText {
			var t string
			if text := blk.Val("text"); len(text) > 0 && text[0] == '"' {
				t = js.PrefixWTF8(text, n-units) // halves of an emoji in two blocks join up, as in pi
			} else {
				t = js.ToString(text)
			}
			b.WriteString(t)
			units += js.UTF16Len(js.FromWTF8(t))
		}
		return units < n // the rest would be cut anyway
	})
	return js.UTF16Prefix(js.FromWTF8(b.String()), n)
}

// HasText is pi's hasTextContent: a string, or a text block, that is not blank.
func (c Content) HasText() bool { return hasText(c.raw) }

// decodeBlock reads one content block.
func decodeBlock(raw []byte) Block {
	b := Block{Raw: raw}
	var text, thinking []byte // the block's text is one or the other, by its type, whichever comes first
	js.Members(raw, func(m js.Member) {
		switch string(js.KeyBytes(m.Key)) {
		case "type":
			b.Type = js.Str(m.Val)
		case "text":
			text = m.Val
		case "thinking":
			thinking = m.Val
		case "redacted":
			b.Redacted = js.Truthy(m.Val)
		case "id":
			b.ID = js.Str(m.Val)
		case "name":
			b.Name = js.Str(m.Val)
		case "arguments":
			b.Args = m.Val
		case "mimeType":
			b.MimeType = js.Str(m.Val)
		case "data":
			b.Data = js.Str(m.Val)
		}
	})
	if b.Type == BlockThinking {
		text = thinking
	}
	if text != nil {
		b.Text = js.Str(text)
	}
	return b
}

// ToolCalls returns the content's tool call blocks. Other blocks are not
// decoded (their texts can be long), nor is content that cannot hold a
// tool call walked at all (mayHold).
func (c Content) ToolCalls() []Block {
	if !mayHold(c.raw, BlockToolCall) {
		return nil
	}
	var out []Block
	js.Elems(c.raw, func(el []byte) bool {
		if len(el) > 0 && el[0] == '{' && blockTypeIs(el, BlockToolCall) {
			out = append(out, decodeBlock(el))
		}
		return true
	})
	return out
}

// Unsigned returns the content as written without the members that differ
// between two runs of one turn: tool call ids and reasoning signatures.
func (c Content) Unsigned() json.RawMessage {
	out := []byte{'['}
	js.Elems(c.raw, func(el []byte) bool {
		for _, k := range []string{"id", "thinkingSignature", "textSignature", "signature"} {
			el = js.DelMember(el, k)
		}
		out = append(append(out, el...), ',')
		return true
	})
	if len(out) == 1 {
		return c.raw
	}
	return out
}

// mayHold reports whether the JSON raw may hold a string whose value is s,
// which has no quote, backslash or control character: written without
// escapes it is there as it is, and with any escape raw holds a \u.
// False means it certainly does not.
func mayHold(raw []byte, s string) bool {
	return bytes.Contains(raw, []byte(s)) || bytes.Contains(raw, []byte(`\u`))
}

// blockTypeIs reports whether the content block el's type is typ, without
// allocating.
func blockTypeIs(el []byte, typ string) bool {
	var t []byte
	js.Members(el, func(m js.Member) {
		if js.KeyIs(m.Key, "type") {
			t = m.Val // the last, as JSON.parse keeps
		}
	})
	return typeIs(t, typ)
}

// typeIs reports whether the raw JSON value t is the string typ.
func typeIs(t []byte, typ string) bool {
	return len(t) == len(typ)+2 && t[0] == '"' && string(t[1:len(t)-1]) == typ || js.HasBackslash(t) && js.Str(t) == typ
}

// member returns the value of key in object raw (the last, as JSON.parse
// keeps), nil when absent, without allocating.
func member(raw []byte, key string) []byte {
	var v []byte
	js.Members(raw, func(m js.Member) {
		if js.KeyIs(m.Key, key) {
			v = m.Val
		}
	})
	return v
}

// ToolCallsOf returns the tool calls of the message in entry line, decoding
// only them: a line that cannot hold one (most of them) is not walked.
func ToolCallsOf(line []byte) []Block {
	if !mayHold(line, BlockToolCall) {
		return nil
	}
	return Content{member(member(line, "message"), "content")}.ToolCalls()
}

// ToolCallIDOf returns the toolCallId of the message in entry line (a tool
// result's), decoding nothing else.
func ToolCallIDOf(line []byte) string {
	return js.Str(member(member(line, "message"), "toolCallId"))
}

// ToolArgs are a tool call's arguments as pi's own tools read them. The
// ones that can be long (a write's content, an edit's texts) decode on demand.
type ToolArgs struct {
	Path    string          // path, or else file_path (other agents' name for it)
	Command string          // bash
	Pattern string          // grep, find
	Offset  json.RawMessage // read: as written, nil when absent
	Limit   json.RawMessage // read, ls: as written, nil when absent

	content, edits, oldText, newText json.RawMessage
}

// ToolArgs decodes a tool call's arguments.
func (b Block) ToolArgs() ToolArgs {
	var a ToolArgs
	var path, filePath []byte
	js.Members(b.Args, func(m js.Member) {
		switch string(js.KeyBytes(m.Key)) {
		case "path":
			path = m.Val
		case "file_path":
			filePath = m.Val
		case "command":
			a.Command = js.Str(m.Val)
		case "pattern":
			a.Pattern = js.Str(m.Val)
		case "offset":
			a.Offset = m.Val
		case "limit":
			a.Limit = m.Val
		case "content":
			a.content = m.Val
		case "edits":
			a.edits = m.Val
		case "oldText":
			a.oldText = m.Val
		case "newText":
			a.newText = m.Val
		}
	})
	a.Path = cmp.Or(js.Str(path), js.Str(filePath))
	return a
}

// Content returns a write's content.
func (a ToolArgs) Content() string { return js.Str(a.content) }

// Edit is one replacement an edit call asks for.
type Edit struct{ Old, New string }

// Edits returns an edit call's replacements: the elements of its edits when
// it has that member, else its older single oldText and newText.
func (a ToolArgs) Edits() []Edit {
	if len(a.edits) == 0 {
		return []Edit{{js.Str(a.oldText), js.Str(a.newText)}}
	}
	var out []Edit
	js.Elems(a.edits, func(el []byte) bool {
		out = append(out, Edit{js.Str(member(el, "oldText")), js.Str(member(el, "newText"))})
		return true
	})
	return out
}

// ArgPair is one argument of a tool call: its name, and its value (a
// string's text, anything else as written).
type ArgPair struct{ Key, Text string }

// ArgPairs returns every argument of a tool call, in the order written (a
// repeated name once, with its last value, as JSON.parse keeps).
func (b Block) ArgPairs() []ArgPair {
	obj := js.ObjectOf(b.Args)
	out := make([]ArgPair, len(obj))
	for i, kv := range obj {
		out[i].Key = kv.K
		if s, ok := js.String(kv.V); ok {
			out[i].Text = s
		} else {
			out[i].Text = string(kv.V)
		}
	}
	return out
}

// ToolDetails are what pi's tools record on their results that piweb reads.
type ToolDetails struct {
	Diff  string // edit: the diff pi displays
	Patch string // edit: a unified patch (newer pi)
	Path  string // read: the file read
	raw   json.RawMessage
}

// ToolDetails decodes a tool result's details.
func (m *Message) ToolDetails() ToolDetails {
	d := ToolDetails{raw: m.Details}
	js.Members(m.Details, func(m js.Member) {
		switch string(js.KeyBytes(m.Key)) {
		case "diff":
			d.Diff = js.Str(m.Val)
		case "patch":
			d.Patch = js.Str(m.Val)
		case "path":
			d.Path = js.Str(m.Val)
		}
	})
	return d
}

// Without returns the details object without the members named (a
// repeated member once, with its last value); nil when none remain or the
// details are not an object.
func (d ToolDetails) Without(keys ...string) json.RawMessage { return without(d.raw, keys) }

// Without returns the message object as written without the members named
// (a repeated member once, with its last value); nil when none remain.
func (m *Message) Without(keys ...string) json.RawMessage { return without(m.Raw, keys) }

// without returns object raw without the members named, nil when none remain.
func without(raw json.RawMessage, keys []string) json.RawMessage {
	var rest js.Object
	for _, kv := range js.ObjectOf(raw) {
		if !slices.Contains(keys, kv.K) {
			rest = append(rest, kv)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	return rest.JSON()
}

// Usage is the token usage pi records on an assistant message (and on
// tool results, usage entries, compactions and branch summaries).
type Usage struct {
	Input, Output, CacheRead, CacheWrite float64
	TotalTokens                          float64
	Cost                                 float64 // cost.total
}

// Tokens is the total the sessions list shows: totalTokens, or when it is 0
// the sum of the four kinds.
func (u Usage) Tokens() float64 {
	if u.TotalTokens != 0 {
		return u.TotalTokens
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// DecodeUsage reads a usage object; ok is false when it is not an object
// or a member is not a number (pi's sums would not be numbers either).
func DecodeUsage(raw []byte) (u Usage, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return Usage{}, false
	}
	var ur usageReader
	ur.start()
	js.Members(raw, ur.set)
	return ur.result()
}

// usageReader reads a usage object member by member, as js.Members or a
// nested read (js.Nested) hands them over.
type usageReader struct {
	u         Usage
	ok        bool
	costBegun bool // the members of the cost value being set were read already, by a nested read
}

// start begins a usage object.
func (ur *usageReader) start() { *ur = usageReader{ok: true} }

// num reads a number into dst; a member that is not a number spoils the usage.
func (ur *usageReader) num(dst *float64, raw []byte) {
	v, good := js.Number(raw)
	*dst, ur.ok = v, ur.ok && good
}

// set reads one member of the usage object.
func (ur *usageReader) set(m js.Member) {
	switch string(js.KeyBytes(m.Key)) {
	case "totalTokens":
		ur.num(&ur.u.TotalTokens, m.Val)
	case "input":
		ur.num(&ur.u.Input, m.Val)
	case "output":
		ur.num(&ur.u.Output, m.Val)
	case "cacheRead":
		ur.num(&ur.u.CacheRead, m.Val)
	case "cacheWrite":
		ur.num(&ur.u.CacheWrite, m.Val)
	case "cost":
		begun := ur.costBegun
		ur.costBegun = false
		switch {
		case js.IsNull(m.Val):
			ur.u.Cost = 0
		case m.Val[0] != '{':
			ur.ok = false
		case !begun:
			js.Members(m.Val, ur.setCost)
		}
	}
}

// setCost reads one member of the usage's cost object.
func (ur *usageReader) setCost(c js.Member) {
	if string(js.KeyBytes(c.Key)) == "total" {
		ur.num(&ur.u.Cost, c.Val)
	}
}

// result is the usage read, and whether it was readable.
func (ur *usageReader) result() (Usage, bool) {
	if !ur.ok {
		return Usage{}, false
	}
	return ur.u, true
}

// Message is an agent message as pi stores it.
type Message struct {
	Role      string  // as written; version 2's hookMessage reads as custom
	Content   Content // user, assistant, tool result and custom messages
	Timestamp int64   // Unix ms (JavaScript's Number of it); NoTime when not a number

	// Assistant messages.
	API, Provider, Model string
	Usage                Usage
	HasUsage             bool // the usage object was readable
	UsageWritten         bool // a usage member was written, readable or not
	StopReason           string
	ErrorMessage         string

	// Tool results.
	ToolCallID, ToolName string
	IsError              bool
	Details              json.RawMessage // as written, nil when absent or null

	// Bash executions (pi's "!" command).
	Command, Output    string
	ExitCode           *float64 // nil when absent or not a number
	Cancelled          bool
	Truncated          bool
	FullOutputPath     string
	ExcludeFromContext bool

	// Custom messages (and custom_message entries).
	CustomType string
	Display    bool
	HasDisplay bool // display was written (a message without it is shown)

	// Branch and compaction summaries.
	Summary      string
	TokensBefore float64
	FromID       string

	Obj js.Object       // the message object as written
	Raw json.RawMessage // the same, as read
}

// DecodeMessage reads an agent message object; anything but an object gives
// a message without role.
func DecodeMessage(raw []byte) *Message {
	m := &Message{Timestamp: NoTime, Display: true}
	m.Obj, m.Raw = js.ObjectOf(raw), raw
	for _, kv := range m.Obj {
		v := kv.V
		switch kv.K {
		case "role":
			m.Role = js.Str(v)
		case "content":
			m.Content = Content{v}
		case "timestamp":
			if f, ok := js.Number(v); ok && !js.IsNull(v) {
				m.Timestamp = int64(f)
			}
		case "api":
			m.API = js.Str(v)
		case "provider":
			m.Provider = js.Str(v)
		case "model":
			m.Model = js.Str(v)
		case "usage":
			m.Usage, m.HasUsage = DecodeUsage(v)
			m.UsageWritten = true
		case "stopReason":
			m.StopReason = js.Str(v)
		case "errorMessage":
			m.ErrorMessage = js.Str(v)
		case "toolCallId":
			m.ToolCallID = js.Str(v)
		case "toolName":
			m.ToolName = js.Str(v)
		case "isError":
			m.IsError = js.Truthy(v)
		case "details":
			if !js.IsNull(v) {
				m.Details = v
			}
		case "command":
			m.Command = js.Str(v)
		case "output":
			m.Output = js.Str(v)
		case "exitCode":
			if f, ok := js.Number(v); ok && !js.IsNull(v) {
				m.ExitCode = &f
			}
		case "cancelled":
			m.Cancelled = js.Truthy(v)
		case "truncated":
			m.Truncated = js.Truthy(v)
		case "fullOutputPath":
			m.FullOutputPath = js.Str(v)
		case "excludeFromContext":
			m.ExcludeFromContext = js.Truthy(v)
		case "customType":
			m.CustomType = js.Str(v)
		case "display":
			m.Display, m.HasDisplay = js.Truthy(v), true
		case "summary":
			m.Summary = js.Str(v)
		case "tokensBefore":
			m.TokensBefore, _ = js.Number(v)
		case "fromId":
			m.FromID = js.Str(v)
		}
	}
	if m.Role == roleHookMessage {
		m.Role = RoleCustom
	}
	return m
}

// ToolCalls returns the tool call blocks of an assistant message.
func (m *Message) ToolCalls() []Block { return m.Content.ToolCalls() }

// Body is an entry line decoded: the entry's own fields by type, and its
// message for message entries.
type Body struct {
	Pos   int      // the entry's position in the session (-1 when decoded apart from one)
	Entry *Entry   // the index record
	Msg   *Message // message entries: the message; nil for other types

	// custom_message entries read as the custom message pi makes of them:
	// Msg holds it too (Role custom, Content, CustomType, Display, Details).

	Summary      string          // compaction and branch_summary
	FirstKept    string          // compaction: firstKeptEntryId
	TokensBefore float64         // compaction
	FromID       string          // branch_summary: the leaf it came back from
	Details      json.RawMessage // compaction, branch_summary, custom_message: as written
	Usage        Usage           // compaction, branch_summary, usage entries
	HasUsage     bool
	Provider     string          // model_change, usage
	ModelID      string          // model_change: modelId; usage: model
	Level        string          // thinking_level_change: thinkingLevel
	CustomType   string          // custom, custom_message
	Data         json.RawMessage // custom: data as written
	Target       string          // label, context_edit: targetId
	Replacement  json.RawMessage // context_edit: replacement as written ("null" drops the target)
	Name         string          // session_info: name
	Kind         string          // usage: kind
	Note         string          // usage: note

	Obj  js.Object       // the entry object as written (empty for a line that is not an object)
	Line json.RawMessage // the line as read
}

// DecodeBody decodes entry e's line.
func DecodeBody(e *Entry, line []byte) *Body {
	b := &Body{Pos: -1, Entry: e, Obj: js.ObjectOf(line), Line: line}
	for _, kv := range b.Obj {
		v := kv.V
		switch kv.K {
		case "message":
			if e.Type == TypeMessage {
				b.Msg = DecodeMessage(v)
			}
		case "summary":
			b.Summary = js.Str(v)
		case "firstKeptEntryId":
			b.FirstKept = js.Str(v)
		case "tokensBefore":
			b.TokensBefore, _ = js.Number(v)
		case "fromId":
			b.FromID = js.Str(v)
		case "details":
			if !js.IsNull(v) {
				b.Details = v
			}
		case "usage":
			b.Usage, b.HasUsage = DecodeUsage(v)
		case "provider":
			b.Provider = js.Str(v)
		case "modelId", "model":
			b.ModelID = js.Str(v)
		case "thinkingLevel":
			b.Level = js.Str(v)
		case "customType":
			b.CustomType = js.Str(v)
		case "data":
			b.Data = v
		case "targetId":
			b.Target = js.Str(v)
		case "replacement":
			b.Replacement = v
		case "name":
			b.Name = js.Str(v)
		case "kind":
			b.Kind = js.Str(v)
		case "note":
			b.Note = js.Str(v)
		}
	}
	switch e.Type {
	case TypeMessage:
		if b.Msg == nil {
			b.Msg = DecodeMessage(nil)
		}
		if e.Role != "" {
			b.Msg.Role = e.Role // as the index migrated it
		}
	case TypeCustomMessage:
		m := &Message{Role: RoleCustom, Content: Content{b.Obj.Val("content")}, Timestamp: e.Time,
			CustomType: b.CustomType, Details: b.Details, Display: js.Truthy(b.Obj.Val("display")), Obj: b.Obj, Raw: line}
		_, m.HasDisplay = b.Obj.Get("display")
		b.Msg = m
	}
	return b
}

// Body reads and decodes entry i's line.
func (r *Reader) Body(i int) (*Body, error) {
	line, err := r.Raw(i)
	if err != nil {
		return nil, err
	}
	b := DecodeBody(&r.s.Entries[i], line)
	b.Pos = i
	return b, nil
}

// isTextBlock reports whether a content block whose type and text members
// are typ and text is a text that is not blank.
func isTextBlock(typ, text []byte) bool {
	return (string(typ) == `"text"` || (js.HasBackslash(typ) && js.Str(typ) == "text")) &&
		len(text) > 0 && text[0] == '"' && !js.Blank(text)
}

// hasText is pi's hasTextContent: string or block content with a text that is not blank.
func hasText(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		return !js.Blank(raw)
	}
	if raw[0] != '[' {
		return false
	}
	found := false
	js.Elems(raw, func(el []byte) bool {
		if len(el) == 0 || el[0] != '{' {
			return true
		}
		var typ, text []byte
		js.Members(el, func(m js.Member) {
			switch {
			case js.KeyIs(m.Key, "type"):
				typ = m.Val
			case js.KeyIs(m.Key, "text"):
				text = m.Val
			}
		})
		found = isTextBlock(typ, text)
		return !found
	})
	return found
}
