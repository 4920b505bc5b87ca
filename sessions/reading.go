package sessions

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/piweb/piweb/internal/js"
)

// Inspection is the JSON that `piweb inspect` prints: pi's reading of a file.
type Inspection struct {
	SessionID     string          `json:"sessionId"`
	Version       int             `json:"version"`
	Cwd           json.RawMessage `json:"cwd"` // as pi prints them: "" is not null
	ParentSession json.RawMessage `json:"parentSession"`
	Name          *string         `json:"name"`
	nameJSON      json.RawMessage // Name as pi's JSON.stringify writes it
	LeafID        *string         `json:"leafId"`
	EntryCount    int             `json:"entryCount"`
	Tree          []InspectNode   `json:"tree"`
	Path          []string        `json:"path"`
	Context       *Context        `json:"context"`
}

// InspectNode is one tree node of an Inspection.
type InspectNode struct {
	ID       json.RawMessage   `json:"id"` // these three as pi prints them: "" is not null, nor 5 "5"
	ParentID json.RawMessage   `json:"parentId"`
	Type     json.RawMessage   `json:"type"`
	Label    json.RawMessage   `json:"label"` // a string, or the JSON of a non-string label as pi keeps it
	Children []json.RawMessage `json:"children"`
}

// headerJSON is the header's member k (whose string value is v) as pi
// prints it: a string as it is, "" too; absent, null; another value as
// written. Only an empty v needs the header line read again.
func (s *Session) headerJSON(k, v string) json.RawMessage {
	if v != "" {
		return js.Quote(v)
	}
	r, err := s.Open()
	if err != nil {
		return nil
	}
	defer r.Close()
	line := make([]byte, s.Header.Len)
	if _, err := r.f.ReadAt(line, s.headOff); err != nil {
		return nil
	}
	if raw, ok := js.Lookup(js.ToValidUTF8(line), k); ok {
		return json.RawMessage(js.Stringify(raw))
	}
	return nil
}

// member reads entry i's line and returns its member k as written, or nil.
func (s *Session) member(i int, k string) json.RawMessage {
	line, err := s.Raw(i)
	if err != nil {
		return nil
	}
	v, _ := js.Lookup(line, k)
	return v
}

// rawOf returns entry i's member k as JSON.stringify prints it, or nil
// when it is absent (pi's undefined, printed null).
func (s *Session) rawOf(i int, k string) json.RawMessage {
	if v := s.member(i, k); v != nil {
		return json.RawMessage(js.Stringify(v))
	}
	return nil
}

// idJSON is entry i's id as inspect prints it: a string id as it is ("" too);
// a missing one null, any other value as written (read from the line).
func (s *Session) idJSON(i int) json.RawMessage {
	if e := &s.Entries[i]; !e.Flags.Has(FlagNoID) {
		return js.Quote(e.ID)
	}
	return s.rawOf(i, "id")
}

// parentJSON is entry i's parentId as inspect prints it (see idJSON).
func (s *Session) parentJSON(i int) json.RawMessage {
	switch e := &s.Entries[i]; {
	case e.Flags.Has(FlagNoParentKey):
		return nil
	case e.ParentID != "":
		return js.Quote(e.ParentID)
	}
	return s.rawOf(i, "parentId") // null, "" or another value
}

