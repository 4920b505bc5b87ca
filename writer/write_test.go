package writer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

var (
	entryIDRe = regexp.MustCompile(`^[0-9a-f]{8}$`)
	isoRe     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
)

// lastLine returns the last line of a file, as a JSON object.
func lastLine(t *testing.T, data []byte) []byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	return lines[len(lines)-1]
}

func memberOf(t *testing.T, line []byte, k string) string {
	t.Helper()
	v, ok := js.Lookup(line, k)
	if !ok {
		return "<absent>"
	}
	return string(v)
}

func TestLabel(t *testing.T) {
	tests := []struct {
		name, target, label string
		want                string // label in force afterwards; "" = none
		wantKey             bool   // the written line has a label key
	}{
		{"set", "a4000004", "checkpoint", "checkpoint", true},
		{"set trims", "a4000004", "  spaced out \t", "spaced out", true},
		{"relabel", "a2000002", "third", "third", true},
		{"clear", "a1000001", "", "", false},
		{"clear blank", "a2000002", "   ", "", false},
		{"clear unlabeled", "a3000003", "", "", false},
		{"on a label entry", "1ab00001", "meta", "meta", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := sessiontest.CopyFixture(t, "basic.jsonl")
			before := sessiontest.ReadFile(t, path)
			s := readtest.LoadFile(t, path)
			oldLeaf := s.Leaf()
			wantCtx := readtest.ContextAt(t, s, oldLeaf)

			id, err := label(s, tt.target, tt.label)
			if err != nil {
				t.Fatal(err)
			}
			if !entryIDRe.MatchString(id) {
				t.Errorf("id %q is not 8 hex digits", id)
			}
			after := sessiontest.ReadFile(t, path)
			if !bytes.HasPrefix(after, before) {
				t.Fatal("the original bytes are not a prefix of the new file")
			}
			line := after[len(before):]
			if bytes.Count(line, []byte("\n")) != 1 || !bytes.HasSuffix(line, []byte("\n")) {
				t.Fatalf("appended %q, want one line", line)
			}
			line = bytes.TrimSuffix(line, []byte("\n"))
			wantKeys := []string{"type", "id", "parentId", "timestamp", "targetId"}
			if tt.wantKey {
				wantKeys = append(wantKeys, "label")
			}
			if got := readtest.Keys(t, line); !reflect.DeepEqual(got, wantKeys) {
				t.Errorf("keys %v, want %v (pi's order)", got, wantKeys)
			}
			if got := memberOf(t, line, "parentId"); got != `"a8000008"` {
				t.Errorf("parentId %s, want the old leaf", got)
			}
			if ts := js.Str(mustParse(t, line).Val("timestamp")); !isoRe.MatchString(ts) {
				t.Errorf("timestamp %q is not toISOString()", ts)
			}

			n := readtest.LoadFile(t, path)
			if len(n.Diags) != len(s.Diags) {
				t.Errorf("diagnostics %v, want %v", n.Diags, s.Diags)
			}
			if got := n.Entries[n.Leaf()].ID; got != id {
				t.Errorf("leaf %q, want the label entry %q", got, id)
			}
			if got := n.LabelOf(readtest.MustLookup(t, n, tt.target)); got != tt.want {
				t.Errorf("label %q, want %q", got, tt.want)
			}
			if got := n.Name(); got != s.Name() {
				t.Errorf("name %q, want %q", got, s.Name())
			}
			if got := readtest.ContextAt(t, n, n.Leaf()); !reflect.DeepEqual(got, wantCtx) {
				t.Errorf("context changed:\n got %v\nwant %v", got, wantCtx)
			}
			for target, l := range s.Labels() {
				if target != tt.target && n.Labels()[target] != l {
					t.Errorf("label of %s became %q, want %q", target, n.Labels()[target], l)
				}
			}
		})
	}
}

func mustParse(t *testing.T, line []byte) js.Object {
	t.Helper()
	o, ok := js.ParseObject(line)
	if !ok {
		t.Fatalf("not an object: %s", line)
	}
	return o
}

