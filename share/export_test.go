package share

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// Secrets planted in the fixture basic.jsonl (internal/sessiontest/testdata/write), by where they sit.
var (
	plainSecrets = []string{ // in user, assistant and tool-call text
		"abcdefghijklmnopqrstuvwxyz123456",                  // Bearer token in a tool call
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0",  // JWT in assistant text
		"sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", // in a user message
		"abcd1234efgh", // API_KEY= in a bash command
		"ghp_0123456789abcdefghijABCDEFGHIJ012345", // in the last assistant message
	}
	toolSecrets = []string{ // in tool output
		"MIIEowIBAAKCAQEAx1y2z3", // PEM body in a tool result
		"hunter22",               // password= in bash output
		"s3cr3tpass",             // YAML password in a tool result
		"opensesame99",           // secret= in a tool result
		"zzzz9999yyyy",           // token= in a context edit of a tool result
	}
	thinkingTexts = []string{"The user wants a project", "Need to read config", "EqQBCkYIBxgCKkBsecretsignature"}
	imageData     = "/AKIAABCDEFGHIJKLMNOP/"
	// thinkingSignature is the provider's encrypted reasoning in the fixture: a share with secrets redacted drops it.
	thinkingSignature = thinkingTexts[2]
)

func TestExport(t *testing.T) {
	path := sessiontest.CopyFixture(t, "basic.jsonl")
	s := readtest.LoadFile(t, path)
	for _, leaf := range []string{"", "a8000008", "e2000002", "a3000003"} {
		t.Run("at "+leaf, func(t *testing.T) {
			data, err := Export(s, leaf, Redact{})
			if err != nil {
				t.Fatal(err)
			}
			e, err := readtest.Parse(t, data, "export")
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range e.Diags {
				t.Errorf("diagnostic: %v", d)
			}
			head := data[:bytes.IndexByte(data, '\n')]
			if got, want := readtest.Keys(t, head), []string{"type", "version", "id", "timestamp", "cwd"}; !reflect.DeepEqual(got, want) {
				t.Errorf("header keys %v, want %v (no parentSession)", got, want)
			}
			if e.Header.ID != s.Header.ID || e.Header.Version != 3 || e.Header.Cwd != s.Header.Cwd {
				t.Errorf("header %+v: want the session's own id and folder (pi's /import keeps both)", e.Header)
			}
			at := s.Leaf()
			if leaf != "" {
				at = readtest.MustLookup(t, s, leaf)
			}
			if got, want := readtest.ContextAt(t, e, e.Leaf()), readtest.ContextAt(t, s, at); !reflect.DeepEqual(got, want) {
				t.Errorf("context:\n got %v\nwant %v", got, want)
			}
			// The path's entries, labels in place, each line as written but
			// for its parentId: the one before it.
			path := s.Path(at)
			if len(e.Entries) != len(path) {
				t.Fatalf("%d entries, want the path's %d", len(e.Entries), len(path))
			}
			prev := json.RawMessage("null")
			for k, i := range path {
				orig, _ := s.Raw(i)
				raw, _ := e.Raw(k)
				if want := js.SetMember(orig, "parentId", prev); !bytes.Equal(raw, want) {
					t.Errorf("entry %d:\n%s\nwant\n%s", k, raw, want)
				}
				prev = js.Quote(s.Entries[i].ID)
			}
			if s.OnPath(at)[readtest.MustLookup(t, s, "a5000005")] && !bytes.Contains(data, []byte(imageData)) {
				t.Error("image data changed")
			}
		})
	}
	if _, err := Export(s, "nope", Redact{}); !errors.Is(err, sessions.ErrNoEntry) {
		t.Errorf("Export at a missing entry: %v, want ErrNoEntry", err)
	}
}

