package sessions

import (
	"encoding/json"
	"slices"

	"github.com/piweb/piweb/internal/js"
)

// Reading is pi's reading of a session at one leaf: what pi's
// SessionManager gives for it (header, session name, leaf, getTree,
// getBranch, buildSessionContext), its values as pi's JSON.stringify
// prints them, quirks included. The header, leaf and path are read at
// once; the tree and the context come a piece at a time (EachNode,
// EachMessage), so that a reader of a 100k-entry session need not hold
// them (package inspect prints a Reading).
type Reading struct {
	SessionID     string
	Version       int
	Cwd           json.RawMessage // as pi prints them: "" is not null; nil when absent (null)
	ParentSession json.RawMessage
	Name          json.RawMessage // the session name (pi's getSessionName), nil when none
	LeafID        *string         // nil when there is no leaf or it has no id
	EntryCount    int
	Path          []string // the ids from the root to the leaf (pi's getBranch)

	s    *Session
	leaf int
}

// Node is one node of pi's tree (getTree), as pi prints it.
type Node struct {
	ID       json.RawMessage   `json:"id"` // these three as pi prints them: "" is not null, nor 5 "5"; nil for null
	ParentID json.RawMessage   `json:"parentId"`
	Type     json.RawMessage   `json:"type"`
	Label    json.RawMessage   `json:"label"`    // a string, or the JSON of a non-string label as pi keeps it; nil for none
	Children []json.RawMessage `json:"children"` // the children's ids
}

// Read returns pi's reading at the entry with id leafID ("" for pi's leaf,
// the file's last entry).
func (s *Session) Read(leafID string) (*Reading, error) {
	leaf, err := s.LeafPos(leafID)
	if err != nil {
		return nil, err
	}
	rd := &Reading{
		SessionID:     s.Header.ID,
		Version:       s.Header.Version,
		Cwd:           s.headerJSON("cwd", s.Header.Cwd),
		ParentSession: s.headerJSON("parentSession", s.Header.ParentSession),
		Name:          s.nameJSON(),
		EntryCount:    s.EntryCount(),
		Path:          []string{},
		s:             s,
		leaf:          leaf,
	}
	if leaf >= 0 {
		if e := &s.Entries[leaf]; !e.Flags.Has(FlagNoID) {
			rd.LeafID = &e.ID // "" included: pi prints the id as it is
		}
	}
	// pi's getBranch starts from the leaf id; an id-less last entry gives an empty path,
	// while the context still walks from that last entry.
	if leaf >= 0 && s.Entries[leaf].ID != "" {
		path := s.Path(leaf)
		rd.Path = make([]string, len(path))
		for k, i := range path {
			rd.Path[k] = s.Entries[i].ID
		}
	}
	return rd, nil
}

// EachMessage calls fn with each message of the model context at the
// leaf, in order (pi's buildSessionContext), and returns the context's
// thinking level (nil when the last thinking level change has none) and
// model. The file is read once through, in path order, each line into
// the same buffer: fn must not keep msg.
func (rd *Reading) EachMessage(fn func(msg json.RawMessage) error) (thinkingLevel, model json.RawMessage, err error) {
	r, err := rd.s.Open()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	seq := r.Sequential()
	defer seq.release()
	var buf []byte
	ctx, err := r.project(rd.leaf, seq, &buf, func(pe Projected) error {
		for _, m := range pe.Messages {
			if err := fn(m); err != nil {
				return err
			}
		}
		return nil
	})
	return ctx.ThinkingLevel, ctx.Model, err
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

// LeafPos resolves leafID to a position: "" is pi's leaf, any other id must exist.
func (s *Session) LeafPos(leafID string) (int, error) {
	if leafID == "" {
		return s.Leaf(), nil
	}
	i, ok := s.Lookup(leafID)
	if !ok {
		return 0, &Error{Kind: ErrNoEntry, Entry: leafID}
	}
	return i, nil
}

// nodes reads what pi prints of each entry for its tree, through one open file.
type nodes struct {
	s     *Session
	r     *Reader
	ids   []json.RawMessage // each id quoted once: it is printed as a node's and again among its parent's children
	types map[string]json.RawMessage
}

// member reads entry i's line and returns its member k as written, or nil.
func (n *nodes) member(i int, k string) json.RawMessage {
	line, err := n.r.Raw(i)
	if err != nil {
		return nil
	}
	v, _ := js.Lookup(line, k)
	return v
}

// rawOf returns entry i's member k as JSON.stringify prints it, or nil
// when it is absent (pi's undefined, printed null).
func (n *nodes) rawOf(i int, k string) json.RawMessage {
	if v := n.member(i, k); v != nil {
		return json.RawMessage(js.Stringify(v))
	}
	return nil
}

// id is entry i's id as pi prints it: a string id as it is ("" too); a
// missing one null, any other value as written (read from the line).
func (n *nodes) id(i int) json.RawMessage {
	if n.ids[i] == nil {
		if e := &n.s.Entries[i]; !e.Flags.Has(FlagNoID) {
			n.ids[i] = quote(e.ID)
		} else {
			n.ids[i] = n.rawOf(i, "id")
		}
	}
	return n.ids[i]
}

// parent is entry i's parentId as pi prints it (see id).
func (n *nodes) parent(i int) json.RawMessage {
	switch e := &n.s.Entries[i]; {
	case e.Flags.Has(FlagNoParentKey):
		return nil
	case e.ParentID != "":
		if p := n.s.parent[i]; p >= 0 && n.s.Entries[p].ID == e.ParentID && !n.s.Entries[p].Flags.Has(FlagNoID) {
			return n.id(p) // quoted once
		}
		return quote(e.ParentID)
	}
	return n.rawOf(i, "parentId") // null, "" or another value
}

// typ is entry i's type as pi prints it (see id).
func (n *nodes) typ(i int) json.RawMessage {
	t := n.s.Entries[i].Type
	if t == "" {
		return n.rawOf(i, "type")
	}
	q, ok := n.types[t]
	if !ok {
		q = quote(t)
		n.types[t] = q
	}
	return q
}

// label returns the label in force for entry i as pi holds it, or nil.
func (n *nodes) label(i int) json.RawMessage {
	l := n.s.LabelOn(i)
	if l < 0 {
		return nil
	}
	if e := &n.s.Entries[l]; e.Flags.Has(FlagLabelJSON) {
		return json.RawMessage(e.Text)
	}
	// As written, through JSON.stringify: a lone surrogate stays "\ud83d".
	if raw := n.member(l, "label"); raw != nil {
		if out, ok := js.Restringify(raw, false); ok {
			return out
		}
	}
	return js.Quote(n.s.Entries[l].Text)
}

// quote is js.Quote, quicker for a plain id (printable ASCII, no quote or backslash).
func quote(s string) json.RawMessage {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return js.Quote(s)
		}
	}
	b := make([]byte, len(s)+2)
	b[0] = '"'
	copy(b[1:], s)
	b[len(b)-1] = '"'
	return b
}

