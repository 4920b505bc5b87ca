package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// maxModules is how many modules piweb may link (`go version -m piweb`
// lists them): 27 when this test came, 82 when gitleaks' detector was one.
const maxModules = 45

// TestLinkedModules checks that piweb links at most maxModules modules,
// and none of those it must not: the packages `go list -deps` builds into
// the command are the ones `go version -m` lists the modules of.
func TestLinkedModules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	var mods []string
	for _, m := range strings.Fields(string(out)) {
		if !slices.Contains(mods, m) {
			mods = append(mods, m)
		}
	}
	if len(mods) == 0 {
		t.Fatal("go list found no modules")
	}
	if len(mods) > maxModules {
		t.Errorf("piweb links %d modules, at most %d:\n%s", len(mods), maxModules, strings.Join(mods, "\n"))
	}
	for _, m := range mods {
		if strings.Contains(m, "gitleaks") || strings.Contains(m, "zerolog") || strings.Contains(m, "viper") {
			t.Errorf("piweb links %s", m)
		}
	}
}
