package sessions

import (
	"bytes"
	"encoding/json"
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
