package sessions

import (
	"math"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/piweb/piweb/internal/js"
)

// Entry types written by pi.
const (
	TypeSession       = "session"
	TypeMessage       = "message"
	TypeModelChange   = "model_change"
	TypeThinking      = "thinking_level_change"
	TypeUsage         = "usage"
	TypeCompaction    = "compaction"
	TypeBranchSummary = "branch_summary"
	TypeCustom        = "custom"
	TypeCustomMessage = "custom_message"
	TypeContextEdit   = "context_edit"
	TypeLabel         = "label"
	TypeSessionInfo   = "session_info"
)

// Entry is the index record of one line: the links and the small fields the
// tree needs. The full JSON stays in the file and is read through Off/Len.
type Entry struct {
	ID       string // "" when the line has no string id
	ParentID string // "" when null or absent
	Type     string // "" when absent or not a string
	Time     int64  // entry timestamp in Unix ms; NoTime when unparseable

	Off  int64 // byte offset of the line in the file
	Len  int   // line length without the trailing newline
	Line int   // 1-based line number

	Role string // message role, for type message
	// Target is the id an entry names, by its type: the targetId of a label
	// or context_edit, the firstKeptEntryId of a compaction (FirstKept), the
	// fromId of a branch_summary (FromID). One field for the three keeps the
	// index of every entry smaller.
	Target string
	Text   string // label text, session_info name, customType, or model "provider/model"

	Tokens int64   // usage.totalTokens of an assistant message or usage entry
	Cost   float64 // usage.cost.total of an assistant message or usage entry

	Flags Flags
}

// Flags record facts about an entry's line.
type Flags uint16

const (
	// FlagNoID marks an entry whose id is missing or not a string.
	FlagNoID Flags = 1 << iota
	// FlagNotObject marks a line that parsed as a JSON value other than an object.
	FlagNotObject
	// FlagLabelSet marks a label entry whose label is truthy (sets rather than clears).
	FlagLabelSet
	// FlagHasSummary marks a branch_summary with a non-empty summary.
	FlagHasSummary
	// The bit FlagBadUTF8 had (a line holding invalid UTF-8) is no longer
	// set: lines are decoded as Node decodes them when they are read
	// (js.ToValidUTF8), which checks them then. Kept so later bits keep their values.
	_
	// FlagUnterminated marks the last line of a file that has no newline.
	FlagUnterminated
	// FlagParentSelf marks an entry whose parentId is its own id.
	FlagParentSelf
	// FlagEditDrop marks a context_edit whose replacement is null.
	FlagEditDrop
	// FlagHidden marks a custom_message with display false.
	FlagHidden
	// FlagError marks an assistant message that stopped with an error or abort.
	FlagError
	// FlagNoParentKey marks an entry without a parentId member (undefined to pi, unlike null).
	FlagNoParentKey
	// FlagText marks an assistant message whose content has non-blank text.
	FlagText
	// FlagOddStop marks an assistant message whose stopReason is set and is neither stop nor toolUse.
	FlagOddStop
	// FlagLabelJSON marks a label entry whose truthy label is not a string: Text holds its JSON.
	FlagLabelJSON
	// FlagToolCall marks an assistant message whose content holds a tool call
	// (Content.ToolCalls is not empty): readers of calls skip the others unread.
	FlagToolCall
)

// NoTime is Entry.Time for a timestamp JavaScript's Date cannot parse.
const NoTime = math.MinInt64

// Has reports whether all of f's bits are set.
func (f Flags) Has(g Flags) bool { return f&g == g }

// Model returns the "provider/model" of an assistant message or model_change.
func (e *Entry) Model() string {
	if e.Type == TypeMessage && e.Role == RoleAssistant || e.Type == TypeModelChange {
		return e.Text
	}
	return ""
}

// FirstKept returns the firstKeptEntryId of a compaction ("" for other types).
func (e *Entry) FirstKept() string {
	if e.Type == TypeCompaction {
		return e.Target
	}
	return ""
}