func TestExportRedact(t *testing.T) {
	s := readtest.LoadFile(t, sessiontest.CopyFixture(t, "basic.jsonl"))
	plain, err := Export(s, "", Redact{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := readtest.Parse(t, plain, "plain")
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range append(append(append([]string{}, plainSecrets...), toolSecrets...), thinkingTexts...) {
		if !bytes.Contains(plain, []byte(secret)) {
			t.Fatalf("fixture lost %q: the checks below would prove nothing", secret)
		}
	}

	tests := []struct {
		name           string
		opts           Redact
		gone, kept     []string
		placeholders   []string
		toolResultText string // text of the tool results' content, "" to not check
	}{
		{
			name: "secrets", opts: Redact{Secrets: true},
			gone:         append(append([]string{}, plainSecrets...), append(toolSecrets, thinkingSignature, "thinkingSignature")...),
			kept:         append(append([]string{}, thinkingTexts[:2]...), imageData, "/tmp/pi-out-1.txt"),
			placeholders: []string{Redacted},
		},
		{
			name: "thinking", opts: Redact{Thinking: true},
			gone:         append(append([]string{}, thinkingTexts...), "thinkingSignature"),
			kept:         append(append([]string{}, plainSecrets...), toolSecrets...),
			placeholders: []string{RedactedThinking},
		},
		{
			name: "tool output", opts: Redact{ToolOutput: true},
			gone:           append(append([]string{}, toolSecrets...), "/tmp/pi-out-1.txt", "/tmp/pi-bash-1.txt"),
			kept:           append(append([]string{}, plainSecrets...), thinkingTexts...),
			placeholders:   []string{RedactedToolOutput},
			toolResultText: RedactedToolOutput,
		},
		{
			name: "everything", opts: Redact{Secrets: true, Thinking: true, ToolOutput: true},
			gone:           append(append(append([]string{}, plainSecrets...), toolSecrets...), append(thinkingTexts, "thinkingSignature")...),
			kept:           []string{imageData, "demo session"},
			placeholders:   []string{Redacted, RedactedThinking, RedactedToolOutput},
			toolResultText: RedactedToolOutput,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Export(s, "", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range tt.gone {
				if bytes.Contains(data, []byte(g)) {
					t.Errorf("still holds %q", g)
				}
			}
			for _, k := range tt.kept {
				if !bytes.Contains(data, []byte(k)) {
					t.Errorf("lost %q", k)
				}
			}
			for _, p := range tt.placeholders {
				if !bytes.Contains(data, []byte(p)) {
					t.Errorf("no %q placeholder", p)
				}
			}
			for k, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				if !json.Valid(line) {
					t.Fatalf("line %d is not JSON: %s", k+1, line)
				}
			}
			e, err := readtest.Parse(t, data, "redacted")
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range e.Diags {
				t.Errorf("diagnostic: %v", d)
			}
			// Same tree and leaf: the same entries with the same links, types and roles.
			if len(e.Entries) != len(ref.Entries) {
				t.Fatalf("%d entries, want %d", len(e.Entries), len(ref.Entries))
			}
			for i := range ref.Entries {
				a, b := e.Entries[i], ref.Entries[i]
				if a.Type == sessions.TypeLabel { // label ids are new in every export
					if a.Target != b.Target || (i > 0 && a.ParentID != e.Entries[i-1].ID) {
						t.Errorf("label entry %d: %+v, want target %s", i, a, b.Target)
					}
					continue
				}
				if a.ID != b.ID || a.ParentID != b.ParentID || a.Type != b.Type || a.Role != b.Role || a.FirstKept() != b.FirstKept() || a.Target != b.Target {
					t.Errorf("entry %d: %+v, want %+v", i, a, b)
				}
			}
			if e.Name() != ref.Name() {
				t.Errorf("name %q, want %q", e.Name(), ref.Name())
			}
			cr, _ := readtest.Context(ref, ref.Leaf())
			ce, err := readtest.Context(e, e.Leaf())
			if err != nil {
				t.Fatal(err)
			}
			if len(ce.Messages) != len(cr.Messages) {
				t.Errorf("%d context messages, want %d", len(ce.Messages), len(cr.Messages))
			}
			if tt.toolResultText != "" {
				for _, m := range ce.Messages {
					var msg struct {
						Role    string          `json:"role"`
						Content json.RawMessage `json:"content"`
						Details json.RawMessage `json:"details"`
					}
					if err := json.Unmarshal(m, &msg); err != nil {
						t.Fatal(err)
					}
					if msg.Role != "toolResult" {
						continue
					}
					var blocks []struct {
						Text string `json:"text"`
					}
					if err := json.Unmarshal(msg.Content, &blocks); err != nil || len(blocks) != 1 || blocks[0].Text != tt.toolResultText || msg.Details != nil {
						t.Errorf("tool result in context: %s", m)
					}
				}
			}
		})
	}
}

func TestBranchForRenderers(t *testing.T) {
	s := readtest.LoadFile(t, sessiontest.CopyFixture(t, "basic.jsonl"))
	b, err := Branch(s, "e2000002", Redact{Secrets: true})
	if err != nil {
		t.Fatal(err)
	}
	if b.Leaf != "e2000002" || b.Name != "" {
		t.Errorf("leaf %q name %q", b.Leaf, b.Name)
	}
	var roles []string
	for _, e := range b.Entries {
		if e.Type == sessions.TypeMessage {
			roles = append(roles, e.Role)
		}
		var v map[string]any
		if err := json.Unmarshal(e.JSON, &v); err != nil || v["id"] != e.ID {
			t.Errorf("entry %s JSON %s", e.ID, e.JSON)
		}
	}
	if want := []string{"user", "assistant", "toolResult", "assistant", "user", "assistant"}; !reflect.DeepEqual(roles, want) {
		t.Errorf("roles %v, want %v", roles, want)
	}
	if b.Entries[2].Label != "start2" || b.Entries[3].Label != "again" || b.Entries[6].Label != "alt" {
		t.Errorf("labels not attached: %+v", b.Entries)
	}
	bs, err := readtest.Parse(t, b.JSONL(), b.ID+".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if bs.Header.ID != b.ID || bs.Entries[bs.Leaf()].Type != sessions.TypeLabel {
		t.Errorf("Session(): header %+v", bs.Header)
	}
	if got, want := readtest.ContextAt(t, bs, bs.Leaf()), readtest.ContextAt(t, s, readtest.MustLookup(t, s, "e2000002")); reflect.DeepEqual(got, want) {
		t.Error("redacted context equals the original: the Bearer token was not removed")
	} else if strings.Contains(string(mustJSON(t, got)), "abcdefghijklmnopqrstuvwxyz123456") {
		t.Error("redacted context still holds the Bearer token")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExportMatchesPi compares the JSONL share with what pi's own /export
// file.jsonl writes for the same branch: line for line the same values
// (pi re-serialises each entry; the header's time is the export's).
func TestExportMatchesPi(t *testing.T) {
	pi := oracle.AfterWrite(t)
	for _, f := range []string{"basic.jsonl", "v2.jsonl"} {
		path := sessiontest.CopyFixture(t, f)
		s := readtest.LoadFile(t, path)
		for _, leaf := range []string{"", s.Entries[len(s.Entries)/2].ID} {
			data, err := Export(s, leaf, Redact{})
			if err != nil {
				t.Fatal(err)
			}
			r := pi(path, "--export", leaf)
			if r.Export == nil {
				t.Fatal("pi exported nothing")
			}
			ours, theirs := readtest.SplitLines(data), readtest.SplitLines([]byte(*r.Export))
			if len(ours) != len(theirs) {
				t.Fatalf("%s at %q: %d lines, pi's export has %d", f, leaf, len(ours), len(theirs))
			}
			for k := range ours {
				a, b := readtest.Decoded(t, ours[k]), readtest.Decoded(t, theirs[k])
				if k == 0 {
					delete(a.(map[string]any), "timestamp")
					delete(b.(map[string]any), "timestamp")
				}
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%s at %q, line %d:\n got %s\nwant %s", f, leaf, k+1, ours[k], theirs[k])
				}
			}
		}
	}
}

// TestWhole: the whole-session share keeps every entry with its own
// parent, the same tree and leaf, and redacts what it is asked to.
func TestWhole(t *testing.T) {
	s := readtest.LoadFile(t, sessiontest.CopyFixture(t, "basic.jsonl"))
	b, err := Whole(s, Redact{Secrets: true})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := readtest.Parse(t, b.JSONL(), b.ID+".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs.Entries) != len(s.Entries) || bs.Header.ID != s.Header.ID {
		t.Fatalf("%d entries (want %d), id %q", len(bs.Entries), len(s.Entries), bs.Header.ID)
	}
	for i := range s.Entries {
		a, w := &bs.Entries[i], &s.Entries[i]
		if a.ID != w.ID || a.ParentID != w.ParentID || a.Type != w.Type {
			t.Errorf("entry %d: %s<-%s %s, want %s<-%s %s", i, a.ID, a.ParentID, a.Type, w.ID, w.ParentID, w.Type)
		}
	}
	if bs.Leaf() != s.Leaf() || b.Leaf != s.Entries[s.Leaf()].ID {
		t.Errorf("leaf %d (%s), want %d", bs.Leaf(), b.Leaf, s.Leaf())
	}
	if strings.Contains(string(b.JSONL()), "abcdefghijklmnopqrstuvwxyz123456") {
		t.Error("the whole share still holds the Bearer token")
	}
	if plain, err := Whole(s, Redact{}); err != nil || len(plain.Secrets()) == 0 {
		t.Errorf("Secrets() of the unredacted layout finds nothing (%v)", err)
	}
}

// TestWholeTo: WholeTo writes the lines Whole lays out (the header's time
// aside), keeps none of them, and stops at the first failed write.
func TestWholeTo(t *testing.T) {
	for _, name := range []string{"basic.jsonl", "v2.jsonl", "unterminated.jsonl"} {
		s := readtest.LoadFile(t, sessiontest.CopyFixture(t, name))
		for _, opts := range []Redact{{}, {Secrets: true}, {Secrets: true, Thinking: true, ToolOutput: true}} {
			b, err := Whole(s, opts)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			bt, err := WholeTo(&out, s, opts)
			if err != nil {
				t.Fatal(err)
			}
			_, want, _ := bytes.Cut(b.JSONL(), []byte("\n"))
			head, got, _ := bytes.Cut(out.Bytes(), []byte("\n"))
			if !bytes.Equal(got, want) {
				t.Errorf("%s %+v: WholeTo wrote\n%s\nwant\n%s", name, opts, got, want)
			}
			if !bytes.Equal(head, bt.Header) || bt.ID != b.ID || bt.Leaf != b.Leaf || bt.Name != b.Name || bt.Entries != nil {
				t.Errorf("%s %+v: WholeTo's branch %+v, want %+v without entries", name, opts, bt, b)
			}
		}
		if _, err := WholeTo(failWriter{}, s, Redact{}); err == nil {
			t.Errorf("%s: WholeTo to a failing writer succeeded", name)
		}
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// Export returns the branch to entry leafID ("" for pi's leaf) as pi's own
// /export file.jsonl writes it, redacted as opts asks: a header with the
// session's id and folder and the time of the export, then the entries of
// the path from the root, labels included, each re-chained to the one
// before it. pi's /import takes the file as the same session.
func Export(s *sessions.Session, leafID string, opts Redact) ([]byte, error) {
	var b bytes.Buffer
	if err := ExportTo(&b, s, leafID, opts); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// TestBranchToWritesTheBranch: BranchTo writes exactly the lines Branch
// keeps (ids aside: each makes a new session id and time).
func TestBranchToWritesTheBranch(t *testing.T) {
	s, err := readtest.Parse(t, []byte(sessiontest.String(11, 400, sessiontest.Options{})), "b.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	kept, err := Branch(s, "", Redact{Secrets: true})
	if err != nil {
		t.Fatal(err)
	}
	var w strings.Builder
	written, err := BranchTo(&w, s, "", Redact{Secrets: true})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	want := strings.Split(strings.TrimSuffix(string(kept.JSONL()), "\n"), "\n")
	if len(lines) != len(want) || len(written.Entries) != len(kept.Entries) || written.Leaf != kept.Leaf {
		t.Fatalf("%d lines written, %d kept", len(lines), len(want))
	}
	for k := 1; k < len(lines); k++ { // the header's id and time differ
		if lines[k] != want[k] && !strings.Contains(want[k], `"type":"label"`) {
			t.Fatalf("line %d differs:\n%s\n%s", k, lines[k], want[k])
		}
	}
	for _, e := range written.Entries {
		if e.JSON != nil {
			t.Fatal("BranchTo kept a line")
		}
	}
}
