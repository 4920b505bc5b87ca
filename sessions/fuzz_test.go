package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/sessiontest"
)

// Seed corpora live in testdata/fuzz/<FuzzName>/; the big seeds (long
// chains, generated sessions) are made here instead of stored as files.
// Run a fuzzer with, for example:
//
//	go test -run '^$' -fuzz '^FuzzLoad$' -fuzztime 60s -fuzzminimizetime 5s ./sessions/
//
// (The default of 60 s to minimize each new input leaves little time to fuzz.)

// fuzzMaxBytes bounds the inputs FuzzLoad and FuzzProject try: bigger ones
// find nothing new and slow the fuzzer down.
const fuzzMaxBytes = 256 << 10

// fuzzSeeds adds the generated seeds shared by FuzzLoad and FuzzProject.
func fuzzSeeds(f *testing.F, add func(data []byte)) {
	add([]byte(sessiontest.String(1, 30, sessiontest.Options{Scale: 0.02})))
	add([]byte(sessiontest.String(2, 40, sessiontest.Options{Chain: true, Scale: 0.02})))
	// A chain of small entries. (Deep chains of 100k entries are in
	// TestLongChain: big seeds make fuzzing crawl.)
	var b strings.Builder
	b.WriteString(tHeader + "\n")
	for i := range 300 {
		parent := "null"
		if i > 0 {
			parent = fmt.Sprintf(`"%08x"`, i-1)
		}
		fmt.Fprintf(&b, `{"type":"custom","id":"%08x","parentId":%s,"timestamp":"2026-01-01T00:00:00Z"}`+"\n", i, parent)
	}
	add([]byte(b.String()))
}

// FuzzLoad checks that any file content loads without panicking or looping,
// that the tree holds every entry exactly once, that every path ends at its
// entry, that projection works at any leaf, and that appending the rest of
// the bytes to a prefix and calling Update gives what a load of the whole
// gives.
func FuzzLoad(f *testing.F) {
	fuzzSeeds(f, func(data []byte) { f.Add(data, uint16(len(data)/2)) })
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		if len(data) > fuzzMaxBytes {
			return
		}
		dir := t.TempDir()
		s, err := Load(tWrite(t, dir, "whole.jsonl", string(data)))
		if err != nil && !errors.Is(err, ErrNotSession) {
			t.Fatalf("Load: %v", err)
		}
		if err == nil {
			tCheckTree(t, s)
			n := len(s.Entries)
			for _, leaf := range []int{s.Leaf(), -1, 0, n / 2, n - 2} {
				if leaf >= -1 && leaf < n {
					tCheckProject(t, s, leaf)
				}
			}
		}

		// Incremental: load a prefix, append the rest, Update.
		cut := int(split) % (len(data) + 1)
		p := tWrite(t, dir, "f.jsonl", string(data[:cut]))
		part, perr := Load(p)
		if perr != nil {
			return
		}
		sessiontest.Append(t, p, string(data[cut:]))
		if _, uerr := part.Update(); uerr != nil {
			if err == nil {
				t.Fatalf("Update after appending: %v; the whole file loads", uerr)
			}
			return
		}
		if err != nil {
			t.Fatalf("Update accepted what Load rejects: %v", err)
		}
		tSameIndex(t, part, s)
		tCheckTree(t, part)
	})
}

