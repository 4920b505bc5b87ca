package ledger

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/internal/readtest"
	st "github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/patch"
	"github.com/piweb/piweb/sessions"
)

// call is an assistant entry calling tool name with args (id "c"+id).
func call(id, parent string, sec int, name string, args any) string {
	a, _ := json.Marshal(args)
	return st.Entry("message", id, parent, sec, fmt.Sprintf(`,"message":{"role":"assistant","content":[{"type":"toolCall","id":"c%s","name":%q,"arguments":%s}],"provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":1}`, id, name, a))
}

// result is the tool result of call callID, with details (nil for none).
func result(id, parent string, sec int, callID, name string, isError bool, details any) string {
	d := ""
	if details != nil {
		b, _ := json.Marshal(details)
		d = `,"details":` + string(b)
	}
	return st.Entry("message", id, parent, sec, fmt.Sprintf(`,"message":{"role":"toolResult","toolCallId":"c%s","toolName":%q,"content":[{"type":"text","text":"ok"}],"isError":%v%s,"timestamp":1}`, callID, name, isError, d))
}

// TestChanges reads a path with a write, edits recorded three ways (pi's
// patch, an older display diff, none), a failed edit, a bash call and a
// "!" command, and a branch whose changes must not count.
func TestChanges(t *testing.T) {
	before := "package a\n\nconst ttl = 24\n\nfunc key() string { return \"x\" }\n"
	step1 := strings.Replace(before, "const ttl = 24", "const ttl = 30", 1)
	step2 := strings.Replace(step1, "return \"x\"", "return \"x/\" + day()", 1)
	p1 := patch.Diff("a.go", before, step1, false)
	// pi's display diff of step1 -> step2 (line 5 changed).
	display := "  4 \n-5 func key() string { return \"x\" }\n+5 func key() string { return \"x/\" + day() }"
	content := st.Lines(st.Header,
		st.User("u1", "", 1, "go"),
		call("a1", "u1", 2, "write", map[string]string{"path": "/w/a.go", "content": before}),
		result("r1", "a1", 3, "a1", "write", false, nil),
		call("a2", "r1", 4, "edit", map[string]any{"path": "/w/a.go", "edits": []map[string]string{{"oldText": "const ttl = 24", "newText": "const ttl = 30"}}}),
		result("r2", "a2", 5, "a2", "edit", false, map[string]string{"diff": "x", "patch": strings.Replace(strings.Replace(p1, "a/a.go", "/w/a.go", 1), "b/a.go", "/w/a.go", 1)}),
		call("a3", "r2", 6, "edit", map[string]any{"path": "/w/a.go", "oldText": "nope", "newText": "x"}),
		result("r3", "a3", 7, "a3", "edit", true, nil),
		call("a4", "r3", 8, "edit", map[string]any{"path": "/w/a.go", "oldText": `return "x"`, "newText": `return "x/" + day()`}),
		result("r4", "a4", 9, "a4", "edit", false, map[string]string{"diff": display}),
		call("a5", "r4", 10, "bash", map[string]string{"command": "go test ./..."}),
		result("r5", "a5", 11, "a5", "bash", false, nil),
		call("a6", "r5", 12, "edit", map[string]any{"path": "/w/b.go", "oldText": "x := 1\ny := 2", "newText": "x := 1\ny := 3"}),
		result("r6", "a6", 13, "a6", "edit", false, nil),
		st.Entry("message", "b1", "r6", 14, `,"message":{"role":"bashExecution","command":"git status","output":"","exitCode":0,"timestamp":1}`),
		// a branch from u1 that wrote another file
		call("x1", "u1", 15, "write", map[string]string{"path": "/w/other.go", "content": "package other\n"}),
		result("x2", "x1", 16, "x1", "write", false, nil),
	)
	s, err := readtest.Parse(t, []byte(content), "changes.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := s.Lookup("b1")
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ch, err := ChangesOf(r, s.Path(leaf))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ch.Paths(), " "); got != "/w/a.go /w/b.go" {
		t.Fatalf("files %q, want /w/a.go /w/b.go", got)
	}
	a := ch.Files[0]
	var tools []string
	for _, c := range a.Changes {
		tools = append(tools, c.Tool+":"+c.EntryID)
	}
	if got := strings.Join(tools, " "); got != "write:r1 edit:r2 edit:r4" {
		t.Errorf("changes of a.go %q (the failed edit r3 must not count)", got)
	}
	if !a.Changes[0].Created || a.Changes[1].Created {
		t.Errorf("created flags: %+v", a.Changes)
	}
	if a.Added != 5+1+1 || a.Removed != 1+1 {
		t.Errorf("a.go +%d -%d, want +7 -2", a.Added, a.Removed)
	}
	// The net patch creates a.go with its final content.
	net := ch.Patch()
	if !strings.Contains(net, "--- /dev/null\n+++ b/w/a.go\n") {
		t.Fatalf("net patch does not create a.go:\n%s", net)
	}
	aPart := net[:strings.Index(net, "--- a/w/b.go")]
	got, err := patch.Apply(aPart, "")
	if err != nil || got != step2 {
		t.Errorf("net patch of a.go gives %q (%v), want %q", got, err, step2)
	}
	// b.go's edit recorded no diff: its patch comes from the arguments.
	if b := ch.Files[1]; b.Added != 1 || b.Removed != 1 || !strings.Contains(b.Changes[0].Patch, "-y := 2\n+y := 3\n") {
		t.Errorf("b.go: %+v", b)
	}
	if len(ch.Bash) != 2 || ch.Bash[0].Command != "go test ./..." || ch.Bash[1].Command != "!git status" {
		t.Errorf("bash: %+v", ch.Bash)
	}
	// The ledger counts the same files without reading the path again.
	l := New()
	if err := l.Update(r); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(l.Files(s.Path(leaf)), " "); got != "/w/a.go /w/b.go" {
		t.Errorf("ledger's files %q", got)
	}
	// The branch's write shows on its own path only.
	other, _ := s.Lookup("x2")
	ch2, err := ChangesOf(r, s.Path(other))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ch2.Paths(), " "); got != "/w/other.go" {
		t.Errorf("branch files %q", got)
	}
	// Where the two part: u1, with each side below it.
	f := Compare(s, leaf, other)
	if f.Ancestor != 0 || len(f.A) != 13 || len(f.B) != 2 {
		t.Errorf("compare: ancestor %d, %d and %d entries", f.Ancestor, len(f.A), len(f.B))
	}
	if f := Compare(s, 0, leaf); f.Ancestor != 0 || len(f.A) != 0 || len(f.B) != 13 {
		t.Errorf("compare with an ancestor: %+v", f)
	}
}