// FromID returns the fromId of a branch_summary ("" for other types).
func (e *Entry) FromID() string {
	if e.Type == TypeBranchSummary {
		return e.Target
	}
	return ""
}

// Label returns the label text of a label entry ("" clears).
func (e *Entry) Label() string {
	if e.Type == TypeLabel && e.Flags.Has(FlagLabelSet) {
		return e.Text
	}
	return ""
}

// interner shares the storage of strings that repeat across entries.
type interner map[string]string

func (in interner) get(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	if len(in) < 4096 {
		in[s] = s
	}
	return s
}

// str decodes the raw JSON string value and interns it; a plain string
// seen before costs no allocation. Non-strings give "".
func (in interner) str(raw []byte) string {
	if len(raw) >= 2 && raw[0] == '"' {
		if inner := raw[1 : len(raw)-1]; !js.HasBackslash(inner) {
			if v, ok := in[string(inner)]; ok { // no allocation for the lookup
				return v
			}
		}
	}
	return in.get(js.Str(raw))
}

// model interns modelName(str(provider), str(model)) without allocating
// when both are plain strings and the pair was seen before.
func (in interner) model(provider, model []byte) string {
	if len(provider) >= 2 && provider[0] == '"' && len(model) >= 2 && model[0] == '"' {
		p, m := provider[1:len(provider)-1], model[1:len(model)-1]
		if len(p)+len(m) < 128 && len(p) > 0 && len(m) > 0 && !js.HasBackslash(p) && !js.HasBackslash(m) {
			var buf [128]byte
			k := append(append(append(buf[:0], p...), '/'), m...)
			if v, ok := in[string(k)]; ok {
				return v
			}
		}
	}
	return in.get(modelName(js.Str(provider), js.Str(model)))
}

// rawEntry holds the raw member values of one entry line that the index reads.
type rawEntry struct {
	typ, id, parentID, timestamp, message       []byte
	targetID, label, name, customType           []byte
	firstKept, fromID, provider, modelID        []byte
	usage, summary, replacement, display        []byte
	version, cwd, parentSession, firstKeptIndex []byte
	hasParentKey, hasLabelKey, hasTimestamp     bool

	// The members of the message object, read in the same pass as the line
	// (msg.walked) unless its key was written with escapes or its value is not an object.
	msg msgMembers
}

// msgMembers are the members of a message object the index reads.
type msgMembers struct {
	role, content, provider, model, usage, stop []byte
	begun, walked                               bool

	// The content array's blocks, read in the same pass (contentWalked)
	// unless its key was written with escapes or it is not an array.
	blockType, blockText        []byte
	contentBegun, contentWalked bool
	text                        bool // a block of the walked content is a text that is not blank
	call                        bool // a block of the walked content is a tool call

	// The usage object, read in the same pass (usageWalked) unless its key
	// was written with escapes or it is not an object.
	use                     usageReader
	usageBegun, usageWalked bool
}

// set keeps m when the index reads it.
func (mm *msgMembers) set(m js.Member) {
	switch string(js.KeyBytes(m.Key)) {
	case "role":
		mm.role = m.Val
	case "content":
		mm.content = m.Val
		mm.contentWalked, mm.contentBegun = mm.contentBegun, false
	case "provider":
		mm.provider = m.Val
	case "model":
		mm.model = m.Val
	case "usage":
		mm.usage = m.Val
		mm.usageWalked, mm.usageBegun = mm.usageBegun, false
	case "stopReason":
		mm.stop = m.Val
	}
}