// FuzzProject checks the projection at any leaf: no error, valid JSON,
// only path entries in path order (the latest compaction first), untouched
// messages passed through byte for byte, and the model and thinking level
// read from the whole path.
func FuzzProject(f *testing.F) {
	fuzzSeeds(f, func(data []byte) { f.Add(data, int32(-1)) })
	f.Fuzz(func(t *testing.T, data []byte, pick int32) {
		if len(data) > fuzzMaxBytes {
			return
		}
		s, err := tParseBytes(t, data, "fuzz.jsonl")
		if err != nil {
			return
		}
		n := len(s.Entries)
		leaf := s.Leaf()
		if pick >= 0 {
			leaf = int(pick)%(n+1) - 1
		}
		p := tCheckProject(t, s, leaf)
		path := s.Path(leaf)

		// Entry order: without a compaction, the path itself; with one, the
		// latest compaction, then kept entries before it, then all after it.
		comp := -1
		for k, i := range path {
			if s.Entries[i].Type == TypeCompaction {
				comp = k
			}
		}
		var got []int
		nmsg := 0
		for _, pe := range p.Entries {
			got = append(got, pe.Pos)
			nmsg += len(pe.Messages)
		}
		if nmsg != len(p.Messages) {
			t.Fatalf("entries hold %d messages, the context %d", nmsg, len(p.Messages))
		}
		if comp < 0 {
			if !slices.Equal(got, path) {
				t.Fatalf("entries %v, path %v", got, path)
			}
		} else {
			if len(got) == 0 || got[0] != path[comp] {
				t.Fatalf("entries %v do not start with the latest compaction %d", got, path[comp])
			}
			after := path[comp+1:]
			if len(got)-1 < len(after) || !slices.Equal(got[len(got)-len(after):], after) {
				t.Fatalf("entries %v do not end with the path after the compaction %v", got, after)
			}
			kept := got[1 : len(got)-len(after)]
			k := 0
			for _, i := range path[:comp] {
				if k < len(kept) && kept[k] == i {
					k++
				}
			}
			if k != len(kept) {
				t.Fatalf("kept entries %v are not in path order %v", kept, path[:comp])
			}
		}

		// Untouched message entries pass their message through unchanged.
		r, err := s.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		// What ctrl+x copies: any entry reads without error, and only a
		// non-blank text counts as something to copy.
		for i := range s.Entries {
			text, ok, err := r.CopyText(i)
			if err != nil {
				t.Fatalf("CopyText(%d): %v", i, err)
			}
			if ok && js.Trim(text) == "" || !ok && text != "" {
				t.Fatalf("CopyText(%d) = %q, %v", i, text, ok)
			}
			// The index's FlagToolCall is the decoded message's tool calls.
			if e := &s.Entries[i]; e.Type == TypeMessage && e.Role == RoleAssistant {
				raw, err := r.Raw(i)
				if err != nil {
					t.Fatal(err)
				}
				if calls := len(ToolCallsOf(raw)) > 0; e.Flags.Has(FlagToolCall) != calls {
					t.Fatalf("entry %d: FlagToolCall %v, its line holds tool calls: %v", i, !calls, calls)
				}
			}
		}
		for _, pe := range p.Entries {
			e := &s.Entries[pe.Pos]
			if e.Type != TypeMessage || pe.Edited || len(pe.Messages) != 1 || s.Header.Version < 3 {
				continue
			}
			raw, err := r.Raw(pe.Pos)
			if err != nil {
				t.Fatal(err)
			}
			var line map[string]json.RawMessage
			if json.Unmarshal(raw, &line) != nil {
				continue // nested deeper than encoding/json allows
			}
			// A map, not a struct: encoding/json matches struct fields
			// case-insensitively ("conteNt"), JavaScript and pi do not.
			var msg map[string]json.RawMessage
			m := line["message"]
			if json.Unmarshal(m, &msg) != nil || msg["content"] == nil || string(msg["content"]) == "null" {
				continue
			}
			if !bytes.Equal(bytes.TrimSpace(pe.Messages[0]), bytes.TrimSpace(m)) {
				t.Fatalf("entry %d: message %s, line has %s", pe.Pos, pe.Messages[0], m)
			}
		}

		// Model and thinking level, read with encoding/json.
		var model, level any = nil, "off"
		for _, i := range path {
			e := &s.Entries[i]
			if e.Type != TypeModelChange && e.Type != TypeThinking && !(e.Type == TypeMessage && e.Role == "assistant") {
				continue
			}
			raw, _ := r.Raw(i)
			var line map[string]any
			if json.Unmarshal(raw, &line) != nil {
				return // nested deeper than encoding/json allows
			}
			switch e.Type {
			case TypeThinking:
				level = line["thinkingLevel"]
			case TypeModelChange:
				m := map[string]any{}
				for _, k := range []string{"provider", "modelId"} {
					if v, ok := line[k]; ok {
						m[k] = v
					}
				}
				model = m
			default:
				msg, _ := line["message"].(map[string]any)
				m := map[string]any{}
				if v, ok := msg["provider"]; ok {
					m["provider"] = v
				}
				if v, ok := msg["model"]; ok {
					m["modelId"] = v
				}
				model = m
			}
		}
		var gotModel, gotLevel any
		_ = json.Unmarshal(p.Model, &gotModel)
		if p.ThinkingLevel != nil {
			_ = json.Unmarshal(p.ThinkingLevel, &gotLevel)
		}
		if !reflect.DeepEqual(gotModel, model) || !reflect.DeepEqual(gotLevel, level) {
			t.Fatalf("model %s level %s; want %v %v", p.Model, p.ThinkingLevel, model, level)
		}
	})
}
