package js

import (
	"encoding/json"
	"os"
	"testing"
)

// TestToLower checks ToLower against what Node's toLowerCase printed for
// testdata/lower.json (final sigma, İ, case-ignorables, titlecase).
func TestToLower(t *testing.T) {
	b, err := os.ReadFile("testdata/lower.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases [][2]string
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if got := ToLower(c[0]); got != c[1] {
			t.Errorf("ToLower(%+q) = %+q, JavaScript gives %+q", c[0], got, c[1])
		}
	}
	if got := ToLower("ASCII Only"); got != "ascii only" {
		t.Errorf("ASCII: %q", got)
	}
}
