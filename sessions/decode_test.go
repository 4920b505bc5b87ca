package sessions

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/piweb/piweb/internal/js"
)

// toolCallsFull is the reference for ToolCallsOf: the whole message
// decoded, its blocks filtered by type, with no look at the raw bytes first.
func toolCallsFull(line []byte) []Block {
	msg := js.ObjectOf(line).Val("message")
	var out []Block
	for _, b := range DecodeMessage(msg).Content.Blocks() {
		if b.Type == BlockToolCall && len(b.Raw) > 0 && b.Raw[0] == '{' {
			out = append(out, b)
		}
	}
	return out
}

// Lines whose tool calls are hidden from a plain look at the bytes, or
// that only seem to hold one.
var toolCallLines = []string{
	`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"edit","arguments":{"path":"a.go"}}]}}`,
	`{"type":"message","message":{"role":"assistant","content":[{"type":"tool\u0043all","id":"c1","name":"bash","arguments":{"command":"ls"}}]}}`,
	`{"type":"message","message":{"role":"assistant","content":[{"\u0074ype":"toolCall","id":"c2","name":"read"}]}}`,
	`{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"toolCall"},{"type":"toolCall","type":"text","text":"x"}]}}`,
	`{"type":"message","message":{"role":"assistant","content":[{"type":"text","type":"toolCall","name":"ls"}]}}`,
	`{"type":"message","message":{"role":"assistant","content":"a toolCall in a string"}}`,
	`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall"}]},"message":{"role":"assistant","content":[]}}`,
	`{"type":"message","message":{"role":"assistant","content":[]},"message":{"role":"assistant","content":[{"type":"toolCall","id":"late"}]}}`,
	`{"type":"message","message":{"role":"assistant","content":["toolCall",{"type":"toolCall","id":"c3"},7,null]}}`,
	`{"type":"message","message":{"role":"assistant","content":[{"type":"toolcall"},{"type":"ToolCall"},{"type":" toolCall"}]}}`,
	`{"type":"message","message":{"role":"assistant","\u0063ontent":[{"type":"toolCall","id":"c4"}]}}`,
	`{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"no call here"}]}}`,
	`{"type":"message","message":"toolCall"}`,
	`[1,2]`,
	`"toolCall"`,
}

func TestToolCallsOf(t *testing.T) {
	for _, l := range toolCallLines {
		line := []byte(l)
		want := toolCallsFull(line)
		if got := ToolCallsOf(line); !reflect.DeepEqual(got, want) {
			t.Errorf("ToolCallsOf(%s) = %+v, want %+v", l, got, want)
		}
		if len(want) > 0 && !mayHold(line, BlockToolCall) {
			t.Errorf("mayHold(%s) = false with %d tool calls", l, len(want))
		}
	}
	if n := len(ToolCallsOf([]byte(toolCallLines[1]))); n != 1 {
		t.Errorf("a type written with escapes: %d tool calls, want 1", n)
	}
}

// FuzzToolCalls checks that the look at the bytes before decoding never
// loses a tool call the full decode finds.
func FuzzToolCalls(f *testing.F) {
	for _, l := range toolCallLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !json.Valid(line) {
			return // lines are validated before they are decoded
		}
		want := toolCallsFull(line)
		if got := ToolCallsOf(line); !reflect.DeepEqual(got, want) {
			t.Fatalf("ToolCallsOf(%q) = %+v, want %+v", line, got, want)
		}
		if len(want) > 0 && !mayHold(line, BlockToolCall) {
			t.Fatalf("mayHold(%q) = false with tool calls", line)
		}
	})
}

func TestToolCallIDOf(t *testing.T) {
	for line, want := range map[string]string{
		`{"type":"message","message":{"role":"toolResult","toolCallId":"c1"}}`:                   "c1",
		`{"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolCallId":"c2"}}`: "c2",
		`{"type":"message","message":{"role":"toolResult","toolCall\u0049d":"c\u0031"}}`:         "c1",
		`{"type":"message","message":{"toolCallId":"old"},"message":{"role":"toolResult"}}`:      "",
		`{"type":"message","message":{"role":"toolResult","toolCallId":7}}`:                      "",
		`{"type":"message","toolCallId":"outside"}`:                                              "",
		`{"type":"message","message":{"role":"toolResult","details":{"toolCallId":"inside"}}}`:   "",
	} {
		if got := ToolCallIDOf([]byte(line)); got != want {
			t.Errorf("ToolCallIDOf(%s) = %q, want %q", line, got, want)
		}
		if full := DecodeMessage(js.ObjectOf([]byte(line)).Val("message")).ToolCallID; full != want {
			t.Errorf("DecodeMessage(%s).ToolCallID = %q, want %q", line, full, want)
		}
	}
}

