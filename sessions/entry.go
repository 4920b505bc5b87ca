package sessions

import (
	"encoding/json"
	"math"
	"strings"
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

	Role      string // message role, for type message
	Target    string // targetId of label and context_edit
	Text      string // label text, session_info name, customType, or model "provider/model"
	FirstKept string // firstKeptEntryId of a compaction
	FromID    string // fromId of a branch_summary

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
	// FlagBadUTF8 marks a line holding invalid UTF-8.
	FlagBadUTF8
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
)

// NoTime is Entry.Time for a timestamp JavaScript's Date cannot parse.
const NoTime = math.MinInt64

// Has reports whether all of f's bits are set.
func (f Flags) Has(g Flags) bool { return f&g == g }

// Model returns the "provider/model" of an assistant message or model_change.
func (e *Entry) Model() string {
	if e.Type == TypeMessage && e.Role == "assistant" || e.Type == TypeModelChange {
		return e.Text
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

// rawEntry holds the raw member values of one entry line that the index reads.
type rawEntry struct {
	typ, id, parentID, timestamp, message       []byte
	targetID, label, name, customType           []byte
	firstKept, fromID, provider, modelID        []byte
	usage, summary, replacement, display        []byte
	version, cwd, parentSession, firstKeptIndex []byte
	hasParentKey, hasLabelKey, hasTimestamp     bool
}

func (r *rawEntry) set(m member) {
	k := m.key
	if len(k) < 3 {
		return
	}
	// Switch on the unquoted key without allocating.
	switch keyName2(k) {
	case "type":
		r.typ = m.val
	case "id":
		r.id = m.val
	case "parentId":
		r.parentID = m.val
		r.hasParentKey = true
	case "timestamp":
		r.timestamp = m.val
		r.hasTimestamp = true
	case "message":
		r.message = m.val
	case "targetId":
		r.targetID = m.val
	case "label":
		r.label = m.val
		r.hasLabelKey = true
	case "name":
		r.name = m.val
	case "customType":
		r.customType = m.val
	case "firstKeptEntryId":
		r.firstKept = m.val
	case "fromId":
		r.fromID = m.val
	case "provider":
		r.provider = m.val
	case "modelId", "model":
		r.modelID = m.val
	case "usage":
		r.usage = m.val
	case "summary":
		r.summary = m.val
	case "replacement":
		r.replacement = m.val
	case "display":
		r.display = m.val
	case "version":
		r.version = m.val
	case "cwd":
		r.cwd = m.val
	case "parentSession":
		r.parentSession = m.val
	case "firstKeptEntryIndex":
		r.firstKeptIndex = m.val
	}
}

// keyName2 returns the key without quotes; for escaped keys it decodes.
// The conversion in the switch above does not allocate for plain keys.
func keyName2(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if hasBackslash(inner) {
		return keyName(raw)
	}
	return unsafeString(inner)
}

// str decodes a raw string value; non-strings give "".
func str(raw []byte) string {
	s, _ := jsonString(raw)
	return s
}

// fill sets e's fields from r. in interns repeating strings.
func (e *Entry) fill(r *rawEntry, in interner) {
	if s, ok := jsonString(r.id); ok {
		e.ID = s
	} else {
		e.Flags |= FlagNoID
	}
	e.ParentID = str(r.parentID)
	if !r.hasParentKey {
		e.Flags |= FlagNoParentKey
	}
	if e.ParentID != "" && e.ParentID == e.ID {
		e.Flags |= FlagParentSelf
	}
	if s, ok := jsonString(r.typ); ok {
		e.Type = in.get(s)
	}
	e.Time = jsTime(r.timestamp, r.hasTimestamp)
	switch e.Type {
	case TypeMessage:
		e.fillMessage(r.message, in)
	case TypeLabel:
		e.Target = str(r.targetID)
		if truthy(r.label) {
			e.Flags |= FlagLabelSet
			e.Text = str(r.label)
			if e.Text == "" { // a truthy non-string label: keep its JSON text
				e.Text = string(r.label)
			}
		}
	case TypeContextEdit:
		e.Target = str(r.targetID)
		if isNull(r.replacement) {
			e.Flags |= FlagEditDrop
		}
	case TypeSessionInfo:
		e.Text = str(r.name)
	case TypeCustom, TypeCustomMessage:
		e.Text = in.get(str(r.customType))
		if e.Type == TypeCustomMessage && !truthy(r.display) {
			e.Flags |= FlagHidden
		}
	case TypeModelChange:
		e.Text = in.get(modelName(str(r.provider), str(r.modelID)))
	case TypeCompaction:
		e.FirstKept = str(r.firstKept)
		e.Tokens, e.Cost = usageTotals(r.usage)
	case TypeBranchSummary:
		e.FromID = str(r.fromID)
		if truthy(r.summary) {
			e.Flags |= FlagHasSummary
		}
		e.Tokens, e.Cost = usageTotals(r.usage)
	case TypeUsage:
		e.Text = in.get(modelName(str(r.provider), str(r.modelID)))
		e.Tokens, e.Cost = usageTotals(r.usage)
	}
}

// fillMessage reads role, model, usage and stop reason from a message object.
func (e *Entry) fillMessage(raw []byte, in interner) {
	var role, provider, model, usage, stop, content []byte
	_, err := eachMember(raw, 0, func(m member) {
		switch keyName2(m.key) {
		case "role":
			role = m.val
		case "content":
			content = m.val
		case "provider":
			provider = m.val
		case "model":
			model = m.val
		case "usage":
			usage = m.val
		case "stopReason":
			stop = m.val
		}
	})
	if err != nil {
		return
	}
	e.Role = in.get(str(role))
	if e.Role == "assistant" {
		e.Text = in.get(modelName(str(provider), str(model)))
		e.Tokens, e.Cost = usageTotals(usage)
		if s := str(stop); s == "error" || s == "aborted" {
			e.Flags |= FlagError
		}
		// pi's tree hides assistant turns that are only tool calls; these two
		// flags let it decide without reading the line again (see layout.go).
		if s := str(stop); truthy(stop) && s != "stop" && s != "toolUse" {
			e.Flags |= FlagOddStop
		}
		if hasText(content) {
			e.Flags |= FlagText
		}
	}
}

// usageTotals reads totalTokens and cost.total from a usage object.
func usageTotals(raw []byte) (tokens int64, cost float64) {
	if len(raw) == 0 || raw[0] != '{' {
		return 0, 0
	}
	var u struct {
		TotalTokens float64 `json:"totalTokens"`
		Input       float64 `json:"input"`
		Output      float64 `json:"output"`
		CacheRead   float64 `json:"cacheRead"`
		CacheWrite  float64 `json:"cacheWrite"`
		Cost        struct {
			Total float64 `json:"total"`
		} `json:"cost"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return 0, 0
	}
	t := u.TotalTokens
	if t == 0 {
		t = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	return int64(t), u.Cost.Total
}

// jsTime converts a raw timestamp value to Unix ms as JavaScript's
// new Date(value).getTime() would; NoTime stands for NaN.
func jsTime(raw []byte, present bool) int64 {
	if !present {
		return NoTime // new Date(undefined) is NaN
	}
	switch {
	case isNull(raw):
		return 0 // new Date(null) is the epoch
	case len(raw) > 0 && raw[0] == '"':
		s, _ := jsonString(raw)
		return parseJSDate(s)
	case len(raw) > 0 && (raw[0] == '-' || isDigit(raw[0])):
		var f float64
		if json.Unmarshal(raw, &f) != nil || math.Abs(f) > 8.64e15 {
			return NoTime
		}
		return int64(f)
	}
	return NoTime
}

// trimJS trims what JavaScript's String.prototype.trim removes.
func trimJS(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return r == '\uFEFF' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' ||
			r == 0xA0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200A) || r == 0x2028 || r == 0x2029 ||
			r == 0x202F || r == 0x205F || r == 0x3000
	})
}

// modelName joins provider and model id as "provider/model".
func modelName(provider, model string) string {
	if provider == "" || model == "" {
		return provider + model
	}
	return provider + "/" + model
}
