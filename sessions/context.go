package sessions

import (
	"encoding/json"
	"strconv"

	"github.com/piweb/piweb/internal/js"
)

// Context is what the model sees at a leaf, as pi's buildSessionContext returns it.
type Context struct {
	Messages      []json.RawMessage `json:"messages"`
	ThinkingLevel json.RawMessage   `json:"thinkingLevel,omitempty"`
	Model         json.RawMessage   `json:"model"`
}

// Projected is one entry of the projection with the messages it contributes.
type Projected struct {
	Pos      int               // entry position
	Messages []json.RawMessage // possibly none (e.g. a model change)
	Edited   bool              // a context_edit changed or dropped its messages
	Kept     bool              // kept from before the leading compaction (firstKeptEntryId)
}

// Projection is the compaction-aware list of entries on a path and their messages.
type Projection struct {
	Entries []Projected
	Context
}

// Project computes the projection at entry leaf using r's open file.
func (r *Reader) Project(leaf int) (*Projection, error) {
	p := &Projection{Context: Context{Messages: []json.RawMessage{}}}
	ctx, err := r.project(leaf, r, nil, func(pe Projected) error {
		p.Entries = append(p.Entries, pe)
		p.Messages = append(p.Messages, pe.Messages...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.ThinkingLevel, p.Model = ctx.ThinkingLevel, ctx.Model
	return p, nil
}

// project walks the projection at entry leaf: it calls fn with each entry
// in context, in order, and returns the context's thinking level and model
// (its Messages are fn's). The lines of the entries in context are read
// through seq, in path order, so that a Sequential reader serves a long
// path with few reads; the few others (the model, the thinking level and
// context edits) through r. Nothing is kept from one entry to the next.
// With buf, every line is read into *buf (grown as needed): fn must then
// not keep an entry's messages, which the next entry's line overwrites.
func (r *Reader) project(leaf int, seq *Reader, buf *[]byte, fn func(Projected) error) (Context, error) {
	s := r.s
	ctx := Context{Model: json.RawMessage("null"), ThinkingLevel: json.RawMessage(`"off"`)}
	path := s.Path(leaf)
	if len(path) == 0 {
		return ctx, nil
	}
	get := func(rd *Reader, i int) (js.Object, error) {
		b, err := rd.RawQuick(i)
		if err != nil {
			return nil, err
		}
		o, _ := js.ParseObject(b)
		return o, nil
	}

	// Model and thinking level: the last entry on the path that sets each
	// (pi walks the whole path forward; the last setter wins either way).
	haveModel, haveThinking := false, false
	for k := len(path) - 1; k >= 0 && !(haveModel && haveThinking); k-- {
		i := path[k]
		e := &s.Entries[i]
		isModel := e.Type == TypeModelChange || e.Type == TypeMessage && e.Role == RoleAssistant
		isThinking := e.Type == TypeThinking
		if !(isModel && !haveModel || isThinking && !haveThinking) {
			continue
		}
		o, err := get(r, i)
		if err != nil {
			return Context{}, err
		}
		if isThinking {
			haveThinking = true
			ctx.ThinkingLevel, _ = o.Get("thinkingLevel")
			continue
		}
		haveModel = true
		m := js.Object{}
		if e.Type == TypeModelChange {
			m.SetIf("provider", o)
			m.SetIf("modelId", o)
		} else {
			msg, _ := o.Get("message")
			mo, _ := js.ParseObject(msg)
			if v, ok := mo.Get("provider"); ok {
				m.Set("provider", v)
			}
			if v, ok := mo.Get("model"); ok {
				m.Set("modelId", v)
			}
		}
		ctx.Model = m.JSON()
	}

	// Entries in context: the latest compaction, the kept entries before it, everything after.
	entries := path
	kept := map[int]bool{}
	if comp, from := s.lastCompaction(path); comp >= 0 {
		entries = []int{path[comp]}
		for _, i := range path[from:comp] {
			if e := &s.Entries[i]; !(e.Type == TypeMessage && e.Role == "system") {
				entries = append(entries, i)
				kept[i] = true
			}
		}
		entries = append(entries, path[comp+1:]...)
	}

	// The latest context edit per target among those entries.
	edits := map[string]int{}
	for _, i := range entries {
		if e := &s.Entries[i]; e.Type == TypeContextEdit && e.Target != "" {
			edits[e.Target] = i
		}
	}

	for k, i := range entries {
		e := &s.Entries[i]
		pe := Projected{Pos: i, Kept: kept[i]}
		if !(e.Type == TypeCompaction && k > 0) && contributes(e) {
			var into []byte
			if buf != nil {
				into = *buf
			}
			// The index validated the lines: one that still holds its id is the entry's.
			line, err := seq.lineInto(into, i, true, false)
			if err != nil {
				return Context{}, err
			}
			if buf != nil && cap(line) > cap(*buf) {
				*buf = line[:0]
			}
			pe.Messages = s.entryMessages(e, line)
			if ei, ok := edits[e.ID]; ok && e.ID != "" {
				eo, err := get(r, ei)
				if err != nil {
					return Context{}, err
				}
				pe.Messages, pe.Edited = applyEdit(pe.Messages, eo)
			}
		}
		if err := fn(pe); err != nil {
			return Context{}, err
		}
	}
	return ctx, nil
}

// contributes reports whether an entry type can yield model messages.
func contributes(e *Entry) bool {
	switch e.Type {
	case TypeMessage, TypeCustomMessage, TypeCompaction:
		return true
	case TypeBranchSummary:
		return e.Flags.Has(FlagHasSummary)
	}
	return false
}

// msTime renders an entry time as JavaScript's getTime() would serialize.
func msTime(t int64) json.RawMessage {
	if t == NoTime {
		return json.RawMessage("null")
	}
	return json.RawMessage(strconv.FormatInt(t, 10))
}

// entryMessages converts one entry, given its line (which the index
// validated), to its model messages (pi's sessionEntryToContextMessages).
func (s *Session) entryMessages(e *Entry, line []byte) []json.RawMessage {
	if e.Type == TypeMessage {
		return s.message(line)
	}
	o := js.ObjectOf(line)
	switch e.Type {
	case TypeCustomMessage:
		m := js.Object{{K: "role", V: json.RawMessage(`"custom"`)}}
		m.SetIf("customType", o)
		if c, ok := o.Get("content"); ok && !js.IsNull(c) {
			m.Set("content", c)
		} else {
			m.Set("content", json.RawMessage(`[]`))
		}
		m.SetIf("display", o)
		m.SetIf("details", o)
		m.Set("timestamp", msTime(e.Time))
		return []json.RawMessage{m.JSON()}
	case TypeBranchSummary:
		m := js.Object{{K: "role", V: json.RawMessage(`"branchSummary"`)}}
		m.SetIf("summary", o)
		m.SetIf("fromId", o)
		m.Set("timestamp", msTime(e.Time))
		return []json.RawMessage{m.JSON()}
	case TypeCompaction:
		m := js.Object{{K: "role", V: json.RawMessage(`"compactionSummary"`)}}
		m.SetIf("summary", o)
		m.SetIf("tokensBefore", o)
		m.Set("timestamp", msTime(e.Time))
		if sys, ok := o.Get("systemMessage"); ok && js.Truthy(sys) {
			return []json.RawMessage{sys, m.JSON()}
		}
		return []json.RawMessage{m.JSON()}
	}
	return nil
}

// message is entryMessages of a message entry. Its message is given as
// written, without splitting it into an Object (the cost of a long chain),
// unless it needs a change (fixMessage).
func (s *Session) message(line []byte) []json.RawMessage {
	var msg []byte
	js.Members(line, func(m js.Member) {
		if js.KeyIs(m.Key, "message") {
			msg = m.Val // the last one, as JSON.parse keeps
		}
	})
	if msg == nil {
		return []json.RawMessage{json.RawMessage("null")}
	}
	var role, content []byte
	has := false
	js.Members(msg, func(m js.Member) {
		switch {
		case js.KeyIs(m.Key, "role"):
			role = m.Val
		case js.KeyIs(m.Key, "content"):
			content, has = m.Val, true
		}
	})
	fix := js.KeyIs(role, "hookMessage") && s.Header.Version < 3 ||
		(!has || js.IsNull(content)) && (js.KeyIs(role, "system") || js.KeyIs(role, RoleUser) || js.KeyIs(role, RoleAssistant) || js.KeyIs(role, RoleToolResult))
	if !fix {
		return []json.RawMessage{msg}
	}
	return s.fixMessage(msg)
}

// fixMessage returns a message as pi's context holds it: a version 2
// hookMessage is a custom one, and a message without content has "" (a
// system message) or [] (a user, assistant or tool result message).
func (s *Session) fixMessage(msg json.RawMessage) []json.RawMessage {
	mo, isObj := js.ParseObject(msg)
	if !isObj {
		return []json.RawMessage{msg}
	}
	changed := false
	role, _ := js.String(mo.Val("role"))
	if role == "hookMessage" && s.Header.Version < 3 {
		mo.Set("role", json.RawMessage(`"custom"`))
		changed = true
	}
	content, has := mo.Get("content")
	if !has || js.IsNull(content) {
		switch role {
		case "system":
			mo.Set("content", json.RawMessage(`""`))
			changed = true
		case RoleUser, RoleAssistant, RoleToolResult:
			mo.Set("content", json.RawMessage(`[]`))
			changed = true
		}
	}
	if !changed {
		return []json.RawMessage{msg}
	}
	return []json.RawMessage{mo.JSON()}
}

// applyEdit applies a context_edit entry to an entry's messages (pi's projectContextEntry).
func applyEdit(msgs []json.RawMessage, edit js.Object) ([]json.RawMessage, bool) {
	rep, ok := edit.Get("replacement")
	if !ok {
		return msgs, false // pi would throw; piweb leaves the target alone
	}
	if js.IsNull(rep) {
		return nil, true
	}
	ro, _ := js.ParseObject(rep)
	content, hasContent := ro.Get("content")
	out := make([]json.RawMessage, len(msgs))
	for k, m := range msgs {
		mo, isObj := js.ParseObject(m)
		role, _ := js.String(mo.Val("role"))
		if !isObj || (role != RoleUser && role != RoleAssistant && role != RoleToolResult && role != "custom") {
			out[k] = m
			continue
		}
		switch {
		case !hasContent:
			mo.Del("content")
		case (role == RoleAssistant || role == RoleToolResult) && len(content) > 0 && content[0] == '"':
			block := js.Object{{K: "type", V: json.RawMessage(`"text"`)}, {K: "text", V: content}}
			mo.Set("content", json.RawMessage("["+string(block.JSON())+"]"))
		default:
			mo.Set("content", content)
		}
		out[k] = mo.JSON()
	}
	return out, true
}
