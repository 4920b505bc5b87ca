package sessions

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
)

func TestGenerator(t *testing.T) {
	for _, c := range []struct {
		name string
		o    sessiontest.Options
	}{
		{"chain", sessiontest.Options{Chain: true, Scale: sessiontest.ChainScale}},
		{"tree", sessiontest.Options{}},
		{"tree with big outputs", sessiontest.Options{BigEvery: 100}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const n = 3000
			content := sessiontest.String(3, n, c.o)
			if again := sessiontest.String(3, n, c.o); again != content {
				t.Fatal("same seed, different output")
			}
			if other := sessiontest.String(4, n, c.o); other == content {
				t.Fatal("different seeds, same output")
			}
			lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
			if len(lines) != n+1 {
				t.Fatalf("%d lines, want %d", len(lines), n+1)
			}
			types := map[string]int{}
			biggest := 0
			for k, l := range lines {
				if !json.Valid([]byte(l)) {
					t.Fatalf("line %d is not valid JSON: %.300s", k+1, l)
				}
				var e struct {
					Type    string `json:"type"`
					Message struct {
						Role string `json:"role"`
					} `json:"message"`
				}
				_ = json.Unmarshal([]byte(l), &e)
				types[e.Type+"/"+e.Message.Role]++
				biggest = max(biggest, len(l))
			}
			s := tParse(t, content)
			if len(s.Diags) != 0 || len(s.Entries) != n {
				t.Fatalf("%d entries, diagnostics %v", len(s.Entries), s.Diags[:min(5, len(s.Diags))])
			}
			tCheckTree(t, s)
			tCheckProject(t, s, s.Leaf())
			for _, typ := range []string{"message/user", "message/assistant", "message/toolResult", "model_change/",
				"thinking_level_change/", "label/", "compaction/", "custom_message/"} {
				if types[typ] == 0 {
					t.Errorf("no %s entries: %v", typ, types)
				}
			}
			m := s.Meta()
			if m.Tokens == 0 || m.Cost == 0 || len(m.Models) == 0 || len(s.Labels()) == 0 {
				t.Errorf("Meta = %+v", m)
			}
			if c.o.Chain != (len(s.Roots()) == 1 && m.Branches == 0 && types["branch_summary/"] == 0) {
				t.Errorf("chain %v: %d roots, %d branch points, %d branch summaries", c.o.Chain, len(s.Roots()), m.Branches, types["branch_summary/"])
			}
			if c.o.BigEvery > 0 && biggest < 100<<10 {
				t.Errorf("biggest line %d bytes", biggest)
			}
		})
	}
}