// nested returns what the line's reading reads of the message in the same
// pass: its members, and its content blocks' type and text.
func (r *rawEntry) nested() []*js.Nested {
	mm := &r.msg
	blocks := &js.Nested{Key: "content", Each: true,
		Start: func() { mm.text, mm.call, mm.contentBegun = false, false, true },
		Begin: func() { mm.blockType, mm.blockText = nil, nil },
		Fn: func(m js.Member) {
			if js.KeyIs(m.Key, "type") {
				mm.blockType = m.Val
			} else if js.KeyIs(m.Key, "text") {
				mm.blockText = m.Val
			}
		},
		End: func() {
			mm.text = mm.text || isTextBlock(mm.blockType, mm.blockText)
			mm.call = mm.call || typeIs(mm.blockType, BlockToolCall)
		},
	}
	cost := &js.Nested{Key: "cost", Start: func() { mm.use.costBegun = true }, Fn: mm.use.setCost}
	usage := &js.Nested{Key: "usage", Start: func() { mm.use.start(); mm.usageBegun = true }, Fn: mm.use.set, In: []*js.Nested{cost}}
	msg := &js.Nested{Key: "message",
		Start: func() { *mm = msgMembers{begun: true} }, // a later message replaces an earlier, as in JSON.parse
		Fn:    mm.set,
		In:    []*js.Nested{blocks, usage},
	}
	return []*js.Nested{msg}
}

func (r *rawEntry) set(m js.Member) {
	k := m.Key
	if len(k) < 3 {
		return
	}
	// Switch on the unquoted key without allocating.
	switch string(js.KeyBytes(k)) {
	case "type":
		r.typ = m.Val
	case "id":
		r.id = m.Val
	case "parentId":
		r.parentID = m.Val
		r.hasParentKey = true
	case "timestamp":
		r.timestamp = m.Val
		r.hasTimestamp = true
	case "message":
		r.message = m.Val
		r.msg.walked, r.msg.begun = r.msg.begun, false // walked only when this very value was
	case "targetId":
		r.targetID = m.Val
	case "label":
		r.label = m.Val
		r.hasLabelKey = true
	case "name":
		r.name = m.Val
	case "customType":
		r.customType = m.Val
	case "firstKeptEntryId":
		r.firstKept = m.Val
	case "fromId":
		r.fromID = m.Val
	case "provider":
		r.provider = m.Val
	case "modelId", "model":
		r.modelID = m.Val
	case "usage":
		r.usage = m.Val
	case "summary":
		r.summary = m.Val
	case "replacement":
		r.replacement = m.Val
	case "display":
		r.display = m.Val
	case "version":
		r.version = m.Val
	case "cwd":
		r.cwd = m.Val
	case "parentSession":
		r.parentSession = m.Val
	case "firstKeptEntryIndex":
		r.firstKeptIndex = m.Val
	}
}

// idArena keeps the bytes of a session's ids in shared blocks, one
// allocation per block instead of one per id (there are two ids per entry).
// Copies of it (a snapshot's fork copies its session's) share its block:
// whichever goes on from where the block was last left fills it, the
// others start blocks of their own, so that no id is ever written over
// and no copy keeps another snapshot alive.
type idArena struct {
	blk  *idBlock // the block being filled, nil before the first
	mine int      // how much of blk was written when this arena last wrote
	next int      // the size of the next block
	last string   // the id of the entry read before, most often the next one's parent
}

// idBlock holds the bytes of ids: they are pieces of b's String, which
// later writes never change.
type idBlock struct {
	b    strings.Builder
	size int          // b's capacity, fixed when made
	used atomic.Int64 // bytes claimed: an arena writes only after claiming, from where it left the block
}

// str decodes the raw JSON string value, as js.String does.
func (a *idArena) str(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if len(inner) == 0 || len(inner) > 64 || js.HasBackslash(inner) || !utf8.Valid(inner) {
		return js.String(raw)
	}
	if string(inner) == a.last {
		return a.last, true
	}
	n := a.mine
	if a.blk == nil || n+len(inner) > a.blk.size || !a.blk.used.CompareAndSwap(int64(n), int64(n+len(inner))) {
		a.blk = &idBlock{}
		a.blk.b.Grow(max(a.next, 256))
		a.blk.size = a.blk.b.Cap()
		a.blk.used.Store(int64(len(inner)))
		a.next = min(2*a.blk.size, 64<<10)
		n = 0
	}
	a.blk.b.Write(inner)
	a.mine = n + len(inner)
	return a.blk.b.String()[n:a.mine], true
}

