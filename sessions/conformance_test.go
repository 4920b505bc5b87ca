package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/oracle"
)

// TestConformance checks that piweb reads every scenario file exactly as pi
// does: tree, labels, name, leaf, path and model context at every entry.
func TestConformance(t *testing.T) {
	dir := oracle.Dir(t)
	for _, sc := range oracle.Scenarios(t) {
		t.Run(sc.Scenario, func(t *testing.T) {
			before, err := os.ReadFile(sc.File)
			if err != nil {
				t.Fatal(err)
			}
			s, loadErr := Load(sc.File)
			if sc.ExpectError {
				if loadErr == nil && s.Header.ID != "" && len(s.Entries) > 0 && s.Header.Version >= 2 {
					t.Errorf("pi refuses this file but piweb loaded it without error")
				}
				return
			}
			if sc.NoOracle {
				if loadErr != nil {
					t.Fatalf("load: %v", loadErr)
				}
				checkWholeTree(t, s)
				if !hasDiag(s, DiagCycle) && !hasDiag(s, DiagSelfParent) {
					t.Errorf("no cycle or self-parent diagnostic: %v", s.Diags)
				}
				return
			}
			if loadErr != nil {
				t.Fatalf("load: %v", loadErr)
			}
			cmd := exec.Command("node", "oracle.mjs", sc.File, "--all-leaves")
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("oracle: %v\n%s", err, oracle.Stderr(err))
			}
			var want map[string]any
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.UseNumber()
			if err := dec.Decode(&want); err != nil {
				t.Fatalf("oracle output: %v", err)
			}
			v1 := s.Header.Version < 2
			var keys []string
			for k := range want {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if v1 {
				// pi gives v1 entries random ids: compare by position in pre-order instead.
				compareV1(t, s, want)
			} else {
				for _, leaf := range keys {
					got := inspectJSON(t, s, leaf)
					if d := jsonDiff("", want[leaf], got); d != "" {
						t.Errorf("leaf %q: %s", leaf, d)
					}
				}
			}
			after, _ := os.ReadFile(sc.File)
			if !bytes.Equal(before, after) {
				t.Errorf("the session file changed while being read")
			}
		})
	}
}

func hasDiag(s *Session, kind string) bool {
	for _, d := range s.Diags {
		if d.Kind == kind {
			return true
		}
	}
	return false
}

// checkWholeTree asserts every entry appears exactly once in Walk and every path ends at its entry.
func checkWholeTree(t *testing.T, s *Session) {
	t.Helper()
	seen := make([]int, len(s.Entries))
	s.Walk(func(i, _ int) bool { seen[i]++; return true })
	for i, n := range seen {
		if n != 1 {
			t.Errorf("entry %d (line %d) appears %d times in the tree", i, s.Entries[i].Line, n)
		}
		p := s.Path(i)
		if len(p) == 0 || p[len(p)-1] != i {
			t.Errorf("path of entry %d does not end at it: %v", i, p)
		}
	}
}

// inspectJSON returns piweb's reading at leaf as generic JSON.
func inspectJSON(t *testing.T, s *Session, leaf string) any {
	t.Helper()
	in, err := tInspect(s, leaf)
	if err != nil {
		t.Fatalf("inspect %q: %v", leaf, err)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// compareV1 matches pi's random v1 ids to piweb's stable ones through the
// pre-order tree, then compares every leaf's reading.
func compareV1(t *testing.T, s *Session, want map[string]any) {
	t.Helper()
	def := inspectJSON(t, s, "")
	wt := want[""].(map[string]any)["tree"].([]any)
	gt := def.(map[string]any)["tree"].([]any)
	if len(wt) != len(gt) {
		t.Fatalf("tree sizes differ: pi %d, piweb %d", len(wt), len(gt))
	}
	ids := map[string]string{} // pi id -> piweb id
	for k := range wt {
		pid, _ := wt[k].(map[string]any)["id"].(string)
		gid, _ := gt[k].(map[string]any)["id"].(string)
		ids[pid] = gid
	}
	for leaf, w := range want {
		w = renameIDs(w, ids)
		got := inspectJSON(t, s, ids[leaf])
		if d := jsonDiff("", w, got); d != "" {
			t.Errorf("leaf %q: %s", leaf, d)
		}
	}
}

func renameIDs(v any, ids map[string]string) any {
	switch x := v.(type) {
	case string:
		if n, ok := ids[x]; ok {
			return n
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = renameIDs(x[i], ids)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = renameIDs(e, ids)
		}
		return out
	}
	return v
}

// jsonDiff describes the first difference between two decoded JSON values ("" if equal).
// Numbers compare by value, since JavaScript and Go format floats differently.
func jsonDiff(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: pi has an object, piweb %s", path, short(got))
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			wv, wok := w[k]
			gv, gok := g[k]
			if wok != gok {
				return fmt.Sprintf("%s.%s: present in pi %v, in piweb %v (pi %s, piweb %s)", path, k, wok, gok, short(wv), short(gv))
			}
			if d := jsonDiff(path+"."+k, wv, gv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: pi %s, piweb %s", path, short(want), short(got))
		}
		for i := range w {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: pi %s, piweb %s", path, short(want), short(got))
		}
		wf, _ := w.Float64()
		gf, _ := g.Float64()
		if wf != gf {
			return fmt.Sprintf("%s: pi %s, piweb %s", path, w, g)
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s: pi %s, piweb %s", path, short(want), short(got))
	}
	return ""
}

func short(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.TrimSpace(s)
}