func TestWriteRefusals(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		write   func(s *sessions.Session) error
		want    error
	}{
		{"label missing target", "basic.jsonl", func(s *sessions.Session) error { _, err := label(s, "nope", "x"); return err }, sessions.ErrNoEntry},
		{"label empty target", "basic.jsonl", func(s *sessions.Session) error { _, err := label(s, "", "x"); return err }, sessions.ErrNoEntry},
		{"rewind missing target", "basic.jsonl", func(s *sessions.Session) error { _, err := rewind(s, "nope", "", Guard{}); return err }, sessions.ErrNoEntry},
		{"rewind stale leaf", "basic.jsonl", func(s *sessions.Session) error {
			_, err := rewind(s, "a4000004", "sum", Guard{Leaf: "a7000007", Size: s.Size})
			return err
		}, sessions.ErrStale},
		{"rewind truncated since", "basic.jsonl", func(s *sessions.Session) error {
			_, err := rewind(s, "a4000004", "", Guard{Leaf: "a8000008", Size: s.Size + 1})
			return err
		}, sessions.ErrStale},
		{"label v1", "v1.jsonl", func(s *sessions.Session) error { _, err := label(s, "00000002", "x"); return err }, sessions.ErrReadOnly},
		{"rewind v1", "v1.jsonl", func(s *sessions.Session) error { _, err := rewind(s, "00000002", "", Guard{}); return err }, sessions.ErrReadOnly},
		{"label v2", "v2.jsonl", func(s *sessions.Session) error { _, err := label(s, "b2000001", "x"); return err }, sessions.ErrReadOnly},
		{"rewind v2", "v2.jsonl", func(s *sessions.Session) error { _, err := rewind(s, "b2000001", "sum", Guard{}); return err }, sessions.ErrReadOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := sessiontest.CopyFixture(t, tt.fixture)
			before := sessiontest.ReadFile(t, path)
			err := tt.write(readtest.LoadFile(t, path))
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if !bytes.Equal(sessiontest.ReadFile(t, path), before) {
				t.Error("the file changed")
			}
		})
	}
}

func TestWriteNeedsAFile(t *testing.T) {
	s := readtest.LoadFile(t, sessiontest.CopyFixture(t, "basic.jsonl"))
	s.File = "" // an index that names no file
	if _, err := label(s, "a1000001", "x"); !errors.Is(err, errNotFile) {
		t.Errorf("Label on a session without a file: %v, want errNotFile", err)
	}
	if _, _, err := forkOf(s, "a1000001"); !errors.Is(err, errNotFile) {
		t.Errorf("Fork on a session without a file: %v, want errNotFile", err)
	}
	missing := filepath.Join(t.TempDir(), "gone.jsonl")
	if _, err := label(&sessions.Session{File: missing}, "a1000001", "x"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Label on a missing file: %v, want not-exist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Error("a writer created the missing file")
	}
}