// EachNode calls fn with the nodes of pi's tree in pre-order, as pi's
// getTree gives them, quirks included: entries sharing an id (or all
// lacking one) share the node of the last of them, which then appears
// once per occurrence; an entry without a parentId member hangs under the
// id-less node when there is one. (The web view does not copy this: there
// every line is its own node, see Walk.) fn must not keep the node, which
// is reused.
func (rd *Reading) EachNode(fn func(*Node) error) error {
	s := rd.s
	r, err := s.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	nd := &nodes{s: s, r: r, ids: make([]json.RawMessage, len(s.Entries)), types: map[string]json.RawMessage{}}

	const undef = "\x00undefined"
	key := func(e *Entry) string {
		if e.Flags.Has(FlagNoID) {
			return undef
		}
		return e.ID
	}
	nodeOf := make(map[string]int, len(s.Entries))
	for i := range s.Entries {
		nodeOf[key(&s.Entries[i])] = i
	}
	// Each entry's node hangs under its parent's node, or is a root (-1).
	// The children of the nodes are then laid out in one array, each
	// node's in file order, then in pi's order.
	under := make([]int32, len(s.Entries))
	count := make([]int32, len(s.Entries)+1)
	var roots []int
	for i := range s.Entries {
		e := &s.Entries[i]
		node := nodeOf[key(e)]
		under[i] = -1
		pkey := e.ParentID
		switch {
		case e.Flags.Has(FlagNoParentKey):
			pkey = undef
		case e.ParentID == "" && !e.Flags.Has(FlagNoParentKey):
			// parentId null; or "", which pi's getTree looks up like any id
			// (its paths stop there, as piweb's do).
			if _, ok := nodeOf[""]; !ok || string(nd.member(i, "parentId")) != `""` {
				roots = append(roots, node)
				continue
			}
		}
		if pkey == key(e) {
			roots = append(roots, node)
			continue
		}
		if p, ok := nodeOf[pkey]; ok {
			under[i] = int32(p)
			count[p+1]++
		} else {
			roots = append(roots, node)
		}
	}
	for p := range s.Entries {
		count[p+1] += count[p] // now the start of p's children
	}
	kids := make([]int, count[len(s.Entries)])
	fill := slices.Clone(count[:len(s.Entries)])
	for i := range s.Entries {
		if p := under[i]; p >= 0 {
			kids[fill[p]] = nodeOf[key(&s.Entries[i])]
			fill[p]++
		}
	}
	children := func(p int) []int { return kids[count[p]:count[p+1]] }
	for p := range s.Entries {
		slices.SortStableFunc(children(p), s.cmpSiblings)
	}

	// Pre-order with an explicit stack. Shared nodes repeat their subtree as
	// in pi; a node already on the current branch would make pi loop forever,
	// so it is not descended into again, and the output is capped.
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
	var n Node
	for written := 0; len(stack) > 0 && written < limit; written++ {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, gone := range branch[it.depth:] {
			onBranch[gone] = false
		}
		branch = append(branch[:it.depth], it.node)
		onBranch[it.node] = true
		kids := children(it.node)
		n = Node{ID: nd.id(it.node), ParentID: nd.parent(it.node), Type: nd.typ(it.node),
			Label: nd.label(it.node), Children: n.Children[:0]}
		for _, c := range kids {
			n.Children = append(n.Children, nd.id(c))
		}
		if err := fn(&n); err != nil {
			return err
		}
		for k := len(kids) - 1; k >= 0; k-- {
			if !onBranch[kids[k]] {
				stack = append(stack, item{kids[k], it.depth + 1})
			}
		}
	}
	return nil
}