func TestToolArgs(t *testing.T) {
	for _, c := range []struct {
		args  string
		want  ToolArgs
		text  string
		edits []Edit
	}{
		{args: `{"path":"a.go","content":"x\ny"}`, want: ToolArgs{Path: "a.go"}, text: "x\ny", edits: []Edit{{}}},
		{args: `{"file_path":"b.go","path":""}`, want: ToolArgs{Path: "b.go"}, edits: []Edit{{}}},
		{args: `{"path":"a.go","file_path":"b.go"}`, want: ToolArgs{Path: "a.go"}, edits: []Edit{{}}},
		{args: `{"path":1,"file_path":"b.go"}`, want: ToolArgs{Path: "b.go"}, edits: []Edit{{}}},
		{args: `{"path":"a","path":"b"}`, want: ToolArgs{Path: "b"}, edits: []Edit{{}}},
		{args: `{"command":"ls -l","pattern":"x"}`, want: ToolArgs{Command: "ls -l", Pattern: "x"}, edits: []Edit{{}}},
		{args: `{"offset":3,"limit":"4"}`, want: ToolArgs{Offset: json.RawMessage(`3`), Limit: json.RawMessage(`"4"`)}, edits: []Edit{{}}},
		{args: `{"path":"a","oldText":"o","newText":"n"}`, want: ToolArgs{Path: "a"}, edits: []Edit{{"o", "n"}}},
		{args: `{"path":"a","edits":[{"oldText":"o1","newText":"n1"},{"oldText":"o2"},3],"oldText":"x"}`, want: ToolArgs{Path: "a"},
			edits: []Edit{{"o1", "n1"}, {"o2", ""}, {}}},
		{args: `{"edits":null,"oldText":"x","newText":"y"}`, want: ToolArgs{}, edits: nil},
		{args: `"not an object"`, want: ToolArgs{}, edits: []Edit{{}}},
		{args: ``, want: ToolArgs{}, edits: []Edit{{}}},
	} {
		a := Block{Args: json.RawMessage(c.args)}.ToolArgs()
		if a.Path != c.want.Path || a.Command != c.want.Command || a.Pattern != c.want.Pattern ||
			string(a.Offset) != string(c.want.Offset) || string(a.Limit) != string(c.want.Limit) {
			t.Errorf("ToolArgs(%s) = %+v, want %+v", c.args, a, c.want)
		}
		if got := a.Content(); got != c.text {
			t.Errorf("ToolArgs(%s).Content() = %q, want %q", c.args, got, c.text)
		}
		if got := a.Edits(); !reflect.DeepEqual(got, c.edits) {
			t.Errorf("ToolArgs(%s).Edits() = %q, want %q", c.args, got, c.edits)
		}
	}
}

func TestArgPairs(t *testing.T) {
	got := Block{Args: json.RawMessage(`{"command":"a\tb","timeout":30,"x":null,"command":"c","o":{"k":1}}`)}.ArgPairs()
	want := []ArgPair{{"command", "c"}, {"timeout", "30"}, {"x", "null"}, {"o", `{"k":1}`}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ArgPairs = %q, want %q", got, want)
	}
}

func TestToolDetailsAndWithout(t *testing.T) {
	m := DecodeMessage([]byte(`{"role":"toolResult","toolCallId":"c","details":{"diff":"-a\n+b","patch":"@@","path":"f.go","n":1},"extra":[1]}`))
	d := m.ToolDetails()
	if d.Diff != "-a\n+b" || d.Patch != "@@" || d.Path != "f.go" {
		t.Errorf("ToolDetails = %+v", d)
	}
	for _, c := range []struct {
		got  json.RawMessage
		want string
	}{
		{d.Without("diff"), `{"patch":"@@","path":"f.go","n":1}`},
		{d.Without(), `{"diff":"-a\n+b","patch":"@@","path":"f.go","n":1}`},
		{d.Without("diff", "patch", "path", "n"), ``},
		{m.Without("role", "toolCallId", "details"), `{"extra":[1]}`},
		{DecodeMessage([]byte(`{"role":"system","content":"x"}`)).Without("role", "content", "timestamp"), ``},
		{DecodeMessage([]byte(`{"role":"toolResult","details":"text"}`)).ToolDetails().Without(), ``},
	} {
		if string(c.got) != c.want {
			t.Errorf("Without = %s, want %s", c.got, c.want)
		}
	}
	if d := DecodeMessage([]byte(`{"role":"toolResult","details":null}`)).ToolDetails(); !reflect.DeepEqual(d, ToolDetails{}) {
		t.Errorf("null details decode to something")
	}
}

func TestUsageWritten(t *testing.T) {
	for raw, want := range map[string][2]bool{
		`{"role":"assistant","usage":{"input":1}}`:   {true, true},
		`{"role":"assistant","usage":{"input":"1"}}`: {true, false},
		`{"role":"assistant","usage":null}`:          {true, false},
		`{"role":"assistant"}`:                       {false, false},
	} {
		m := DecodeMessage([]byte(raw))
		if m.UsageWritten != want[0] || m.HasUsage != want[1] {
			t.Errorf("%s: UsageWritten %v, HasUsage %v; want %v", raw, m.UsageWritten, m.HasUsage, want)
		}
	}
}

func TestUnsigned(t *testing.T) {
	c := NewContent(json.RawMessage(`[{"type":"thinking","thinking":"t","thinkingSignature":"s1"},{"type":"toolCall","id":"c9","name":"ls"},{"type":"text","text":"x","textSignature":"s2"}]`))
	want := `[{"type":"thinking","thinking":"t"},{"type":"toolCall","name":"ls"},{"type":"text","text":"x"},`
	if got := string(c.Unsigned()); got != want {
		t.Errorf("Unsigned = %s, want %s", got, want)
	}
	if got := string(NewContent(json.RawMessage(`"plain"`)).Unsigned()); got != `"plain"` {
		t.Errorf("Unsigned of a string = %s", got)
	}
}
