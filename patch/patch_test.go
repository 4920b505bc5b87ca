package patch

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// piEdit is one case of testdata/pi-edits.json: what pi's edit tool records
// (conformance/editdiffs.mjs writes it with pi's own functions).
type piEdit struct {
	Name, Before, After, Diff, Patch string
}

func piEdits(t *testing.T) []piEdit {
	t.Helper()
	b, err := os.ReadFile("testdata/pi-edits.json")
	if err != nil {
		t.Fatal(err)
	}
	var out []piEdit
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) < 5 {
		t.Fatalf("only %d cases", len(out))
	}
	return out
}

// TestFromDisplay checks that the patch made of pi's display diff turns the
// text before into the text after, and counts what pi's own patch counts.
func TestFromDisplay(t *testing.T) {
	for _, c := range piEdits(t) {
		t.Run(c.Name, func(t *testing.T) {
			p := FromDisplay("src/file.txt", c.Diff)
			if p == "" {
				t.Fatalf("no patch from the display diff:\n%s", c.Diff)
			}
			got, err := Apply(p, c.Before)
			if err != nil {
				t.Fatalf("apply: %v\n%s", err, p)
			}
			if got != c.After && !(strings.TrimSuffix(got, "\n") == c.After && !strings.HasSuffix(c.Before, "\n")) {
				t.Errorf("applied:\n%q\nwant\n%q\npatch:\n%s", got, c.After, p)
			}
			ga, gr := Count(p)
			wa, wr := Count(c.Patch)
			if ga != wa || gr != wr {
				t.Errorf("counts +%d -%d, pi's patch +%d -%d", ga, gr, wa, wr)
			}
		})
	}
}

// TestPiPatchApplies checks pi's own patch, relabelled for git, applies.
func TestPiPatchApplies(t *testing.T) {
	for _, c := range piEdits(t) {
		t.Run(c.Name, func(t *testing.T) {
			p := Relabel(c.Patch, "src/file.txt")
			if !strings.Contains(p, "--- a/src/file.txt\n+++ b/src/file.txt\n") {
				t.Fatalf("headers not relabelled:\n%s", p)
			}
			got, err := Apply(p, c.Before)
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			if strings.TrimSuffix(got, "\n") != strings.TrimSuffix(c.After, "\n") {
				t.Errorf("applied:\n%q\nwant\n%q", got, c.After)
			}
		})
	}
}

func TestFromDisplayRefuses(t *testing.T) {
	for _, d := range []string{"", "hello\nworld", "+ not a number", "-const x = 1\n+const x = 2"} {
		if p := FromDisplay("f", d); p != "" {
			t.Errorf("FromDisplay(%q) = %q, want \"\"", d, p)
		}
	}
}

func TestDiffAndCount(t *testing.T) {
	p := Diff("/home/u/x.go", "", "a\nb\n", true)
	if !strings.HasPrefix(p, "--- /dev/null\n+++ b/home/u/x.go\n") {
		t.Errorf("created file's headers: %q", p)
	}
	if a, r := Count(p); a != 2 || r != 0 {
		t.Errorf("count +%d -%d, want +2 -0", a, r)
	}
	if Diff("x", "same\n", "same\n", false) != "" {
		t.Error("equal texts give a diff")
	}
}
