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

// TestInspectKeepsWhatPiReads checks inspect prints text as pi holds it:
// an escaped lone surrogate in a label or the name stays escaped (as
// JSON.stringify writes it), and invalid UTF-8 in a line gives one U+FFFD
// per maximal invalid subpart, as Node's decoder does (issue 16).
func TestInspectKeepsWhatPiReads(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	lines := strings.Join([]string{
		`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a` + "\xf4\x90\x80\x80" + `b ` + "\xe2\x82" + `c","timestamp":1}}`,
		`{"type":"label","id":"l1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","targetId":"u1","label":"S\ud800>~/"}`,
		`{"type":"session_info","id":"n1","parentId":"l1","timestamp":"2026-01-01T00:00:03.000Z","name":" x\ud83d "}`,
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
	out := string(in.JSON())
	for _, want := range []string{
		`"label": "S\ud800>~/"`,
		`"name": "x\ud83d"`,
		`"content": "a` + "\uFFFD\uFFFD\uFFFD\uFFFD" + `b ` + "\uFFFD" + `c"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %s:\n%s", want, out)
		}
	}
	// Pages still get text without lone surrogates.
	if s.Name() != "x\uFFFD" || s.LabelOf(0) != "S\uFFFD>~/" {
		t.Errorf("Name %+q, LabelOf %+q", s.Name(), s.LabelOf(0))
	}
}
