package sessions

import (
	"fmt"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/js"
)

// TestMessageReadInOnePass checks that what the index reads of a message in
// the same pass as its line (role, model, usage, whether it has text) is
// what reading the message apart gives, for content and keys in every form.
func TestMessageReadInOnePass(t *testing.T) {
	msgs := []string{
		`{"role":"assistant","content":[{"type":"thinking","thinking":"a \"quoted\" thought"},{"type":"text","text":"hi"}],"provider":"p","model":"m","usage":{"totalTokens":7,"cost":{"total":0.5}},"stopReason":"stop"}`,
		`{"role":"assistant","content":[{"type":"text","text":"  \n"}]}`,
		`{"role":"assistant","content":[{"type":"toolCall","name":"bash","arguments":{"text":"x"}}],"stopReason":"toolUse"}`,
		`{"role":"assistant","content":[{"type":"t\u0065xt","text":"escaped type"}]}`,
		`{"role":"assistant","content":[{"typ\u0065":"text","t\u0065xt":"escaped keys"}]}`,
		`{"role":"assistant","content":"a plain string"}`,
		`{"role":"assistant","content":[{"type":"text","text":"first"}],"content":[{"type":"text","text":""}]}`,
		`{"role":"assistant","content":[{"type":"text","text":""}],"content":"second wins"}`,
		`{"role":"assistant","cont\u0065nt":[{"type":"text","text":"escaped content key"}]}`,
		`{"role":"assistant","content":[[{"type":"text","text":"nested array"}],5,null,{"type":"text","text":5}]}`,
		`{"role":"assistant","content":[{"type":"text","type":"image","text":"last type wins"}]}`,
		`{"role":"user","content":[{"type":"text","text":"user"}]}`,
		`{"role":"assistant","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"input":0.1,"total":0.25}}}`,
		`{"role":"assistant","usage":{"totalTokens":9,"cost":null}}`,
		`{"role":"assistant","usage":{"totalTokens":9,"cost":"free"}}`,
		`{"role":"assistant","usage":{"totalTokens":9,"cost":{"total":1},"cost":null}}`,
		`{"role":"assistant","usage":{"totalTokens":9,"cost":null,"cost":{"total":2.5}}}`,
		`{"role":"assistant","usage":{"totalTokens":9,"c\u006fst":{"total":3}}}`,
		`{"role":"assistant","usage":{"totalTokens":"9","cost":{"total":3}}}`,
		`{"role":"assistant","usage":{"totalTokens":9,"cost":{"total":"3"}}}`,
		`{"role":"assistant","usage":{"totalTokens":9},"usage":{"totalTokens":11}}`,
		`{"role":"assistant","usage":{"totalTokens":9},"usage":null}`,
		`{"role":"assistant","us\u0061ge":{"totalTokens":12,"cost":{"total":1e-3}}}`,
		`{"role":"assistant","usage":{"totalTokens":123456789012345678,"cost":{"total":-0.000001}}}`,
		`{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"toolC\u0061ll","id":"c1","name":"read","arguments":{}}]}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c2"}],"content":[{"type":"text","text":"later content holds none"}]}`,
		`{"role":"user","content":[{"type":"toolCall","id":"c3"}]}`,
		`{"role":"assistant","content":[{"type":"toolCall","type":"text","text":"last type wins"}]}`,
		`{"role":"assistant","cont\u0065nt":[{"type":"toolCall","id":"c4","name":"bash","arguments":{}}]}`,
		`{"role":"assistant","content":[["toolCall"],{"type":"toolCall","id":"c5"}]}`,
	}
	var lines []string
	lines = append(lines, `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`)
	for i, m := range msgs {
		lines = append(lines, fmt.Sprintf(`{"type":"message","id":"e%d","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":%s}`, i, m))
	}
	// Two message members: the second is the message, as in JSON.parse.
	lines = append(lines, `{"type":"message","id":"d1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"gone"}]},"message":{"role":"assistant","content":[]}}`,
		`{"type":"message","id":"d2","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[]},"mess\u0061ge":{"role":"assistant","content":[{"type":"text","text":"kept"}]}}`)
	s, err := tParseBytes(t, []byte(strings.Join(lines, "\n")+"\n"), "one-pass.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Entries) != len(lines)-1 {
		t.Fatalf("%d entries, want %d: %v", len(s.Entries), len(lines)-1, s.Diags)
	}
	for i := range s.Entries {
		got := s.Entries[i]
		var r rawEntry // read apart: members of the line, then of its message
		if _, err := js.EachMember([]byte(lines[i+1]), 0, r.set); err != nil {
			t.Fatal(err)
		}
		var want Entry
		want.fill(&r, interner{}, &idArena{})
		if got.Role != want.Role || got.Text != want.Text || got.Tokens != want.Tokens || got.Cost != want.Cost || got.Flags != want.Flags {
			t.Errorf("line %d: read in one pass %+v, apart %+v", i+2, got, want)
		}
	}
	want := map[string]bool{"e0": true, "e1": false, "e2": false, "e3": true, "e4": true, "e5": true, "e6": false, "e7": true, "e8": true, "e9": false, "e10": false, "d1": false, "d2": true}
	for id, text := range want {
		if i, ok := s.Lookup(id); !ok || s.Entries[i].Flags.Has(FlagText) != text {
			t.Errorf("%s: FlagText %v, want %v", id, ok && s.Entries[i].Flags.Has(FlagText), text)
		}
	}
	calls := map[string]bool{"e0": false, "e2": true, "e24": true, "e25": false, "e26": false, "e27": false, "e28": true, "e29": true}
	for id, call := range calls {
		i, ok := s.Lookup(id)
		if !ok || s.Entries[i].Flags.Has(FlagToolCall) != call {
			t.Errorf("%s: FlagToolCall %v, want %v", id, ok && s.Entries[i].Flags.Has(FlagToolCall), call)
		}
		if line, err := s.Raw(i); err != nil || (len(ToolCallsOf(line)) > 0) != call && s.Entries[i].Role == RoleAssistant {
			t.Errorf("%s: ToolCallsOf disagrees with FlagToolCall %v (%v)", id, call, err)
		}
	}
}
