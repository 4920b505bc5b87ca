package sessions

import (
	"encoding/json"
	"testing"

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
