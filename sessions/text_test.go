package sessions

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/oracle"
)

func TestCopyText(t *testing.T) {
	asst := func(id, content, extra string) string {
		return tEntry(TypeMessage, id, "u1", 2, `,"message":{"role":"assistant","content":`+content+extra+`,"timestamp":2}`)
	}
	s := tParse(t, tLines(tHeader,
		tUser("u1", "", 1, "  hello  "),
		asst("a1", `[{"type":"thinking","thinking":"hm"},{"type":"text","text":"one "},{"type":"text","text":"two"}]`, ""),
		asst("a2", `[]`, `,"stopReason":"error","errorMessage":"rate limited"`),
		asst("a3", `[{"type":"text","text":"   "}]`, ""),
		tEntry(TypeMessage, "b1", "u1", 3, `,"message":{"role":"bashExecution","command":"ls -la","output":"x","timestamp":3}`),
		tEntry(TypeCustomMessage, "c1", "u1", 4, `,"customType":"note","content":[{"type":"text","text":"from an extension"}],"display":true`),
		tEntry(TypeBranchSummary, "s1", "u1", 5, `,"fromId":"a1","summary":"went elsewhere"`),
		tEntry(TypeCompaction, "k1", "u1", 6, `,"summary":"","firstKeptEntryId":"u1","tokensBefore":5`),
		tEntry(TypeLabel, "l1", "u1", 7, `,"targetId":"u1","label":"x"`),
	))
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := map[string]string{"u1": "  hello  ", "a1": "one two", "a2": "rate limited", "b1": "ls -la", "c1": "from an extension", "s1": "went elsewhere"}
	for i := range s.Entries {
		got, ok, err := r.CopyText(i)
		if err != nil {
			t.Fatal(err)
		}
		id := s.Entries[i].ID
		if w, has := want[id]; got != w || ok != has {
			t.Errorf("%s: %q, %v; want %q, %v", id, got, ok, w, has)
		}
	}
}

// TestCopyTextMatchesPi compares CopyText with pi's own tree on every entry
// of the conformance scenarios.
func TestCopyTextMatchesPi(t *testing.T) {
	oracle.Package(t) // skips without pi
	skip := map[string]bool{"edge-duplicate-ids": true, "edge-non-object-lines": true}
	var jobs []oracle.TreeJob
	var files []string
	for _, sc := range oracle.Scenarios(t) {
		if sc.NoOracle || sc.ExpectError || skip[sc.Scenario] {
			continue
		}
		jobs = append(jobs, oracle.TreeJob{File: sc.File, Copy: true})
		files = append(files, sc.Scenario)
	}
	compared := 0
	for k, out := range oracle.Tree(t, jobs) {
		var want []*string
		if err := json.Unmarshal([]byte(out), &want); err != nil {
			t.Fatalf("%s: %v", files[k], err)
		}
		s, err := Load(jobs[k].File)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != len(s.Entries) {
			t.Errorf("%s: pi has %d entries, piweb %d", files[k], len(want), len(s.Entries))
			continue
		}
		r, err := s.Open()
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			got, ok, err := r.CopyText(i)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (w != nil) || (w != nil && got != *w) {
				t.Errorf("%s entry %d (%s): piweb %q, %v; pi %v", files[k], i, s.Entries[i].ID, got, ok, short(w))
			}
			if ok {
				compared++
			}
		}
		r.Close()
	}
	if compared < 200 {
		t.Errorf("only %d entries had text to copy", compared)
	}
}

// TestFullText checks the plain text the page links to as an entry's full text.
func TestFullText(t *testing.T) {
	tests := []struct{ line, want string }{
		{`{"type":"message","message":{"role":"user","content":"hi there"}}`, "hi there\n"},
		{`{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"toolCall","name":"read","arguments":{"path":"a.go"}}],"errorMessage":"boom"}}`,
			"[thinking]\nhm\n\nok\n\n[tool call: read]\n{\n  \"path\": \"a.go\"\n}\n\n[error]\nboom\n"},
		{`{"type":"message","message":{"role":"toolResult","toolName":"edit","content":[{"type":"text","text":"done"}],"details":{"diff":"-a\n+b"}}}`,
			"[tool result: edit]\n\ndone\n\n[diff]\n-a\n+b\n"},
		{`{"type":"message","message":{"role":"bashExecution","command":"ls","output":"a\nb"}}`, "$ ls\na\nb\n"},
		{`{"type":"compaction","summary":"so far"}`, "so far\n"},
		{`{"type":"label","targetId":"x","label":"y"}`, "{\n  \"type\": \"label\",\n  \"targetId\": \"x\",\n  \"label\": \"y\"\n}"},
	}
	for _, tt := range tests {
		line := []byte(tt.line)
		e := &Entry{Type: js.Str(js.ObjectOf(line).Val("type"))}
		if got := DecodeBody(e, line).FullText(); got != tt.want {
			t.Errorf("FullText(%s) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestPretty: JSON is indented for reading unless it nests deeper than
// prettyDepth, which is given as written (brackets inside strings, escaped
// quotes among them, do not count).
func TestPretty(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"absent", ``, ""},
		{"null", `null`, ""},
		{"object", `{"a":[1,2]}`, "{\n  \"a\": [\n    1,\n    2\n  ]\n}"},
		{"at the limit", nest(prettyDepth), prettyNest(prettyDepth)},
		{"one deeper", nest(prettyDepth + 1), nest(prettyDepth + 1)},
		{"100k deep", nest(100000), nest(100000)},
		{"brackets in strings", `{"a":"` + strings.Repeat(`[{\"`, 200) + `"}`, "{\n  \"a\": \"" + strings.Repeat(`[{\"`, 200) + "\"\n}"},
		{"not JSON", `{"a":`, `{"a":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Pretty(json.RawMessage(tc.raw)); got != tc.want {
				t.Errorf("Pretty(%.40q) = %.80q, want %.80q", tc.raw, got, tc.want)
			}
		})
	}
}

// prettyNest is json.Indent's reading of n nested empty arrays.
func prettyNest(n int) string {
	var b bytes.Buffer
	json.Indent(&b, []byte(strings.Repeat("[", n)+strings.Repeat("]", n)), "", "  ")
	return b.String()
}
