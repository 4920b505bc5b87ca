package writer

// Checks piweb's writers against pi itself: after each write, pi's own
// SessionManager (run by conformance/after-write.mjs on a copy of the file)
// must resume from the intended leaf with the intended labels, name and
// context, and must not need to change a byte of what piweb wrote.
//
// Needs node and the pi package installed by `npm ci` in conformance/. Without
// them the test is skipped, unless PIWEB_REQUIRE_ORACLE=1 makes that a failure.

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/share"
)

// agree checks that pi and piweb read file alike and returns pi's reading.
// A version 3 file must come back from pi unchanged.
func agree(t *testing.T, pi func(string, ...string) oracle.Reading, file string) oracle.Reading {
	t.Helper()
	r := pi(file)
	s := readtest.LoadFile(t, file)
	in, err := readtest.Inspect(s, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.LeafID, in.LeafID) {
		t.Errorf("leaf: pi %v, piweb %v", deref(r.LeafID), deref(in.LeafID))
	}
	if !reflect.DeepEqual(r.Path, in.Path) {
		t.Errorf("path:\n pi    %v\n piweb %v", r.Path, in.Path)
	}
	if !reflect.DeepEqual(r.Name, in.SessionName()) {
		t.Errorf("name: pi %v, piweb %v", deref(r.Name), deref(in.SessionName()))
	}
	labels := map[string]string{}
	for id, l := range s.Labels() {
		if _, ok := s.Lookup(id); ok {
			labels[id] = l
		}
	}
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	if !reflect.DeepEqual(r.Labels, labels) {
		t.Errorf("labels: pi %v, piweb %v", r.Labels, labels)
	}
	if got, want := readtest.Decoded(t, r.Context), readtest.Decoded(t, readtest.JSON(t, in.Context)); !reflect.DeepEqual(got, want) {
		t.Errorf("context:\n pi    %s\n piweb %s", r.Context, readtest.JSON(t, in.Context))
	}
	if s.Header.Version >= 3 && r.File != string(sessiontest.ReadFile(t, file)) {
		t.Errorf("pi changed the file when it opened it:\n got %q\nwant %q", r.File, sessiontest.ReadFile(t, file))
	}
	return r
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestOracleWrites(t *testing.T) {
	pi := oracle.AfterWrite(t)

	t.Run("fixtures", func(t *testing.T) {
		for _, f := range []string{"basic.jsonl", "unterminated.jsonl", "noid.jsonl"} {
			path := sessiontest.CopyFixture(t, f)
			if f == "unterminated.jsonl" {
				// pi repairs the missing newline on open; compare the reading only.
				r := pi(path)
				if r.File != string(sessiontest.ReadFile(t, path))+"\n" {
					t.Errorf("pi's repair of %s: %q", f, r.File)
				}
				continue
			}
			agree(t, pi, path)
		}
	})

	tests := []struct {
		name    string
		fixture string
		write   func(t *testing.T, s *sessions.Session) string // returns the id pi must resume from
		// the piweb context pi must see, from the file before the write
		wantContext func(t *testing.T, s *sessions.Session) any
		label       [2]string // target, label pi must show ("" label: none)
	}{
		{
			name: "label set", fixture: "basic.jsonl",
			write:       func(t *testing.T, s *sessions.Session) string { return must(t)(label(s, "a4000004", "checkpoint")) },
			wantContext: func(t *testing.T, s *sessions.Session) any { return readtest.ContextAt(t, s, s.Leaf()) },
			label:       [2]string{"a4000004", "checkpoint"},
		},
		{
			name: "label clear", fixture: "basic.jsonl",
			write:       func(t *testing.T, s *sessions.Session) string { return must(t)(label(s, "a1000001", "")) },
			wantContext: func(t *testing.T, s *sessions.Session) any { return readtest.ContextAt(t, s, s.Leaf()) },
			label:       [2]string{"a1000001", ""},
		},
		{
			name: "label on an unterminated file", fixture: "unterminated.jsonl",
			write:       func(t *testing.T, s *sessions.Session) string { return must(t)(label(s, "aa000001", "x")) },
			wantContext: func(t *testing.T, s *sessions.Session) any { return readtest.ContextAt(t, s, s.Leaf()) },
			label:       [2]string{"aa000001", "x"},
		},
		{
			name: "rewind with summary", fixture: "basic.jsonl",
			write: func(t *testing.T, s *sessions.Session) string {
				return must(t)(rewind(s, "a4000004", "Tried the other way.", Guard{Leaf: "a8000008", Size: s.Size}))
			},
		},
		{
			name: "rewind without summary", fixture: "basic.jsonl",
			write: func(t *testing.T, s *sessions.Session) string { return must(t)(rewind(s, "a5000005", "", Guard{})) },
			wantContext: func(t *testing.T, s *sessions.Session) any {
				return readtest.ContextAt(t, s, readtest.MustLookup(t, s, "a5000005"))
			},
		},
		{
			name: "rewind after a line without id", fixture: "noid.jsonl",
			write: func(t *testing.T, s *sessions.Session) string { return must(t)(rewind(s, "bb000002", "", Guard{})) },
			wantContext: func(t *testing.T, s *sessions.Session) any {
				return readtest.ContextAt(t, s, readtest.MustLookup(t, s, "bb000002"))
			},
		},
		{
			name: "rewind to before the first entry", fixture: "basic.jsonl",
			write: func(t *testing.T, s *sessions.Session) string { return must(t)(rewind(s, "", "", Guard{})) },
			wantContext: func(t *testing.T, s *sessions.Session) any {
				return map[string]any{"messages": []any{}, "thinkingLevel": "off", "model": nil}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := sessiontest.CopyFixture(t, tt.fixture)
			s := readtest.LoadFile(t, path)
			id := tt.write(t, s)
			r := agree(t, pi, path)
			if deref(r.LeafID) != id {
				t.Errorf("pi resumes from %s, want %s", deref(r.LeafID), id)
			}
			if tt.wantContext != nil {
				if got, want := readtest.Decoded(t, r.Context), tt.wantContext(t, s); !reflect.DeepEqual(got, want) {
					t.Errorf("pi's context:\n got %v\nwant %v", got, want)
				}
			}
			if target := tt.label[0]; target != "" {
				if got, ok := r.Labels[target]; got != tt.label[1] || ok != (tt.label[1] != "") {
					t.Errorf("pi's label on %s: %q, want %q", target, got, tt.label[1])
				}
			}
		})
	}

	t.Run("fork", func(t *testing.T) {
		for _, at := range []string{"a8000008", "e2000002", "1ab00003"} {
			t.Run(at, func(t *testing.T) {
				path := sessiontest.CopyFixture(t, "basic.jsonl")
				s := readtest.LoadFile(t, path)
				_, file, err := forkOf(s, at)
				if err != nil {
					t.Fatal(err)
				}
				r := agree(t, pi, file)
				if deref(r.ParentSession) != path {
					t.Errorf("pi's parentSession %s, want %s", deref(r.ParentSession), path)
				}
				if got, want := readtest.Decoded(t, r.Context), readtest.ContextAt(t, s, readtest.MustLookup(t, s, at)); !reflect.DeepEqual(got, want) {
					t.Errorf("pi's context of the fork:\n got %v\nwant %v", got, want)
				}
				// pi's own fork of the same entry has the same lines, but for fresh ids and times.
				own := pi(path, "--fork", at)
				if own.Fork == nil {
					t.Fatal("pi wrote no fork")
				}
				sameFork(t, []byte(*own.Fork), sessiontest.ReadFile(t, file))
			})
		}
	})

	t.Run("export", func(t *testing.T) {
		for _, opts := range []share.Redact{{}, {Secrets: true}, {Thinking: true}, {ToolOutput: true}, {Secrets: true, Thinking: true, ToolOutput: true}} {
			for _, leaf := range []string{"", "e2000002"} {
				s := readtest.LoadFile(t, sessiontest.CopyFixture(t, "basic.jsonl"))
				var b bytes.Buffer
				if err := share.ExportTo(&b, s, leaf, opts); err != nil {
					t.Fatal(err)
				}
				data := b.Bytes()
				file := filepath.Join(t.TempDir(), "export.jsonl")
				if err := os.WriteFile(file, data, 0o644); err != nil {
					t.Fatal(err)
				}
				r := agree(t, pi, file)
				if r.ParentSession != nil {
					t.Errorf("export names a parent session %s", *r.ParentSession)
				}
			}
		}
	})

	t.Run("upgrade", func(t *testing.T) {
		for _, f := range []string{"v1.jsonl", "v2.jsonl"} {
			t.Run(f, func(t *testing.T) {
				path := sessiontest.CopyFixture(t, f)
				migrated := pi(path) // pi's own migration of the original, on a copy
				if _, err := upgradeFile(path); err != nil {
					t.Fatal(err)
				}
				r := agree(t, pi, path)
				if got, want := readtest.Decoded(t, r.Context), readtest.Decoded(t, migrated.Context); !reflect.DeepEqual(got, want) {
					t.Errorf("context after piweb's upgrade differs from pi's own migration:\n got %s\nwant %s", r.Context, migrated.Context)
				}
				// Line by line, the upgraded file means what pi's rewrite means. pi invents
				// v1 ids, so for v1 the ids are compared by position.
				ours := readtest.SplitLines(sessiontest.ReadFile(t, path))
				theirs := readtest.SplitLines([]byte(migrated.File))
				if len(ours) != len(theirs) {
					t.Fatalf("%d lines, pi's migration has %d", len(ours), len(theirs))
				}
				rename := map[string]string{} // pi's id -> ours
				for k := range ours {
					if ka, kb := readtest.Keys(t, ours[k]), readtest.Keys(t, theirs[k]); !reflect.DeepEqual(ka, kb) {
						t.Errorf("line %d keys: piweb %v, pi %v", k+1, ka, kb)
					}
					a, b := readtest.Decoded(t, ours[k]).(map[string]any), readtest.Decoded(t, theirs[k]).(map[string]any)
					if f == "v1.jsonl" && k > 0 {
						rename[b["id"].(string)] = a["id"].(string)
						for _, key := range []string{"id", "parentId", "firstKeptEntryId"} {
							if id, ok := b[key].(string); ok {
								b[key] = rename[id]
							}
						}
					}
					if !reflect.DeepEqual(a, b) {
						t.Errorf("line %d:\n piweb %s\n pi    %s", k+1, ours[k], theirs[k])
					}
				}
			})
		}
	})
}

// sameFork compares pi's fork with piweb's: the same header keys and cwd, the
// same entries line by line, and the same label entries up to their fresh ids.
func sameFork(t *testing.T, theirs, ours []byte) {
	t.Helper()
	a, b := readtest.SplitLines(theirs), readtest.SplitLines(ours)
	if len(a) != len(b) {
		t.Fatalf("pi's fork has %d lines, piweb's %d", len(a), len(b))
	}
	if ka, kb := readtest.Keys(t, a[0]), readtest.Keys(t, b[0]); !reflect.DeepEqual(ka, kb) {
		t.Errorf("header keys: pi %v, piweb %v", ka, kb)
	}
	ha, hb := readtest.Decoded(t, a[0]).(map[string]any), readtest.Decoded(t, b[0]).(map[string]any)
	if ha["cwd"] != hb["cwd"] || ha["version"] != hb["version"] {
		t.Errorf("header: pi %s, piweb %s", a[0], b[0])
	}
	ids := map[string]string{} // pi's label id -> piweb's
	for k := 1; k < len(a); k++ {
		if ka, kb := readtest.Keys(t, a[k]), readtest.Keys(t, b[k]); !reflect.DeepEqual(ka, kb) {
			t.Errorf("line %d keys: pi %v, piweb %v", k+1, ka, kb)
		}
		ea, eb := readtest.Decoded(t, a[k]).(map[string]any), readtest.Decoded(t, b[k]).(map[string]any)
		if ea["type"] == sessions.TypeLabel && eb["type"] == sessions.TypeLabel {
			ids[ea["id"].(string)] = eb["id"].(string)
			ea["id"] = eb["id"]
			if p, ok := ids[strOf(ea["parentId"])]; ok {
				ea["parentId"] = p
			}
		}
		if !reflect.DeepEqual(ea, eb) {
			t.Errorf("line %d:\n pi    %s\n piweb %s", k+1, a[k], b[k])
		}
	}
}

func strOf(v any) string {
	s, _ := v.(string)
	return s
}

// must turns a writer's (id, error) into the id, failing the test on error.
func must(t *testing.T) func(string, error) string {
	return func(id string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
}
