package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/oracle"
)

const fixture = "../../sessions/testdata/branches.jsonl"

// TestInspectKeys checks the JSON contract of `piweb inspect`: exactly the documented keys.
func TestInspectKeys(t *testing.T) {
	var out bytes.Buffer
	if err := inspectCmd(&out, []string{fixture}); err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"context", "cwd", "entryCount", "leafId", "name", "parentSession", "path", "sessionId", "tree", "version"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys = %v, want %v", keys, want)
	}
	var ctx map[string]json.RawMessage
	_ = json.Unmarshal(got["context"], &ctx)
	for _, k := range []string{"messages", "model", "thinkingLevel"} {
		if _, ok := ctx[k]; !ok {
			t.Errorf("context lacks %q", k)
		}
	}
	if string(got["leafId"]) != `"n1"` || string(got["name"]) != `"Demo"` {
		t.Errorf("leafId %s name %s", got["leafId"], got["name"])
	}
}

// TestInspectLeaf checks --leaf moves the path and context, and bad input is reported.
func TestInspectLeaf(t *testing.T) {
	var out bytes.Buffer
	if err := inspectCmd(&out, []string{"--leaf", "b1", fixture}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Path    []string `json:"path"`
		LeafID  string   `json:"leafId"`
		Context struct {
			Messages []json.RawMessage `json:"messages"`
		} `json:"context"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Path, []string{"a1", "a2", "b1"}) || got.LeafID != "b1" || len(got.Context.Messages) != 3 {
		t.Errorf("got path %v leaf %q with %d messages", got.Path, got.LeafID, len(got.Context.Messages))
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--leaf", "nope", fixture}, "no such entry"},
		{[]string{}, "one FILE"},
		{[]string{"inspect_test.go"}, "not a pi session"},
		{[]string{"does-not-exist.jsonl"}, "no such file"},
	} {
		err := inspectCmd(&bytes.Buffer{}, tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("inspect %v: err %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestInspectMatchesOracle runs the built command and pi's oracle on the same file.
func TestInspectMatchesOracle(t *testing.T) {
	dir := oracle.Dir(t)
	abs, _ := filepath.Abs(fixture)
	for _, leaf := range []string{"", "c1", "a2"} {
		args := []string{abs}
		if leaf != "" {
			args = []string{"--leaf", leaf, abs}
		}
		var out bytes.Buffer
		if err := inspectCmd(&out, args); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("node", append([]string{"oracle.mjs"}, args...)...)
		cmd.Dir = dir
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("oracle: %v", err)
		}
		var g, w any
		_ = json.Unmarshal(out.Bytes(), &g)
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("leaf %q: piweb inspect differs from pi:\npiweb %s\npi    %s", leaf, out.Bytes(), want)
		}
	}
}