// TestChangesOnPiScenario reads the files changed in conformance's
// file-edits scenario, whose edits carry what pi's own edit tool records.
func TestChangesOnPiScenario(t *testing.T) {
	var file string
	for _, sc := range oracle.Scenarios(t) {
		if sc.Scenario == "file-edits" {
			file = sc.File
		}
	}
	if file == "" {
		t.Fatal("no file-edits scenario")
	}
	s, err := sessions.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := -1
	for i := range s.Entries {
		if b, _ := r.Body(i); b != nil && b.Msg != nil && b.Msg.Role == sessions.RoleAssistant && b.Msg.Content.Text("") == "Done." {
			done = i
		}
	}
	ch, err := ChangesOf(r, s.Path(done))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ch.Paths(), " "); got != "src/total.js README.md" {
		t.Fatalf("files %q", got)
	}
	if n := len(ch.Files[0].Changes); n != 3 {
		t.Errorf("src/total.js has %d changes, want 3 (the failed edit does not count)", n)
	}
	if len(ch.Bash) != 1 {
		t.Errorf("bash calls: %+v", ch.Bash)
	}
	final := map[string]string{
		"src/total.js": "// Cart totals.\nexport function total(items) {\n  return items.reduce((n, i) => n + i.qty, 0);\n}\n",
		"README.md":    "# shop\n\nCart totals sum quantities.\n",
	}
	net := ch.Patch()
	for _, part := range strings.Split(net, "--- /dev/null\n")[1:] {
		part = "--- /dev/null\n" + part
		got, err := patch.Apply(part, "")
		name := strings.TrimPrefix(strings.SplitN(part, "\n", 3)[1], "+++ b/")
		if err != nil || got != final[name] {
			t.Errorf("%s: net patch gives %q (%v), want %q", name, got, err, final[name])
		}
		delete(final, name)
	}
	if len(final) != 0 {
		t.Errorf("the net patch does not create %v:\n%s", final, net)
	}
	l := New()
	if err := l.Update(r); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(l.Files(s.Path(s.Leaf())), " "); got != "test/total.test.js" {
		t.Errorf("the other attempt's files %q", got)
	}
}