// typeJSON is entry i's type as inspect prints it (see idJSON).
func (s *Session) typeJSON(i int) json.RawMessage {
	if e := &s.Entries[i]; e.Type != "" {
		return js.Quote(e.Type)
	}
	return s.rawOf(i, "type")
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// labelJSON returns the label in force for entry i as pi holds it, or nil.
func (s *Session) labelJSON(i int) json.RawMessage {
	l := s.LabelOn(i)
	if l < 0 {
		return nil
	}
	if e := &s.Entries[l]; e.Flags.Has(FlagLabelJSON) {
		return json.RawMessage(e.Text)
	}
	// As written, through JSON.stringify: a lone surrogate stays "\ud83d".
	if line, err := s.Raw(l); err == nil {
		if raw, ok := js.Lookup(line, "label"); ok {
			if out, ok := js.Restringify(raw, false); ok {
				return out
			}
		}
	}
	return js.Quote(s.Entries[l].Text)
}

// nameJSON returns the session name as pi's getSessionName gives it (the
// last session_info's name, trimmed; nil when empty), as JSON.stringify writes it.
func (s *Session) nameJSON() json.RawMessage {
	for i := len(s.Entries) - 1; i >= 0; i-- {
		if s.Entries[i].Type != TypeSessionInfo {
			continue
		}
		if line, err := s.Raw(i); err == nil {
			if raw, ok := js.Lookup(line, "name"); ok {
				if out, ok := js.Restringify(raw, true); ok && string(out) != `""` {
					return out
				}
			}
		}
		break
	}
	if n := s.Name(); n != "" {
		return js.Quote(n)
	}
	return nil
}

// Inspect builds the Inspection at the entry with id leafID ("" for the default leaf).
func (s *Session) Inspect(leafID string) (*Inspection, error) {
	leaf, err := s.leafPos(leafID)
	if err != nil {
		return nil, err
	}
	in := &Inspection{
		SessionID:     s.Header.ID,
		Version:       s.Header.Version,
		Cwd:           s.headerJSON("cwd", s.Header.Cwd),
		ParentSession: s.headerJSON("parentSession", s.Header.ParentSession),
		Name:          strOrNil(s.Name()),
		nameJSON:      s.nameJSON(),
		EntryCount:    s.EntryCount(),
		Tree:          []InspectNode{},
		Path:          []string{},
	}
	if leaf >= 0 {
		if e := &s.Entries[leaf]; !e.Flags.Has(FlagNoID) {
			in.LeafID = &e.ID // "" included: pi prints the id as it is
		}
	}
	in.Tree = s.piTree()
	// pi's getBranch starts from the leaf id; an id-less last entry gives an empty path,
	// while the context still walks from that last entry.
	if leaf >= 0 && s.Entries[leaf].ID != "" {
		for _, i := range s.Path(leaf) {
			in.Path = append(in.Path, s.Entries[i].ID)
		}
	}
	ctx, err := s.Context(leaf)
	if err != nil {
		return nil, err
	}
	in.Context = ctx
	return in, nil
}

// JSON returns the Inspection as indented JSON, as `piweb inspect` prints
// it. It is written by hand, not by encoding/json, which refuses values
// nested more than 10,000 deep (pi takes any depth) and escapes what
// JSON.stringify does not; the messages are spliced in as written.
func (in *Inspection) JSON() []byte {
	b := make([]byte, 0, 4096+200*len(in.Tree)) // about what a node takes, so it seldom grows
	str := func(s string) { b = append(b, js.Quote(s)...) }
	opt := func(s *string) {
		if s == nil {
			b = append(b, "null"...)
		} else {
			str(*s)
		}
	}
	raw := func(r json.RawMessage) {
		if len(r) == 0 {
			b = append(b, "null"...)
		} else {
			b = append(b, r...)
		}
	}
	b = append(b, `{"sessionId":`...)
	str(in.SessionID)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, int64(in.Version), 10)
	b = append(b, `,"cwd":`...)
	raw(in.Cwd)
	b = append(b, `,"parentSession":`...)
	raw(in.ParentSession)
	for _, f := range []struct {
		k string
		v *string
	}{{"name", in.Name}, {"leafId", in.LeafID}} {
		b = append(b, ',')
		str(f.k)
		b = append(b, ':')
		if f.k == "name" && in.nameJSON != nil {
			b = append(b, in.nameJSON...)
			continue
		}
		opt(f.v)
	}
	b = append(b, `,"entryCount":`...)
	b = strconv.AppendInt(b, int64(in.EntryCount), 10)
	b = append(b, `,"tree":[`...)
	for k, n := range in.Tree {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		raw(n.ID)
		b = append(b, `,"parentId":`...)
		raw(n.ParentID)
		b = append(b, `,"type":`...)
		raw(n.Type)
		b = append(b, `,"label":`...)
		raw(n.Label)
		b = append(b, `,"children":[`...)
		for j, c := range n.Children {
			if j > 0 {
				b = append(b, ',')
			}
			raw(c)
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"path":[`...)
	for k, id := range in.Path {
		if k > 0 {
			b = append(b, ',')
		}
		str(id)
	}
	b = append(b, `],"context":`...)
	if c := in.Context; c == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"messages":[`...)
		for k, m := range c.Messages {
			if k > 0 {
				b = append(b, ',')
			}
			raw(m)
		}
		b = append(b, ']')
		if len(c.ThinkingLevel) > 0 {
			b = append(b, `,"thinkingLevel":`...)
			raw(c.ThinkingLevel)
		}
		b = append(b, `,"model":`...)
		raw(c.Model)
		b = append(b, '}')
	}
	b = append(b, '}')
	return js.Indent(b, "  ")
}

