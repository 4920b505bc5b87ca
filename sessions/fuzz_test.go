package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Seed corpora live in testdata/fuzz/<FuzzName>/; the big seeds (long
// chains, generated sessions) are made here instead of stored as files.
// Run a fuzzer with, for example:
//
//	go test -run '^$' -fuzz '^FuzzLoad$' -fuzztime 60s -fuzzminimizetime 5s ./sessions/
//
// (The default of 60 s to minimize each new input leaves little time to fuzz.)

// FuzzScan checks the scanner accepts exactly what JSON.parse accepts, and
// that the helpers reading its spans agree with encoding/json.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2,{"b":null}],"c":"\u00e9\n"}`, `[1e400,-0,0.5]`, `"\ud800"`, "\"\xff\"", `01`, `{"a":1,}`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, want := tScanValid(data), tJSValid(data)
		if got != want {
			t.Fatalf("scanner says %v, JSON.parse would say %v, for %q", got, want, data)
		}
		if !got {
			return
		}
		v := bytes.TrimLeft(data, " \t\r\n")
		v = bytes.TrimRight(v, " \t\r\n")
		valid := bytes.ToValidUTF8(v, []byte("\uFFFD"))
		var ref any
		refErr := json.Unmarshal(valid, &ref)

		// Objects: eachMember agrees on the extent and every member is a key and a value.
		if v[0] == '{' {
			var keys []string
			end, err := eachMember(v, 0, func(m member) {
				if !tScanValid(m.key) || m.key[0] != '"' || !tScanValid(m.val) {
					t.Fatalf("member %q: %q", m.key, m.val)
				}
				keys = append(keys, keyName(m.key))
			})
			if err != nil || end != len(v) {
				t.Fatalf("eachMember: end %d of %d, %v", end, len(v), err)
			}
			if obj, ok := ref.(map[string]any); ok && refErr == nil && utf8.Valid(v) {
				for _, k := range keys {
					if _, ok := obj[k]; !ok {
						t.Fatalf("key %q not in the decoded object %v", k, obj)
					}
				}
			}
		} else if _, err := eachMember(v, 0, func(member) {}); err != errNotObject {
			t.Fatalf("eachMember on a non-object: %v", err)
		}
		// The trusted walk finds the same members, and usage totals read as JavaScript would.
		if v[0] == '{' {
			var want []string
			eachMember(v, 0, func(m member) { want = append(want, string(m.key)+"="+string(m.val)) })
			if got := tTrustedMembers(v); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("eachMemberTrusted: %q, want %q", got, want)
			}
			if wt, wc, ok := usageTotalsRef(valid); ok && utf8.Valid(v) {
				if gt, gc := usageTotals(v); gt != wt || (gc != wc && !(gc != gc && wc != wc)) {
					t.Fatalf("usageTotals = %d, %v; want %d, %v", gt, gc, wt, wc)
				}
			}
		}
		// Strings decode as encoding/json decodes them. (With invalid UTF-8,
		// ToValidUTF8 above merges runs that jsonString replaces byte by byte.)
		if s, ok := jsonString(v); ok != (v[0] == '"') || (ok && refErr == nil && utf8.Valid(v) && s != ref.(string)) {
			t.Fatalf("jsonString(%q) = %q, %v; encoding/json gives %q", v, s, ok, ref)
		}
		// Truthiness as JavaScript's Boolean(value).
		if refErr == nil {
			want := true
			switch r := ref.(type) {
			case nil:
				want = false
			case bool:
				want = r
			case float64:
				want = r != 0
			case string:
				want = r != ""
			}
			if truthy(v) != want {
				t.Fatalf("truthy(%q) = %v, want %v", v, !want, want)
			}
		}
	})
}

// fuzzMaxBytes bounds the inputs FuzzLoad and FuzzProject try: bigger ones
// find nothing new and slow the fuzzer down.
const fuzzMaxBytes = 256 << 10

// fuzzSeeds adds the generated seeds shared by FuzzLoad and FuzzProject.
func fuzzSeeds(f *testing.F, add func(data []byte)) {
	add([]byte(genString(1, 30, genOpts{scale: 0.02})))
	add([]byte(genString(2, 40, genOpts{chain: true, scale: 0.02})))
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
// entry, that projection works at any leaf, that Load from a file agrees
// with Parse, and that appending the rest of the bytes and calling Update
// gives what a fresh load of the whole gives.
func FuzzLoad(f *testing.F) {
	fuzzSeeds(f, func(data []byte) { f.Add(data, uint16(len(data)/2)) })
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		if len(data) > fuzzMaxBytes {
			return
		}
		s, err := Parse(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil && !errors.Is(err, ErrNotSession) {
			t.Fatalf("Parse: %v", err)
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

		dir := t.TempDir()
		p := filepath.Join(dir, "f.jsonl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		loaded, lerr := Load(p)
		if (lerr == nil) != (err == nil) {
			t.Fatalf("Load: %v; Parse: %v", lerr, err)
		}
		if lerr == nil {
			tSameIndex(t, loaded, s)
		}

		// Incremental: load a prefix, append the rest, Update.
		cut := int(split) % (len(data) + 1)
		if err := os.WriteFile(p, data[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		part, perr := Load(p)
		if perr != nil {
			return
		}
		tAppend(t, p, string(data[cut:]))
		if _, uerr := part.Update(); uerr != nil {
			if err == nil {
				t.Fatalf("Update after appending: %v; the whole file loads", uerr)
			}
			return
		}
		if err != nil {
			t.Fatalf("Update accepted what Parse rejects: %v", err)
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
		s, err := Parse(bytes.NewReader(data), "fuzz.jsonl")
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
			if ok && trimJS(text) == "" || !ok && text != "" {
				t.Fatalf("CopyText(%d) = %q, %v", i, text, ok)
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
