package writer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

var forkNameRe = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)_([0-9a-f-]{36})\.jsonl$`)

func TestFork(t *testing.T) {
	tests := []struct {
		name      string
		at        string
		entries   []string          // ids of the non-label entries, in order
		labels    []string          // targets of the recreated label entries, in order
		labelTime map[string]string // target -> timestamp kept from the label in force
		firstKept string            // the compaction's firstKeptEntryId in the fork
		wantName  string
	}{
		{
			name: "main leaf", at: "a8000008",
			entries: []string{"3c000001", "7e000001", "a1000001", "a2000002", "a3000003", "a4000004", "5e550001",
				"a5000005", "b1000001", "c1000001", "a6000006", "a7000007", "f1000001", "ced00001", "a8000008"},
			// a2 was labelled first, but its clear removed it from pi's map; a1's re-set keeps its place.
			labels:    []string{"a1000001", "a2000002"},
			labelTime: map[string]string{"a1000001": "2025-01-01T10:00:11.000Z", "a2000002": "2025-01-01T10:00:10.000Z"},
			firstKept: "5e550001", // named the dropped label 1ab00001
			wantName:  "demo session",
		},
		{
			name: "side branch", at: "e2000002",
			entries: []string{"3c000001", "7e000001", "a1000001", "a2000002", "a3000003", "a4000004", "e1000001", "e2000002"},
			labels:  []string{"a1000001", "a2000002", "e1000001"},
		},
		{
			name: "ending at a label entry", at: "1ab00003",
			entries:  []string{"3c000001", "7e000001", "a1000001", "a2000002", "a3000003", "a4000004", "5e550001", "a5000005"},
			labels:   []string{"a1000001", "a2000002"}, // labels in force in the whole file, not as of the path's end
			wantName: "demo session",
		},
		{
			name: "root", at: "3c000001",
			entries: []string{"3c000001"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := sessiontest.CopyFixture(t, "basic.jsonl")
			before := sessiontest.ReadFile(t, path)
			s := readtest.LoadFile(t, path)
			id, file, err := forkOf(s, tt.at)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(sessiontest.ReadFile(t, path), before) {
				t.Error("the source changed")
			}
			if filepath.Dir(file) != filepath.Dir(path) {
				t.Errorf("fork written to %s, want the source's directory", file)
			}
			m := forkNameRe.FindStringSubmatch(filepath.Base(file))
			if m == nil || m[2] != id {
				t.Fatalf("file name %s does not match <timestamp>_%s.jsonl", filepath.Base(file), id)
			}
			if u, err := uuid.Parse(id); err != nil || u.Version() != 7 {
				t.Errorf("session id %q is not a UUIDv7", id)
			}
			data := sessiontest.ReadFile(t, file)
			head := data[:bytes.IndexByte(data, '\n')]
			if got, want := readtest.Keys(t, head), []string{"type", "version", "id", "timestamp", "cwd", "parentSession"}; !reflect.DeepEqual(got, want) {
				t.Errorf("header keys %v, want %v", got, want)
			}
			ts := js.Str(mustParse(t, head).Val("timestamp"))
			if strings.NewReplacer(":", "-", ".", "-").Replace(ts) != m[1] || !isoRe.MatchString(ts) {
				t.Errorf("header timestamp %q does not match the file name %s", ts, m[1])
			}

			f := readtest.LoadFile(t, file)
			for _, d := range f.Diags {
				t.Errorf("diagnostic: %v", d)
			}
			if f.Header.ID != id || f.Header.Version != 3 || f.Header.Cwd != "/home/user/proj" || f.Header.ParentSession != path {
				t.Errorf("header %+v", f.Header)
			}
			var gotEntries, gotLabels []string
			prev := ""
			for i, e := range f.Entries {
				if e.ParentID != prev {
					t.Errorf("entry %d (%s) has parent %q, want %q", i, e.ID, e.ParentID, prev)
				}
				prev = e.ID
				if e.Type == sessions.TypeLabel {
					gotLabels = append(gotLabels, e.Target)
					if !entryIDRe.MatchString(e.ID) {
						t.Errorf("label entry id %q", e.ID)
					}
					if want, ok := tt.labelTime[e.Target]; ok {
						raw, _ := f.Raw(i)
						if got := js.Str(mustParse(t, raw).Val("timestamp")); got != want {
							t.Errorf("label on %s has timestamp %s, want %s", e.Target, got, want)
						}
					}
					continue
				}
				if gotLabels != nil {
					t.Errorf("entry %s after the label entries", e.ID)
				}
				gotEntries = append(gotEntries, e.ID)
			}
			if !reflect.DeepEqual(gotEntries, tt.entries) {
				t.Errorf("entries %v\nwant %v", gotEntries, tt.entries)
			}
			if !reflect.DeepEqual(gotLabels, tt.labels) {
				t.Errorf("label targets %v, want %v (pi's map order)", gotLabels, tt.labels)
			}
			src := s.Labels()
			for target, l := range f.Labels() {
				if src[target] != l {
					t.Errorf("label %q on %s, want %q", l, target, src[target])
				}
			}
			if tt.firstKept != "" {
				if got := f.Entries[readtest.MustLookup(t, f, "c1000001")].FirstKept(); got != tt.firstKept {
					t.Errorf("firstKeptEntryId %q, want %q", got, tt.firstKept)
				}
			}
			if f.Name() != tt.wantName {
				t.Errorf("name %q, want %q", f.Name(), tt.wantName)
			}
			if got, want := readtest.ContextAt(t, f, f.Leaf()), readtest.ContextAt(t, s, readtest.MustLookup(t, s, tt.at)); !reflect.DeepEqual(got, want) {
				t.Errorf("context:\n got %v\nwant %v", got, want)
			}

			// Every byte of a kept entry survives except parentId (and the moved firstKeptEntryId).
			for i, e := range f.Entries {
				if e.Type == sessions.TypeLabel {
					continue
				}
				got, _ := f.Raw(i)
				orig, _ := s.Raw(readtest.MustLookup(t, s, e.ID))
				want := js.SetMember(orig, "parentId", mustGetRaw(t, got, "parentId"))
				if e.Type == sessions.TypeCompaction {
					want = js.SetMember(want, "firstKeptEntryId", mustGetRaw(t, got, "firstKeptEntryId"))
				}
				if !bytes.Equal(got, js.TrimSpace(want)) {
					t.Errorf("entry %s:\n got %s\nwant %s", e.ID, got, want)
				}
			}
		})
	}
}

func mustGetRaw(t *testing.T, line []byte, k string) []byte {
	t.Helper()
	v, ok := js.Lookup(line, k)
	if !ok {
		t.Fatalf("%s has no %s", line, k)
	}
	return v
}

func TestForkKeepsOddBytes(t *testing.T) {
	path := sessiontest.CopyFixture(t, "basic.jsonl")
	_, file, err := forkOf(readtest.LoadFile(t, path), "a6000006")
	if err != nil {
		t.Fatal(err)
	}
	// a6's line is spaced and escaped by hand; its parent is kept, so it is copied as it was.
	want := `{"type": "message", "id": "a6000006", "parentId": "c1000001", "timestamp": "2025-01-01T10:00:14.000Z", "message": {"role": "user", "content": "continue, caf\u00e9 \u2603", "timestamp": 1735725614000}}`
	if !bytes.Contains(sessiontest.ReadFile(t, file), []byte(want+"\n")) {
		t.Errorf("fork lost the bytes of a6's line:\n%s", sessiontest.ReadFile(t, file))
	}
}

func TestForkRefusals(t *testing.T) {
	path := sessiontest.CopyFixture(t, "basic.jsonl")
	s := readtest.LoadFile(t, path)
	for _, id := range []string{"nope", ""} {
		if _, _, err := forkOf(s, id); !errors.Is(err, sessions.ErrNoEntry) {
			t.Errorf("forkOf(%q): %v, want ErrNoEntry", id, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("a failed fork left files: %v", entries)
	}
}

func TestForkOldVersions(t *testing.T) {
	tests := []struct{ fixture, at string }{
		{"v1.jsonl", "00000008"},
		{"v1.jsonl", "00000003"},
		{"v2.jsonl", "b2000005"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture+"@"+tt.at, func(t *testing.T) {
			path := sessiontest.CopyFixture(t, tt.fixture)
			before := sessiontest.ReadFile(t, path)
			s := readtest.LoadFile(t, path)
			_, file, err := forkOf(s, tt.at)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(sessiontest.ReadFile(t, path), before) {
				t.Error("the source changed")
			}
			data := sessiontest.ReadFile(t, file)
			for _, gone := range []string{"firstKeptEntryIndex", "hookMessage"} {
				if bytes.Contains(data, []byte(gone)) {
					t.Errorf("fork still holds %q", gone)
				}
			}
			f := readtest.LoadFile(t, file)
			if f.Header.Version != 3 {
				t.Errorf("version %d", f.Header.Version)
			}
			path0 := s.Path(readtest.MustLookup(t, s, tt.at))
			if len(f.Entries) != len(path0) {
				t.Fatalf("%d entries, want %d", len(f.Entries), len(path0))
			}
			for k, i := range path0 {
				o, e := s.Entries[i], f.Entries[k]
				if o.ID != e.ID || o.Type != e.Type || o.Role != e.Role || o.FirstKept() != e.FirstKept() {
					t.Errorf("entry %d: %+v, want %+v", k, e, o)
				}
			}
			if got, want := readtest.ContextAt(t, f, f.Leaf()), readtest.ContextAt(t, s, readtest.MustLookup(t, s, tt.at)); !reflect.DeepEqual(got, want) {
				t.Errorf("context:\n got %v\nwant %v", got, want)
			}
		})
	}
}

func TestCreateExclusive(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "new.jsonl")
	if err := createExclusive(final, []byte("data\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if got := string(sessiontest.ReadFile(t, final)); got != "data\n" {
		t.Errorf("content %q", got)
	}
	if st, _ := os.Stat(final); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
	err := createExclusive(final, []byte("other\n"), 0o644)
	if !errors.Is(err, os.ErrExist) {
		t.Fatalf("second create: %v, want ErrExist", err)
	}
	if got := string(sessiontest.ReadFile(t, final)); got != "data\n" {
		t.Errorf("existing file overwritten: %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}
