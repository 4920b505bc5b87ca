package sessions

import (
	"encoding/json"
	"fmt"
)

// Inspection is the JSON that `piweb inspect` prints: pi's reading of a file.
type Inspection struct {
	SessionID     string        `json:"sessionId"`
	Version       int           `json:"version"`
	Cwd           *string       `json:"cwd"`
	ParentSession *string       `json:"parentSession"`
	Name          *string       `json:"name"`
	LeafID        *string       `json:"leafId"`
	EntryCount    int           `json:"entryCount"`
	Tree          []InspectNode `json:"tree"`
	Path          []string      `json:"path"`
	Context       *Context      `json:"context"`
}

// InspectNode is one tree node of an Inspection.
type InspectNode struct {
	ID       *string  `json:"id"`
	ParentID *string  `json:"parentId"`
	Type     *string  `json:"type"`
	Label    *string  `json:"label"`
	Children []string `json:"children"`
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ErrNoEntry is returned for an entry id the session does not hold.
var ErrNoEntry = fmt.Errorf("no such entry")

// Inspect builds the Inspection at the entry with id leafID ("" for the default leaf).
func (s *Session) Inspect(leafID string) (*Inspection, error) {
	leaf := s.Leaf()
	if leafID != "" {
		i, ok := s.Lookup(leafID)
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrNoEntry, leafID)
		}
		leaf = i
	}
	in := &Inspection{
		SessionID:     s.Header.ID,
		Version:       s.Header.Version,
		Cwd:           strOrNil(s.Header.Cwd),
		ParentSession: strOrNil(s.Header.ParentSession),
		Name:          strOrNil(s.Name()),
		EntryCount:    s.EntryCount(),
		Tree:          []InspectNode{},
		Path:          []string{},
	}
	if leaf >= 0 {
		in.LeafID = strOrNil(s.Entries[leaf].ID)
	}
	s.Walk(func(i, _ int) bool {
		e := &s.Entries[i]
		n := InspectNode{ID: strOrNil(e.ID), ParentID: strOrNil(e.ParentID), Type: strOrNil(e.Type),
			Label: strOrNil(s.LabelOf(i)), Children: []string{}}
		for _, c := range s.Children(i) {
			n.Children = append(n.Children, s.Entries[c].ID)
		}
		in.Tree = append(in.Tree, n)
		return true
	})
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

// MarshalIndent encodes v as indented JSON.
func MarshalIndent(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
