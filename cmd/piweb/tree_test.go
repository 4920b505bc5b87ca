package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/piweb/piweb/pitree"
	"github.com/piweb/piweb/sessions"
)

// treeData holds the layout fixtures and their goldens (owned by pitree/layout_test.go).
const treeData = "../../pitree/testdata"

func TestTreeCommand(t *testing.T) {
	t.Setenv("HOME", "/home/u") // tool-call paths are shortened against it, as pi does
	for _, tt := range []struct {
		args   []string
		golden string
	}{
		{[]string{"branches.jsonl"}, "branches-default.txt"},
		{[]string{"--filter", "all", "branches.jsonl"}, "branches-all.txt"},
		{[]string{"--filter=user-only", "--leaf", "r8", "branches.jsonl"}, "branches-leaf-r8-user-only.txt"},
		{[]string{"--search", "  FIX\tlogin ", "branches.jsonl"}, "branches-search-tokens.txt"},
		{[]string{"--search", "zzz", "branches.jsonl"}, "branches-search-none.txt"},
		{[]string{"--fold", "bs, u3", "branches.jsonl"}, "branches-fold-bs-u3.txt"},
		{[]string{"--leaf", "e2", "--fold", "b1", "gutters.jsonl"}, "gutters-leaf-e2-fold-b1.txt"},
		{[]string{"roots.jsonl"}, "roots-default.txt"},
	} {
		args := append([]string(nil), tt.args...)
		args[len(args)-1] = filepath.Join(treeData, args[len(args)-1])
		var out bytes.Buffer
		if err := tree(&out, args); err != nil {
			t.Errorf("tree %q: %v", tt.args, err)
			continue
		}
		want, err := os.ReadFile(filepath.Join(treeData, "golden", tt.golden))
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != string(want) {
			t.Errorf("tree %q:\n%s\nwant (%s):\n%s", tt.args, out.String(), tt.golden, want)
		}
	}
}

func TestTreeCommandErrors(t *testing.T) {
	file := filepath.Join(treeData, "roots.jsonl")
	for _, tt := range []struct {
		args []string
		code int
		is   error
	}{
		{nil, 2, nil},
		{[]string{file, file}, 2, nil},
		{[]string{"--filter", "tools", file}, 2, pitree.ErrFilter},
		{[]string{"--nope", file}, 2, nil},
		{[]string{"--leaf", "zzz", file}, 1, sessions.ErrNoEntry},
		{[]string{filepath.Join(treeData, "missing.jsonl")}, 1, os.ErrNotExist},
	} {
		var out bytes.Buffer
		err := tree(&out, tt.args)
		if err == nil {
			t.Errorf("tree %q: no error", tt.args)
			continue
		}
		if exitCode(err) != tt.code {
			t.Errorf("tree %q: exit %d (%v), want %d", tt.args, exitCode(err), err, tt.code)
		}
		if tt.is != nil && !errors.Is(err, tt.is) && !bytes.Contains([]byte(err.Error()), []byte(tt.is.Error())) {
			t.Errorf("tree %q: %v, want %v", tt.args, err, tt.is)
		}
		if out.Len() != 0 {
			t.Errorf("tree %q wrote %q before failing", tt.args, out.String())
		}
	}
}