// fill sets e's fields from r. in interns repeating strings, ids keeps ids.
func (e *Entry) fill(r *rawEntry, in interner, ids *idArena) {
	if s, ok := ids.str(r.id); ok {
		e.ID = s
	} else {
		e.Flags |= FlagNoID
	}
	e.ParentID, _ = ids.str(r.parentID)
	ids.last = e.ID
	if !r.hasParentKey {
		e.Flags |= FlagNoParentKey
	}
	if e.ParentID != "" && e.ParentID == e.ID {
		e.Flags |= FlagParentSelf
	}
	e.Type = in.str(r.typ)
	e.Time = js.Time(r.timestamp, r.hasTimestamp)
	switch e.Type {
	case TypeMessage:
		if !r.msg.walked {
			r.msg = msgMembers{}
			js.Members(r.message, r.msg.set)
		}
		e.fillMessage(&r.msg, in)
	case TypeLabel:
		e.Target = js.Str(r.targetID)
		if js.Truthy(r.label) {
			e.Flags |= FlagLabelSet
			e.Text = js.Str(r.label)
			if e.Text == "" { // a truthy non-string label: keep its JSON text
				e.Text = string(r.label)
				e.Flags |= FlagLabelJSON
			}
		}
	case TypeContextEdit:
		e.Target = js.Str(r.targetID)
		if js.IsNull(r.replacement) {
			e.Flags |= FlagEditDrop
		}
	case TypeSessionInfo:
		e.Text = js.Str(r.name)
	case TypeCustom, TypeCustomMessage:
		e.Text = in.str(r.customType)
		if e.Type == TypeCustomMessage && !js.Truthy(r.display) {
			e.Flags |= FlagHidden
		}
	case TypeModelChange:
		e.Text = in.model(r.provider, r.modelID)
	case TypeCompaction:
		e.Target = js.Str(r.firstKept)
		e.Tokens, e.Cost = usageTotals(r.usage)
	case TypeBranchSummary:
		e.Target = js.Str(r.fromID)
		if js.Truthy(r.summary) {
			e.Flags |= FlagHasSummary
		}
		e.Tokens, e.Cost = usageTotals(r.usage)
	case TypeUsage:
		e.Text = in.model(r.provider, r.modelID)
		e.Tokens, e.Cost = usageTotals(r.usage)
	}
}

// fillMessage reads role, model, usage and stop reason from a message's
// members. The line was validated as a whole, so they are not checked again.
func (e *Entry) fillMessage(m *msgMembers, in interner) {
	e.Role = in.str(m.role)
	if e.Role == RoleAssistant {
		e.Text = in.model(m.provider, m.model)
		if m.usageWalked {
			if u, ok := m.use.result(); ok {
				e.Tokens, e.Cost = int64(u.Tokens()), u.Cost
			}
		} else {
			e.Tokens, e.Cost = usageTotals(m.usage)
		}
		st := in.str(m.stop)
		if st == "error" || st == "aborted" {
			e.Flags |= FlagError
		}
		// pi's tree hides assistant turns that are only tool calls; these two
		// flags let it decide without reading the line again (see layout.go).
		if js.Truthy(m.stop) && st != "stop" && st != "toolUse" {
			e.Flags |= FlagOddStop
		}
		if m.contentWalked && m.text || !m.contentWalked && hasText(m.content) {
			e.Flags |= FlagText
		}
		if m.contentWalked && m.call || !m.contentWalked && len(NewContent(m.content).ToolCalls()) > 0 {
			e.Flags |= FlagToolCall
		}
	}
}

// usageTotals reads the total tokens (Usage.Tokens) and cost of a usage
// object; anything that is not a readable usage object gives 0 and 0.
func usageTotals(raw []byte) (tokens int64, cost float64) {
	u, ok := DecodeUsage(raw)
	if !ok {
		return 0, 0
	}
	return int64(u.Tokens()), u.Cost
}

// modelName joins provider and model id as "provider/model".
func modelName(provider, model string) string {
	if provider == "" || model == "" {
		return provider + model
	}
	return provider + "/" + model
}
