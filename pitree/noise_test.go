package pitree

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// TestRuns: runs of settings rows are found whole, and a label, a branch
// point, the layout's leaf, pi's leaf or another kind of row ends them; a
// run needs MinRun rows.
func TestRuns(t *testing.T) {
	thinking := func(id, parent string) string {
		return sessiontest.Entry("thinking_level_change", id, parent, 2, `,"thinkingLevel":"high"`)
	}
	model := func(id, parent string) string {
		return sessiontest.Entry("model_change", id, parent, 2, `,"provider":"p","modelId":"m"`)
	}
	chain := func(prefix, parent string, n int, mk func(id, parent string) string) []string {
		var out []string
		for i := range n {
			id := fmt.Sprintf("%s%d", prefix, i)
			out = append(out, mk(id, parent))
			parent = id
		}
		return out
	}
	tests := []struct {
		name  string
		lines []string
		leaf  string // the layout's leaf ("" for pi's)
		want  string // each run as first-last:kinds
	}{
		{"a run of thinking changes", append(append([]string{sessiontest.User("u", "", 1, "go")}, chain("t", "u", 6, thinking)...),
			sessiontest.User("v", "t5", 3, "more")), "", "t0-t5:thinking"},
		{"too short", append(append([]string{sessiontest.User("u", "", 1, "go")}, chain("t", "u", 3, thinking)...),
			sessiontest.User("v", "t2", 3, "more")), "", ""},
		{"mixed kinds", append(append(append([]string{sessiontest.User("u", "", 1, "go")}, chain("t", "u", 3, thinking)...), chain("m", "t2", 3, model)...),
			sessiontest.User("v", "m2", 3, "more")), "", "t0-m2:thinking,model"},
		{"pi's leaf ends a run", append([]string{sessiontest.User("u", "", 1, "go")}, chain("t", "u", 6, thinking)...), "", "t0-t4:thinking"},
		{"the layout's leaf ends a run", append(append([]string{sessiontest.User("u", "", 1, "go")}, chain("t", "u", 10, thinking)...),
			sessiontest.User("v", "t9", 3, "more")), "t4", "t0-t3:thinking t5-t9:thinking"},
		{"a label splits a run", append(append(append([]string{sessiontest.User("u", "", 1, "go")}, chain("t", "u", 10, thinking)...),
			sessiontest.User("v", "t9", 3, "more")),
			sessiontest.Entry("label", "l", "v", 4, `,"targetId":"t4","label":"here"`)), "", "t0-t3:thinking t5-t9:thinking"},
		{"a branch point ends a run", append(append(append([]string{sessiontest.User("u", "", 1, "go")}, chain("t", "u", 10, thinking)...),
			sessiontest.User("v", "t9", 3, "more")),
			sessiontest.User("w", "t5", 4, "other")), "", "t0-t4:thinking t6-t9:thinking"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(file, []byte(sessiontest.Lines(append([]string{sessiontest.Header}, tc.lines...)...)), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := sessions.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{Leaf: s.Leaf(), Filter: FilterAll}
			if tc.leaf != "" {
				opt.Leaf, _ = s.Lookup(tc.leaf)
			}
			l, err := New(s, nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, run := range l.Runs() {
				kinds := []string{}
				if run.Thinking {
					kinds = append(kinds, "thinking")
				}
				if run.Model {
					kinds = append(kinds, "model")
				}
				got = append(got, s.Entries[l.Pos(run.Start)].ID+"-"+s.Entries[l.Pos(run.End-1)].ID+":"+strings.Join(kinds, ","))
				for k := run.Start; k < run.End; k++ {
					if r, ok := l.RunAt(k); !ok || r != run {
						t.Errorf("RunAt(%d) = %v, %v", k, r, ok)
					}
				}
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("runs %q, want %q", g, tc.want)
			}
			if _, ok := l.RunAt(0); ok {
				t.Error("the first row is in a run")
			}
		})
	}
}
