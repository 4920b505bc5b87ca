package sessions

import (
	"encoding/json"
	"errors"
	"testing"
)

// inspection is a Reading collected whole: the document package inspect
// prints, for the tests that compare it with pi's reading.
type inspection struct {
	SessionID     string          `json:"sessionId"`
	Version       int             `json:"version"`
	Cwd           json.RawMessage `json:"cwd"`
	ParentSession json.RawMessage `json:"parentSession"`
	Name          json.RawMessage `json:"name"`
	LeafID        *string         `json:"leafId"`
	EntryCount    int             `json:"entryCount"`
	Tree          []Node          `json:"tree"`
	Path          []string        `json:"path"`
	Context       Context         `json:"context"`
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

// Context returns pi's buildSessionContext at leaf, collected.
func (s *Session) Context(leaf int) (*Context, error) {
	p, err := s.Project(leaf)
	if err != nil {
		return nil, err
	}
	return &p.Context, nil
}

// tInspect collects s's Reading at leaf.
func tInspect(s *Session, leaf string) (*inspection, error) {
	rd, err := s.Read(leaf)
	if err != nil {
		return nil, err
	}
	in := &inspection{SessionID: rd.SessionID, Version: rd.Version, Cwd: rd.Cwd, ParentSession: rd.ParentSession,
		Name: rd.Name, LeafID: rd.LeafID, EntryCount: rd.EntryCount, Tree: []Node{}, Path: rd.Path,
		Context: Context{Messages: []json.RawMessage{}}}
	err = rd.EachNode(func(n *Node) error {
		c := *n
		c.Children = append([]json.RawMessage{}, n.Children...)
		in.Tree = append(in.Tree, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	in.Context.ThinkingLevel, in.Context.Model, err = rd.EachMessage(func(m json.RawMessage) error {
		in.Context.Messages = append(in.Context.Messages, append(json.RawMessage{}, m...)) // m is reused
		return nil
	})
	return in, err
}

// TestReadingStops checks an error from EachNode's or EachMessage's fn
// ends the walk and comes back, and an unknown leaf is an ErrNoEntry.
func TestReadingStops(t *testing.T) {
	s := tParse(t, tLines(tHeader, tUser("u1", "", 1, "hi"), tUser("u2", "u1", 2, "again"), tUser("u3", "u2", 3, "more")))
	rd, err := s.Read("")
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	if err := rd.EachNode(func(*Node) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("EachNode: %v after %d nodes", err, n)
	}
	n = 0
	if _, _, err := rd.EachMessage(func(json.RawMessage) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("EachMessage: %v after %d messages", err, n)
	}
	var e *Error
	if _, err := s.Read("nope"); !errors.As(err, &e) || e.Kind != ErrNoEntry {
		t.Errorf("Read(nope): %v", err)
	}
}

// TestReadingMatchesProject checks EachMessage gives the messages of
// Context at every leaf of the fixture, in order, with its thinking level
// and model.
func TestReadingMatchesProject(t *testing.T) {
	s, err := Load("testdata/branches.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range append([]string{""}, tAllIDs(s)...) {
		in, err := tInspect(s, id)
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := s.LeafPos(id)
		want, err := s.Context(leaf)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := mustJSONValue(t, in.Context), mustJSONValue(t, *want); a != b {
			t.Errorf("leaf %q:\n got %s\nwant %s", id, a, b)
		}
	}
}

func mustJSONValue(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
