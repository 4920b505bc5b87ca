package sessions

import (
	"bytes"
	"encoding/json"
	"strconv"
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

// Project computes the projection at entry leaf (pi's buildSessionProjection).
// A leaf of -1 gives the empty context.
func (s *Session) Project(leaf int) (*Projection, error) {
	r, err := s.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Project(leaf)
}

// Project computes the projection at entry leaf using r's open file.
func (r *Reader) Project(leaf int) (*Projection, error) {
	s := r.s
	p := &Projection{Context: Context{Messages: []json.RawMessage{}, Model: json.RawMessage("null"),
		ThinkingLevel: json.RawMessage(`"off"`)}}
	path := s.Path(leaf)
	if len(path) == 0 {
		return p, nil
	}
	raws := make(map[int][]byte, len(path))
	get := func(i int) (obj, error) {
		b, ok := raws[i]
		if !ok {
			var err error
			if b, err = r.Raw(i); err != nil {
				return nil, err
			}
			raws[i] = b
		}
		o, _ := parseObj(b)
		return o, nil
	}

	// Model and thinking level: the last entry on the path that sets each
	// (pi walks the whole path forward; the last setter wins either way).
	haveModel, haveThinking := false, false
	for k := len(path) - 1; k >= 0 && !(haveModel && haveThinking); k-- {
		i := path[k]
		e := &s.Entries[i]
		isModel := e.Type == TypeModelChange || e.Type == TypeMessage && e.Role == "assistant"
		isThinking := e.Type == TypeThinking
		if !(isModel && !haveModel || isThinking && !haveThinking) {
			continue
		}
		o, err := get(i)
		if err != nil {
			return nil, err
		}
		if isThinking {
			haveThinking = true
			p.ThinkingLevel, _ = o.get("thinkingLevel")
			continue
		}
		haveModel = true
		m := obj{}
		if e.Type == TypeModelChange {
			m.setIf("provider", o)
			m.setIf("modelId", o)
		} else {
			msg, _ := o.get("message")
			mo, _ := parseObj(msg)
			if v, ok := mo.get("provider"); ok {
				m.set("provider", v)
			}
			if v, ok := mo.get("model"); ok {
				m.set("modelId", v)
			}
		}
		p.Model = m.json()
	}

	// Entries in context: the latest compaction, the kept entries before it, everything after.
	entries := path
	kept := map[int]bool{}
	comp := -1
	for k, i := range path {
		if s.Entries[i].Type == TypeCompaction {
			comp = k
		}
	}
	if comp >= 0 {
		c := &s.Entries[path[comp]]
		entries = []int{path[comp]}
		found := false
		for _, i := range path[:comp] {
			e := &s.Entries[i]
			if e.ID != "" && e.ID == c.FirstKept {
				found = true
			}
			if found && !(e.Type == TypeMessage && e.Role == "system") {
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
			o, err := get(i)
			if err != nil {
				return nil, err
			}
			pe.Messages = s.entryMessages(e, o)
			if ei, ok := edits[e.ID]; ok && e.ID != "" {
				eo, err := get(ei)
				if err != nil {
					return nil, err
				}
				pe.Messages, pe.Edited = applyEdit(pe.Messages, eo)
			}
		}
		p.Entries = append(p.Entries, pe)
		p.Messages = append(p.Messages, pe.Messages...)
	}
	return p, nil
}

// Context returns pi's buildSessionContext at leaf.
func (s *Session) Context(leaf int) (*Context, error) {
	p, err := s.Project(leaf)
	if err != nil {
		return nil, err
	}
	return &p.Context, nil
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

// entryMessages converts one entry to its model messages (pi's sessionEntryToContextMessages).
func (s *Session) entryMessages(e *Entry, o obj) []json.RawMessage {
	switch e.Type {
	case TypeMessage:
		msg, ok := o.get("message")
		if !ok {
			return []json.RawMessage{json.RawMessage("null")}
		}
		mo, isObj := parseObj(msg)
		if !isObj {
			return []json.RawMessage{msg}
		}
		changed := false
		role, _ := jsonString(mustGet(mo, "role"))
		if role == "hookMessage" && s.Header.Version < 3 {
			mo.set("role", json.RawMessage(`"custom"`))
			changed = true
		}
		content, has := mo.get("content")
		if !has || isNull(content) {
			switch role {
			case "system":
				mo.set("content", json.RawMessage(`""`))
				changed = true
			case "user", "assistant", "toolResult":
				mo.set("content", json.RawMessage(`[]`))
				changed = true
			}
		}
		if !changed {
			return []json.RawMessage{msg}
		}
		return []json.RawMessage{mo.json()}
	case TypeCustomMessage:
		m := obj{{"role", json.RawMessage(`"custom"`)}}
		m.setIf("customType", o)
		if c, ok := o.get("content"); ok && !isNull(c) {
			m.set("content", c)
		} else {
			m.set("content", json.RawMessage(`[]`))
		}
		m.setIf("display", o)
		m.setIf("details", o)
		m.set("timestamp", msTime(e.Time))
		return []json.RawMessage{m.json()}
	case TypeBranchSummary:
		m := obj{{"role", json.RawMessage(`"branchSummary"`)}}
		m.setIf("summary", o)
		m.setIf("fromId", o)
		m.set("timestamp", msTime(e.Time))
		return []json.RawMessage{m.json()}
	case TypeCompaction:
		m := obj{{"role", json.RawMessage(`"compactionSummary"`)}}
		m.setIf("summary", o)
		m.setIf("tokensBefore", o)
		m.set("timestamp", msTime(e.Time))
		if sys, ok := o.get("systemMessage"); ok && truthy(sys) {
			return []json.RawMessage{sys, m.json()}
		}
		return []json.RawMessage{m.json()}
	}
	return nil
}

// applyEdit applies a context_edit entry to an entry's messages (pi's projectContextEntry).
func applyEdit(msgs []json.RawMessage, edit obj) ([]json.RawMessage, bool) {
	rep, ok := edit.get("replacement")
	if !ok {
		return msgs, false // pi would throw; piweb leaves the target alone
	}
	if isNull(rep) {
		return nil, true
	}
	ro, _ := parseObj(rep)
	content, hasContent := ro.get("content")
	out := make([]json.RawMessage, len(msgs))
	for k, m := range msgs {
		mo, isObj := parseObj(m)
		role, _ := jsonString(mustGet(mo, "role"))
		if !isObj || (role != "user" && role != "assistant" && role != "toolResult" && role != "custom") {
			out[k] = m
			continue
		}
		switch {
		case !hasContent:
			mo.del("content")
		case (role == "assistant" || role == "toolResult") && len(content) > 0 && content[0] == '"':
			block := obj{{"type", json.RawMessage(`"text"`)}, {"text", content}}
			mo.set("content", json.RawMessage("["+string(block.json())+"]"))
		default:
			mo.set("content", content)
		}
		out[k] = mo.json()
	}
	return out, true
}

// obj is a JSON object that keeps its key order, as JavaScript objects do.
type obj []kv

type kv struct {
	k string
	v json.RawMessage
}

// parseObj splits a JSON object into members; a repeated key keeps its
// first position and its last value, as JSON.parse does.
func parseObj(b []byte) (obj, bool) {
	var o obj
	_, err := eachMember(b, 0, func(m member) { o.set(keyName(m.key), m.val) })
	return o, err == nil
}

func mustGet(o obj, k string) json.RawMessage {
	v, _ := o.get(k)
	return v
}

func (o obj) get(k string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.k == k {
			return m.v, true
		}
	}
	return nil, false
}

func (o *obj) set(k string, v json.RawMessage) {
	for i := range *o {
		if (*o)[i].k == k {
			(*o)[i].v = v
			return
		}
	}
	*o = append(*o, kv{k, v})
}

// setIf copies key k from src when present.
func (o *obj) setIf(k string, src obj) {
	if v, ok := src.get(k); ok {
		o.set(k, v)
	}
}

func (o *obj) del(k string) {
	for i := range *o {
		if (*o)[i].k == k {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

func (o obj) json() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.k)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// MarshalJSON encodes o with its keys in order.
func (o obj) MarshalJSON() ([]byte, error) { return o.json(), nil }
