package sessions

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectionJSON checks the hand-written JSON of an Inspection says
// what encoding/json says, on every fixture at every leaf, and that a
// value nested deeper than encoding/json takes is printed too.
func TestInspectionJSON(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	more, _ := filepath.Glob("../static/demo/*/*.jsonl")
	for _, f := range append(files, more...) {
		s, err := Load(f)
		if err != nil {
			continue
		}
		for _, leaf := range append([]string{""}, tAllIDs(s)...) {
			in, err := s.Inspect(leaf)
			if err != nil {
				continue
			}
			want, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if err := json.Unmarshal(in.JSON(), &a); err != nil {
				t.Fatalf("%s at %q: %v", f, leaf, err)
			}
			_ = json.Unmarshal(want, &b)
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if !bytes.Equal(ja, jb) {
				t.Errorf("%s at %q:\n%s\nwant\n%s", f, leaf, ja, jb)
			}
		}
	}
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	s := tParse(t, tLines(tHeader, tUser("u1", "", 1, "hi"),
		tEntry(TypeMessage, "a1", "u1", 2, `,"message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"x","arguments":{"a":`+deep+`}}],"details":`+deep+`,"timestamp":2}`)))
	in, err := s.Inspect("")
	if err != nil {
		t.Fatal(err)
	}
	if out := in.JSON(); !bytes.Contains(out, []byte(`"leafId": "a1"`)) || !bytes.Contains(out, []byte(deep[:1000])) {
		t.Errorf("deep content: %.300s", out)
	}
}

// TestInspectPrintsValuesAsPi checks inspect prints an empty id, parentId,
// type and cwd as pi does ("", not null: pi prints `value ?? null`), an
// absent one as null, and hangs an entry whose parentId is "" under the
// line whose id is "" as pi's getTree does.
func TestInspectPrintsValuesAsPi(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	lines := strings.Join([]string{
		`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":""}`,
		`{"type":"","id":"","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}`,
		`{"type":"message","id":"b","parentId":"","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"b","timestamp":2}}`,
		`{"id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z"}`,
	}, "\n") + "\n"
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.Inspect("")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Cwd           *string `json:"cwd"`
		ParentSession *string `json:"parentSession"`
		Tree          []struct {
			ID, ParentID, Type any
			Children           []any
		} `json:"tree"`
	}
	if err := json.Unmarshal(in.JSON(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Cwd == nil || *got.Cwd != "" || got.ParentSession != nil {
		t.Errorf("cwd %v parentSession %v: want \"\" and null", got.Cwd, got.ParentSession)
	}
	if len(got.Tree) != 3 || got.Tree[0].ID != "" || got.Tree[0].Type != "" || got.Tree[0].ParentID != nil ||
		len(got.Tree[0].Children) != 1 || got.Tree[0].Children[0] != "b" || got.Tree[1].ParentID != "" || got.Tree[2].Type != nil {
		t.Errorf("tree: %+v", got.Tree)
	}
}