// piTree reproduces pi's getTree exactly, quirks included, for inspect:
// entries sharing an id (or all lacking one) share the node of the last of
// them, which then appears once per occurrence; an entry without a parentId
// member hangs under the id-less node when there is one. The web view does
// not copy this: there every line is its own node (see Walk).
func (s *Session) piTree() []InspectNode {
	const undef = "\x00undefined"
	key := func(e *Entry) string {
		if e.Flags.Has(FlagNoID) {
			return undef
		}
		return e.ID
	}
	nodeOf := map[string]int{}
	for i := range s.Entries {
		nodeOf[key(&s.Entries[i])] = i
	}
	children := make([][]int, len(s.Entries))
	var roots []int
	for i := range s.Entries {
		e := &s.Entries[i]
		node := nodeOf[key(e)]
		pkey := e.ParentID
		switch {
		case e.Flags.Has(FlagNoParentKey):
			pkey = undef
		case e.ParentID == "" && !e.Flags.Has(FlagNoParentKey):
			// parentId null; or "", which pi's getTree looks up like any id
			// (its paths stop there, as piweb's do).
			if _, ok := nodeOf[""]; !ok || string(s.member(i, "parentId")) != `""` {
				roots = append(roots, node)
				continue
			}
		}
		if pkey == key(e) {
			roots = append(roots, node)
			continue
		}
		if p, ok := nodeOf[pkey]; ok {
			children[p] = append(children[p], node)
		} else {
			roots = append(roots, node)
		}
	}
	for p := range children {
		slices.SortStableFunc(children[p], s.cmpSiblings)
	}
	// Pre-order with an explicit stack. Shared nodes repeat their subtree as
	// in pi; a node already on the current branch would make pi loop forever,
	// so it is not descended into again, and the output is capped.
	out := make([]InspectNode, 0, len(s.Entries))
	// Each id is written as a node's id and again among its parent's
	// children, and a type repeats on most nodes: quote each once.
	ids := make([]json.RawMessage, len(s.Entries))
	idOf := func(i int) json.RawMessage {
		if ids[i] == nil {
			ids[i] = s.idJSON(i)
		}
		return ids[i]
	}
	types := map[string]json.RawMessage{}
	typeOf := func(i int) json.RawMessage {
		t := s.Entries[i].Type
		if t == "" {
			return s.typeJSON(i)
		}
		q, ok := types[t]
		if !ok {
			q = s.typeJSON(i)
			types[t] = q
		}
		return q
	}
	limit := 4*len(s.Entries) + 16
	type item struct {
		node  int
		depth int
	}
	var stack []item
	var branch []int                         // nodes on the current root-to-node chain
	onBranch := make([]bool, len(s.Entries)) // the same as a set: a node is on it at most once
	for r := len(roots) - 1; r >= 0; r-- {
		stack = append(stack, item{roots[r], 0})
	}
	for len(stack) > 0 && len(out) < limit {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, gone := range branch[it.depth:] {
			onBranch[gone] = false
		}
		branch = append(branch[:it.depth], it.node)
		onBranch[it.node] = true
		n := InspectNode{ID: idOf(it.node), ParentID: s.parentJSON(it.node), Type: typeOf(it.node),
			Label: s.labelJSON(it.node), Children: []json.RawMessage{}}
		if kids := children[it.node]; len(kids) > 0 {
			n.Children = make([]json.RawMessage, len(kids))
			for k, c := range kids {
				n.Children[k] = idOf(c)
			}
		}
		out = append(out, n)
		kids := children[it.node]
		for k := len(kids) - 1; k >= 0; k-- {
			if !onBranch[kids[k]] {
				stack = append(stack, item{kids[k], it.depth + 1})
			}
		}
	}
	return out
}

// leafPos resolves leafID to a position: "" is pi's leaf, any other id must exist.
func (s *Session) leafPos(leafID string) (int, error) {
	if leafID == "" {
		return s.Leaf(), nil
	}
	i, ok := s.Lookup(leafID)
	if !ok {
		return 0, &Error{Kind: ErrNoEntry, Entry: leafID}
	}
	return i, nil
}