func TestRewind(t *testing.T) {
	tests := []struct {
		name, target, summary string
		guard                 func(s *sessions.Session) Guard
		wantType              string
	}{
		{"summary", "a4000004", "We tried X; it failed.", nil, sessions.TypeBranchSummary},
		{"summary guarded", "a4000004", "why", func(s *sessions.Session) Guard { return Guard{Leaf: "a8000008", Size: s.Size} }, sessions.TypeBranchSummary},
		{"plain", "a5000005", "", nil, sessions.TypeCustom},
		{"blank summary", "a5000005", " \n ", nil, sessions.TypeCustom},
		{"plain guarded", "e2000002", "", func(s *sessions.Session) Guard { return Guard{Leaf: "a8000008"} }, sessions.TypeCustom},
		{"to a label entry", "1ab00003", "", nil, sessions.TypeCustom},
		{"to the current leaf", "a8000008", "", nil, sessions.TypeCustom},
		{"before the first entry", "", "", nil, sessions.TypeCustom},
		{"before the first entry with summary", "", "start over", nil, sessions.TypeBranchSummary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := sessiontest.CopyFixture(t, "basic.jsonl")
			before := sessiontest.ReadFile(t, path)
			s := readtest.LoadFile(t, path)
			var g Guard
			if tt.guard != nil {
				g = tt.guard(s)
			}
			id, err := rewind(s, tt.target, tt.summary, g)
			if err != nil {
				t.Fatal(err)
			}
			after := sessiontest.ReadFile(t, path)
			if !bytes.HasPrefix(after, before) {
				t.Fatal("the original bytes are not a prefix of the new file")
			}
			line := lastLine(t, after)
			wantParent := `null`
			if tt.target != "" {
				wantParent = `"` + tt.target + `"`
			}
			if got := memberOf(t, line, "parentId"); got != wantParent {
				t.Errorf("parentId %s, want %s", got, wantParent)
			}
			switch tt.wantType {
			case sessions.TypeBranchSummary:
				want := []string{"type", "id", "parentId", "timestamp", "fromId", "summary"}
				if got := readtest.Keys(t, line); !reflect.DeepEqual(got, want) {
					t.Errorf("keys %v, want %v", got, want)
				}
				if got := memberOf(t, line, "fromId"); got != `"a8000008"` {
					t.Errorf("fromId %s, want the old leaf", got)
				}
			case sessions.TypeCustom:
				want := []string{"type", "customType", "data", "id", "parentId", "timestamp"}
				if got := readtest.Keys(t, line); !reflect.DeepEqual(got, want) {
					t.Errorf("keys %v, want %v", got, want)
				}
				if got := memberOf(t, line, "data"); got != `{"fromId":"a8000008"}` {
					t.Errorf("data %s", got)
				}
				if got := memberOf(t, line, "customType"); got != `"piweb.rewind"` {
					t.Errorf("customType %s", got)
				}
			}

			n := readtest.LoadFile(t, path)
			leaf := n.Leaf()
			if n.Entries[leaf].ID != id || n.Entries[leaf].Type != tt.wantType {
				t.Fatalf("leaf %q (%s), want %q (%s)", n.Entries[leaf].ID, n.Entries[leaf].Type, id, tt.wantType)
			}
			// The path is the target's path plus the new entry.
			var wantPath []string
			if tt.target != "" {
				for _, i := range s.Path(readtest.MustLookup(t, s, tt.target)) {
					wantPath = append(wantPath, s.Entries[i].ID)
				}
			}
			wantPath = append(wantPath, id)
			var gotPath []string
			for _, i := range n.Path(leaf) {
				gotPath = append(gotPath, n.Entries[i].ID)
			}
			if !reflect.DeepEqual(gotPath, wantPath) {
				t.Errorf("path %v, want %v", gotPath, wantPath)
			}
			// The context is the target's, plus the summary.
			want := map[string]any{"messages": []any{}, "thinkingLevel": "off", "model": nil}
			if tt.target != "" {
				want = readtest.ContextAt(t, s, readtest.MustLookup(t, s, tt.target)).(map[string]any)
			}
			msgs := append([]any{}, want["messages"].([]any)...)
			if tt.wantType == sessions.TypeBranchSummary {
				msgs = append(msgs, map[string]any{"role": "branchSummary", "summary": tt.summary, "fromId": "a8000008",
					"timestamp": float64(n.Entries[leaf].Time)})
			}
			want["messages"] = msgs
			if got := readtest.ContextAt(t, n, leaf); !reflect.DeepEqual(got, any(want)) {
				t.Errorf("context:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestWritersRereadTheFile checks that writers use the file as it is now,
// not the index the caller holds.
func TestWritersRereadTheFile(t *testing.T) {
	path := sessiontest.CopyFixture(t, "basic.jsonl")
	stale := readtest.LoadFile(t, path)
	extra := `{"type":"message","id":"0ther001","parentId":"a8000008","timestamp":"2025-01-01T10:01:00.000Z","message":{"role":"user","content":"from pi","timestamp":1735725660000}}` + "\n"
	sessiontest.Append(t, path, extra)

	// The page that showed a8000008 is stale now.
	if _, err := rewind(stale, "a4000004", "sum", Guard{Leaf: "a8000008", Size: stale.Size}); !errors.Is(err, sessions.ErrStale) {
		t.Fatalf("Rewind with a stale guard: %v, want ErrStale", err)
	}
	// Without a guard the record names the real previous leaf.
	if _, err := rewind(stale, "a4000004", "", Guard{}); err != nil {
		t.Fatal(err)
	}
	if got := memberOf(t, lastLine(t, sessiontest.ReadFile(t, path)), "data"); got != `{"fromId":"0ther001"}` {
		t.Errorf("data %s, want the leaf appended by the other writer", got)
	}
	// A label hangs off the current leaf, and its target must exist now.
	id, err := label(stale, "0ther001", "seen")
	if err != nil {
		t.Fatalf("Label on an entry the stale index lacks: %v", err)
	}
	n := readtest.LoadFile(t, path)
	if got := n.Entries[n.Parent(readtest.MustLookup(t, n, id))].Type; got != sessions.TypeCustom {
		t.Errorf("label parent is a %s, want the rewind record", got)
	}
}

// TestLastLineWithoutID covers files whose last line pi cannot name as a leaf.
func TestLastLineWithoutID(t *testing.T) {
	tests := []struct {
		name, last string // "" keeps the fixture's id-less last line
		wantFrom   string
	}{
		{"no id", "", `"root"`},
		{"number id", `{"type":"custom","customType":"x","id":5,"parentId":"bb000002","timestamp":"2025-01-01T10:00:04.000Z"}`, `5`},
		{"null id", `{"type":"custom","customType":"x","id":null,"parentId":"bb000002","timestamp":"2025-01-01T10:00:04.000Z"}`, `"root"`},
		{"not an object", `[1]`, `"root"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := sessiontest.CopyFixture(t, "noid.jsonl")
			if tt.last != "" {
				sessiontest.Append(t, path, tt.last+"\n")
			}
			before := sessiontest.ReadFile(t, path)
			s := readtest.LoadFile(t, path)
			if _, err := label(s, "bb000001", "x"); err == nil || !strings.Contains(err.Error(), "has no id") {
				t.Errorf("Label: %v, want a refusal", err)
			}
			if !bytes.Equal(sessiontest.ReadFile(t, path), before) {
				t.Fatal("a refused Label changed the file")
			}
			id, err := rewind(s, "bb000001", "", Guard{})
			if err != nil {
				t.Fatal(err)
			}
			if got := memberOf(t, lastLine(t, sessiontest.ReadFile(t, path)), "data"); got != `{"fromId":`+tt.wantFrom+`}` {
				t.Errorf("data %s, want fromId %s", got, tt.wantFrom)
			}
			n := readtest.LoadFile(t, path)
			if got := n.Path(n.Leaf()); len(got) != 2 || n.Entries[got[0]].ID != "bb000001" || n.Entries[got[1]].ID != id {
				t.Errorf("path after rewind: %v", got)
			}
			// The rewind gave the file a leaf again: labels work now.
			if _, err := label(n, "bb000001", "x"); err != nil {
				t.Errorf("Label after the rewind: %v", err)
			}
		})
	}
}

func TestWriteBadFiles(t *testing.T) {
	dir := t.TempDir()
	notSession := filepath.Join(dir, "notes.jsonl")
	if err := os.WriteFile(notSession, []byte(`{"type":"message","id":"x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := label(&sessions.Session{File: notSession}, "x", "y"); !errors.Is(err, sessions.ErrNotSession) {
		t.Errorf("Label on a non-session: %v, want ErrNotSession", err)
	}
	if _, err := rewind(&sessions.Session{File: dir}, "x", "", Guard{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Rewind on a directory: %v", err)
	}
	if _, _, err := forkOf(&sessions.Session{File: notSession}, "x"); !errors.Is(err, sessions.ErrNotSession) {
		t.Errorf("Fork of a non-session: %v, want ErrNotSession", err)
	}
	if got := string(sessiontest.ReadFile(t, notSession)); got != `{"type":"message","id":"x"}`+"\n" {
		t.Errorf("the file changed: %q", got)
	}
}

func TestAppendRepairsMissingNewline(t *testing.T) {
	tests := []struct {
		name  string
		write func(s *sessions.Session) (string, error)
	}{
		{"label", func(s *sessions.Session) (string, error) { return label(s, "aa000001", "first") }},
		{"rewind", func(s *sessions.Session) (string, error) { return rewind(s, "aa000001", "", Guard{}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := sessiontest.CopyFixture(t, "unterminated.jsonl")
			before := sessiontest.ReadFile(t, path)
			if bytes.HasSuffix(before, []byte("\n")) {
				t.Fatal("fixture must lack its final newline")
			}
			s := readtest.LoadFile(t, path)
			id, err := tt.write(s)
			if err != nil {
				t.Fatal(err)
			}
			after := sessiontest.ReadFile(t, path)
			rest, ok := bytes.CutPrefix(after, before)
			if !ok {
				t.Fatal("the original bytes are not a prefix of the new file")
			}
			if !bytes.HasPrefix(rest, []byte("\n{")) || !bytes.HasSuffix(rest, []byte("}\n")) || bytes.Count(rest, []byte("\n")) != 2 {
				t.Fatalf("appended %q, want \"\\n\" + one line", rest)
			}
			n := readtest.LoadFile(t, path)
			for _, d := range n.Diags {
				t.Errorf("diagnostic after the repair: %v", d)
			}
			if len(n.Entries) != 3 || n.Entries[1].ID != "aa000002" || n.Entries[2].ID != id {
				t.Fatalf("entries %+v", n.Entries)
			}
			// The unterminated line was the leaf: the label hangs off it, the rewind records it.
			line := lastLine(t, after)
			if !bytes.Contains(line, []byte(`"aa000002"`)) {
				t.Errorf("new line %s does not name the old leaf aa000002", line)
			}
		})
	}
}

func TestUpgrade(t *testing.T) {
	tests := []struct {
		fixture string
		version int
	}{
		{"v1.jsonl", 1},
		{"v2.jsonl", 2},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			path := sessiontest.CopyFixture(t, tt.fixture)
			orig := sessiontest.ReadFile(t, path)
			old := readtest.LoadFile(t, path)
			oldIns, err := readtest.Inspect(old, "")
			if err != nil {
				t.Fatal(err)
			}

			backup, err := upgradeFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("%s.v%d.bak", path, tt.version); backup != want {
				t.Errorf("backup %s, want %s", backup, want)
			}
			if !bytes.Equal(sessiontest.ReadFile(t, backup), orig) {
				t.Error("the backup is not byte-identical to the original")
			}
			data := sessiontest.ReadFile(t, path)
			for k, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				if !json.Valid(line) {
					t.Errorf("line %d is not JSON: %s", k+1, line)
				}
			}
			for _, gone := range []string{"firstKeptEntryIndex", "hookMessage", "not json"} {
				if bytes.Contains(data, []byte(gone)) {
					t.Errorf("upgraded file still holds %q", gone)
				}
			}
			n := readtest.LoadFile(t, path)
			if n.Header.Version != 3 || n.Header.ID != old.Header.ID {
				t.Errorf("header version %d id %q", n.Header.Version, n.Header.ID)
			}
			for _, d := range n.Diags {
				t.Errorf("diagnostic after upgrade: %v", d)
			}
			if len(n.Entries) != len(old.Entries) {
				t.Fatalf("%d entries, want %d", len(n.Entries), len(old.Entries))
			}
			for i := range old.Entries {
				o, e := old.Entries[i], n.Entries[i]
				if o.ID != e.ID || o.ParentID != e.ParentID || o.Type != e.Type || o.Role != e.Role || o.FirstKept() != e.FirstKept() {
					t.Errorf("entry %d: %+v, want %+v", i, e, o)
				}
			}
			ins, err := readtest.Inspect(n, "")
			if err != nil {
				t.Fatal(err)
			}
			ins.Version = oldIns.Version
			a, _ := json.Marshal(ins)
			b, _ := json.Marshal(oldIns)
			if !reflect.DeepEqual(readtest.Decoded(t, a), readtest.Decoded(t, b)) {
				t.Errorf("reading changed:\n got %s\nwant %s", a, b)
			}

			// Only the header and migrated members changed: for v2, other lines are byte-identical.
			if tt.version == 2 {
				origLines := bytes.Split(orig, []byte("\n"))
				newLines := bytes.Split(data, []byte("\n"))
				for k := 1; k < len(origLines) && k < len(newLines); k++ {
					if !bytes.Contains(origLines[k], []byte("hookMessage")) && !bytes.Equal(origLines[k], newLines[k]) {
						t.Errorf("line %d rewritten:\n got %s\nwant %s", k+1, newLines[k], origLines[k])
					}
				}
			}

			// Now it is writable; a second upgrade has nothing to do and leaves the backup alone.
			if _, err := label(n, n.Entries[0].ID, "ok"); err != nil {
				t.Errorf("Label after upgrade: %v", err)
			}
			if _, err := upgradeFile(path); err == nil {
				t.Error("a second Upgrade succeeded")
			}
			if !bytes.Equal(sessiontest.ReadFile(t, backup), orig) {
				t.Error("the backup changed")
			}
		})
	}
}

func TestUpgradeKeepsExistingBackup(t *testing.T) {
	path := sessiontest.CopyFixture(t, "v1.jsonl")
	orig := sessiontest.ReadFile(t, path)
	backup := path + ".v1.bak"
	if err := os.WriteFile(backup, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := upgradeFile(path); !errors.Is(err, os.ErrExist) {
		t.Fatalf("Upgrade with an existing backup: %v, want ErrExist", err)
	}
	if !bytes.Equal(sessiontest.ReadFile(t, path), orig) {
		t.Error("the original changed")
	}
	if got := string(sessiontest.ReadFile(t, backup)); got != "mine" {
		t.Errorf("the existing backup was overwritten: %q", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 2 {
		t.Errorf("left files behind: %v", entries)
	}
}

// TestMigrateFirstKept covers pi's v1 firstKeptEntryIndex rules: an index
// into the parsed values (header included, extra headers counted), a forward
// reference keeps the target's written id (here none, so the key is dropped),
// a header target or a non-integer sets nothing, a non-number is left alone;
// the in-memory view of the unchanged file agrees.
func TestMigrateFirstKept(t *testing.T) {
	head := `{"type":"session","id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/x"}`
	msg := func(n int) string {
		return fmt.Sprintf(`{"type":"message","timestamp":"2024-01-01T00:00:%02d.000Z","message":{"role":"user","content":"m%d","timestamp":1}}`, n, n)
	}
	comp := func(idx string) string {
		return `{"type":"compaction","timestamp":"2024-01-01T00:00:09.000Z","summary":"s","firstKeptEntryIndex":` + idx + `,"tokensBefore":1}`
	}
	tests := []struct {
		name  string
		lines []string
		want  string // firstKeptEntryId member of the compaction after upgrade
		index string // firstKeptEntryIndex member after upgrade
	}{
		{"backward", []string{head, msg(1), msg(2), comp("2")}, `"00000003"`, "<absent>"},
		{"self", []string{head, msg(1), comp("2")}, `"00000003"`, "<absent>"},
		{"float form", []string{head, msg(1), msg(2), comp("2.0")}, `"00000003"`, "<absent>"},
		{"header", []string{head, msg(1), comp("0")}, "<absent>", "<absent>"},
		{"forward without id", []string{head, comp("2"), msg(1)}, "<absent>", "<absent>"},
		{"out of range", []string{head, msg(1), comp("7")}, "<absent>", "<absent>"},
		{"fraction", []string{head, msg(1), comp("1.5")}, "<absent>", "<absent>"},
		{"string", []string{head, msg(1), comp(`"1"`)}, "<absent>", `"1"`},
		{"counts extra headers", []string{head, `{"type":"session","id":"t"}`, msg(1), comp("2")}, `"00000003"`, "<absent>"},
		{"skips blank and bad lines", []string{head, "", "{bad", msg(1), comp("1")}, `"00000004"`, "<absent>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, []byte(strings.Join(tt.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// The in-memory view of the v1 file resolves the index as Upgrade does.
			s, err := sessions.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			mem := "<absent>"
			for i := range s.Entries {
				if e := &s.Entries[i]; e.Type == sessions.TypeCompaction && e.FirstKept() != "" {
					mem = `"` + e.FirstKept() + `"`
				}
			}
			if mem != tt.want {
				t.Errorf("in memory, firstKeptEntryId %s, want %s", mem, tt.want)
			}
			if _, err := upgradeFile(path); err != nil {
				t.Fatal(err)
			}
			var compLine []byte
			for _, l := range bytes.Split(sessiontest.ReadFile(t, path), []byte("\n")) {
				if bytes.Contains(l, []byte(`"compaction"`)) {
					compLine = l
				}
			}
			if got := memberOf(t, compLine, "firstKeptEntryId"); got != tt.want {
				t.Errorf("firstKeptEntryId %s, want %s (%s)", got, tt.want, compLine)
			}
			if got := memberOf(t, compLine, "firstKeptEntryIndex"); got != tt.index {
				t.Errorf("firstKeptEntryIndex %s, want %s", got, tt.index)
			}
		})
	}
}

func TestUpgradeRefusesV1NonObjects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := `{"type":"session","id":"s","timestamp":"2024-01-01T00:00:00.000Z"}` + "\n42\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := upgradeFile(path); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Fatalf("Upgrade: %v, want a refusal", err)
	}
	if got := string(sessiontest.ReadFile(t, path)); got != data {
		t.Error("the file changed")
	}
	if _, err := os.Stat(path + ".v1.bak"); !errors.Is(err, os.ErrNotExist) {
		t.Error("a failed upgrade left its backup behind")
	}
}

// TestConcurrentWriters appends thousands of lines the way pi does (open with
// O_APPEND, one write, close) while Label and Rewind run in a loop, and checks
// that every line parses and every line either side wrote is there exactly once.
func TestConcurrentWriters(t *testing.T) {
	path := sessiontest.CopyFixture(t, "basic.jsonl")
	s := readtest.LoadFile(t, path)
	const lines = 3000
	done := make(chan error, 1)
	go func() {
		for k := range lines {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				done <- err
				return
			}
			line := fmt.Sprintf(`{"type":"custom","customType":"stress","data":{"n":%d,"pad":%q},"id":"stress-%06d","parentId":null,"timestamp":%q}`+"\n",
				k, strings.Repeat("x", k%300), k, time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
			_, err = f.WriteString(line)
			f.Close()
			if err != nil {
				done <- err
				return
			}
			time.Sleep(20 * time.Microsecond) // pace it so piweb's writes land in between
		}
		done <- nil
	}()

	var ours []string
	busy := 0
	running := true
	for k := 0; running || k < 40; k++ {
		if running {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
				running = false
			default:
			}
		}
		var id string
		var err error
		if k%2 == 0 {
			id, err = label(s, "a4000004", fmt.Sprintf("L%d", k))
		} else {
			id, err = rewind(s, "a5000005", "", Guard{})
		}
		if errors.Is(err, sessions.ErrBusy) {
			busy++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ours = append(ours, id)
	}

	data := sessiontest.ReadFile(t, path)
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Error("the file does not end with a newline")
	}
	seen := map[string]int{}
	interleaved, stressSeen, fresh := 0, 0, 0
	prev := ""
	for k, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if !json.Valid(line) {
			t.Fatalf("line %d is not JSON: %.200s", k+1, line)
		}
		o := mustParse(t, line)
		id := js.Str(o.Val("id"))
		seen[id]++
		if strings.HasPrefix(id, "stress-") {
			stressSeen++
		} else if stressSeen > 0 && stressSeen < lines {
			interleaved++
			// Written from a fresh reading, the line names the entry just before it as the
			// previous leaf (a label's parent, a rewind's fromId).
			from := o.Val("parentId")
			if js.Str(o.Val("type")) == sessions.TypeCustom {
				from, _ = js.Lookup(o.Val("data"), "fromId")
			}
			if js.Str(from) == prev {
				fresh++
			}
		}
		prev = id
	}
	for k := range lines {
		if id := fmt.Sprintf("stress-%06d", k); seen[id] != 1 {
			t.Errorf("%s appears %d times", id, seen[id])
		}
	}
	if len(ours) == 0 {
		t.Fatal("no Label or Rewind succeeded")
	}
	for _, id := range ours {
		if seen[id] != 1 {
			t.Errorf("our entry %s appears %d times", id, seen[id])
		}
	}
	if interleaved == 0 {
		t.Error("no piweb write landed between the other writer's lines: the test did not exercise concurrency")
	}
	// The check-then-append leaves only the microseconds between fstat and write(2) for a
	// concurrent append to slip in; a reading that was not refreshed would be wrong nearly always.
	if fresh*2 < interleaved {
		t.Errorf("only %d of %d interleaved writes named the line before them as the previous leaf", fresh, interleaved)
	}
	n := readtest.LoadFile(t, path)
	for _, d := range n.Diags {
		if d.Kind == sessions.DiagMalformed || d.Kind == sessions.DiagUnterminated || d.Kind == sessions.DiagDuplicateID {
			t.Errorf("diagnostic: %v", d)
		}
	}
	t.Logf("%d writes by piweb (%d between the other writer's lines, %d of them naming the line before), %d busy",
		len(ours), interleaved, fresh, busy)
}

func TestNewEntryID(t *testing.T) {
	taken := map[string]int{}
	for range 2000 {
		id := sessions.NewEntryID(func(id string) bool { _, ok := taken[id]; return ok })
		if !entryIDRe.MatchString(id) {
			t.Fatalf("id %q", id)
		}
		if _, dup := taken[id]; dup {
			t.Fatalf("duplicate id %q", id)
		}
		taken[id] = 0
	}
	if ts := js.NowISO(); !isoRe.MatchString(ts) {
		t.Errorf("isoNow %q", ts)
	}
	if got := string(js.Quote(`a<b>&"c"`)); got != `"a<b>&\"c\""` {
		t.Errorf("jsonStr escapes like Go's HTML-safe encoder: %s", got)
	}
}
