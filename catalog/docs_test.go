package catalog

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// oddLines are entries whose strings hold every kind of escape, invalid
// UTF-8, lone surrogates, control characters and non-string values
// where strings belong.
var oddLines = []string{
	`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"a\nb\t\"c\" \\ \/ \u00e9 \ud83d\ude00 \ud83d x \ude00 \u0000 \b\f\r end"}}`,
	"{\"type\":\"message\",\"id\":\"u2\",\"parentId\":\"u1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"bad \xff\xfe utf8 \\n\"},{\"type\":\"image\",\"data\":\"AAAA\"},{\"type\":\"text\",\"text\":\"second \xe6\x97 block\"}]}}",
	`{"type":"message","id":"a1","parentId":"u2","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm\u2028"},{"type":"text","text":42},{"type":"toolCall","id":"t","name":"bash","arguments":{"command":"ls -la\n","n":3,"o":{"x":"y"},"command":"again","s":"\ud800"}},{"type":"text","text":"  "}],"errorMessage":"boom \"quoted\""}}`,
	`{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolName":"b\u0061sh","content":[{"type":"text","text":"out\r\n"}]}}`,
	`{"type":"message","id":"b1","parentId":"r1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"bashExecution","command":"echo \"hi\"","output":"hi\n"}}`,
	`{"type":"message","id":"c1","parentId":"b1","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"custom","customType":"note","content":"text"}}`,
	`{"type":"message","id":"c2","parentId":"c1","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"custom","customType":null,"content":7}}`,
	`{"type":"custom_message","id":"m1","parentId":"c2","timestamp":"2026-01-01T00:00:07.000Z","customType":"x\ty","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
	`{"type":"compaction","id":"k1","parentId":"m1","timestamp":"2026-01-01T00:00:08.000Z","summary":"sum\u00e9","firstKeptEntryId":"u1","tokensBefore":1}`,
	`{"type":"branch_summary","id":"k2","parentId":"k1","timestamp":"2026-01-01T00:00:09.000Z","summary":"branch \\\\ sum","fromId":"u1"}`,
	`{"type":"message","id":"s1","parentId":"k2","timestamp":"2026-01-01T00:00:10.000Z","message":{"role":"branchSummary","summary":"s\u0301"}}`,
	`{"type":"message","id":"x1","parentId":"s1","timestamp":"2026-01-01T00:00:11.000Z","message":{"role":"weird","content":"other role"}}`,
	`{"type":"label","id":"l1","parentId":"x1","timestamp":"2026-01-01T00:00:12.000Z","targetId":"u1","label":"todo \ud83d"}`,
	`{"type":"session_info","id":"n1","parentId":"l1","timestamp":"2026-01-01T00:00:13.000Z","name":"name \u00e9"}`,
	"{\"type\":\"message\",\"id\":\"a2\",\"parentId\":\"mc0\",\"timestamp\":\"2026-01-01T00:00:15.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\xc3\"},{\"type\":\"text\",\"text\":\"a\\n\xf0\x9f\x98\"},{\"type\":\"toolCall\",\"id\":\"t\",\"name\":\"b\xffsh\",\"arguments\":{\"k\xfe\":\"v\xff\\t\",\"n\":[\"\xe2\x82\",1],\"o\":{\"\xff\":\"\xc0\xaf\"}}}],\"errorMessage\":\"e\xed\xa0\x80\"}}",
	"{\"type\":\"message\",\"id\":\"b2\",\"parentId\":\"a2\",\"timestamp\":\"2026-01-01T00:00:16.000Z\",\"message\":{\"role\":\"bashExecution\",\"command\":\"ls \xff\",\"output\":\"\xf4\x90\x80\x80 \\u00e9\"}}",
	"{\"type\":\"message\",\"id\":\"r2\",\"parentId\":\"b2\",\"timestamp\":\"2026-01-01T00:00:17.000Z\",\"message\":{\"role\":\"toolResult\",\"toolName\":\"\xffx\",\"content\":\"plain \xff\xff \\\"q\\\"\"}}",
	"{\"type\":\"message\",\"id\":\"a3\",\"parentId\":\"r2\",\"timestamp\":\"2026-01-01T00:00:18.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"t\",\"name\":\"x\",\"arguments\":{\"k\\u0041\xe6\x97\":\"escaped key, cut rune\"}}]}}",
	`{"type":"message","id":"d1","parentId":"a3","timestamp":"2026-01-01T00:00:19.000Z","message":{"role":"user","content":"first"},"message":{"role":"assistant","content":[{"type":"text","text":"second"}],"errorMessage":"e"}}`,
	`{"type":"message","id":"d2","parentId":"d1","timestamp":"2026-01-01T00:00:20.000Z","message":{"role":"assistant","content":[{"type":"text","text":"a"}],"content":[1,"x",{"type":"text","text":"b"},null,{"type":"thinking","thinking":"c","thinking":"c2"},[{"type":"text","text":"nested"}]]}}`,
	`{"type":"message","id":"d3","parentId":"d2","timestamp":"2026-01-01T00:00:21.000Z","m\u0065ssage":{"r\u006fle":"user","c\u006fntent":[{"t\u0079pe":"text","t\u0065xt":"escaped keys"}]}}`,
	`{"type":"message","id":"d4","parentId":"d3","timestamp":"2026-01-01T00:00:22.000Z","message":"not an object"}`,
	`{"type":"message","id":"d5","parentId":"d4","timestamp":"2026-01-01T00:00:23.000Z","message":{"role":"toolResult","toolName":"t","content":[]} , "content" : [ {"type":"text","text":"top"} ] }`,
	`{"type":"custom_message","id":"d6","parentId":"d5","timestamp":"2026-01-01T00:00:24.000Z","customType":"c","content":[{"type":"text","text":"x"}],"content":"replaced"}`,
	`{ "type" : "message" , "id" : "d7" , "parentId" : "d6" , "timestamp" : "2026-01-01T00:00:25.000Z" , "message" : { "role" : "assistant" , "content" : [ { "type" : "text" , "text" : "spaced" } , { } ] } }`,
	`{"type":"message","id":"d8","parentId":"d7","timestamp":"2026-01-01T00:00:26.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"edit","arguments":{"path":"a.go","p\u0061th":"b.go","x":null,"y":[1,{"z":"w"}],"path":"c.go","k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k1":"again"}}]}}`,
	`{"type":"message","id":"o1","parentId":"d8","timestamp":"2026-01-01T00:00:27.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"n\u0061me","arguments":{ "p\u0061th" : "x\ty" , "n":[1, 2],"o":{"a":"b\"}"},"e":"","u":"\ud83d\ude00","z":null}},{"type":"toolCall","arguments":{"a":"1"},"name":"after"},{"type":"toolCall","name":"twice","arguments":{"a":"1"},"arguments":{"b":"2"}},{"type":"toolCall","name":7,"arguments":{}},{"type":"toolCall","name":"x","arguments":"no object"}]}}`,
	`{"type":"message","id":"o2","parentId":"o1","timestamp":"2026-01-01T00:00:28.000Z","message":{"role":"bashExecution","output":"out\n","command":"cmd"}}`,
	`{"type":"message","id":"o3","parentId":"o2","timestamp":"2026-01-01T00:00:29.000Z","message":{"role":"toolResult","content":[{"type":"text","text":"first"}],"toolName":"after"}}`,
	`{"type":"message","id":"o4","parentId":"o3","timestamp":"2026-01-01T00:00:30.000Z","message":{"role":"toolResult","toolName":"t","content":"a string\n"}}`,
	`{"type":"message","id":"o5","parentId":"o4","timestamp":"2026-01-01T00:00:31.000Z","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"AAAA"},{"text":"b","type":"text"},{"type":"text","text":"c"},{"type":"thinking","thinking":"no"},{"type":"text","text":"d"}]}}`,
	`{"type":"custom_message","id":"o6","parentId":"o5","timestamp":"2026-01-01T00:00:32.000Z","content":[{"type":"text","text":"x"}],"customType":"late"}`,
	`{"type":"message","id":"o7","parentId":"o6","timestamp":"2026-01-01T00:00:33.000Z","message":{"role":"bashExecution","command":null,"output":5}}`,
	`{"type":"message","id":"o8","parentId":"o7","timestamp":"2026-01-01T00:00:34.000Z","message":{"role":"toolResult","toolName":"t","content":[{"type":"image","data":"AAAA"}]}}`,
	`{"type":"message","id":"o9","parentId":"o8","timestamp":"2026-01-01T00:00:35.000Z","message":{"role":"assistant","content":"just a string \"q\""}}`,
	`{"type":"model_change","id":"mc","parentId":"n1","timestamp":"2026-01-01T00:00:14.000Z","provider":"p","modelId":"m-1"}`,
	" \t {\"type\":\"message\",\"id\":\"w1\",\"parentId\":\"o9\",\"timestamp\":\"2026-01-01T00:00:36.000Z\",\"message\":{\"role\":\"user\",\"content\":\"indented line\"}}",
}

// TestPieces: pieces (of the lines ReadLines gives) and buildPieces (of
// the lines as written, ReadLinesAsWritten, their texts then read as the
// store reads them) give what refPieces gives of the lines as pi reads
// them, on generated sessions,
// the damaged and odd sessions of the repository's test data, and odd lines.
func TestPieces(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for seed := range int64(6) {
		f := filepath.Join(dir, "gen", "s"+string(rune('a'+seed))+".jsonl")
		if _, err := sessiontest.WriteFile(f, seed, 300, sessiontest.Options{BigEvery: 50}); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	odd := filepath.Join(dir, "odd", "odd.jsonl")
	os.MkdirAll(filepath.Dir(odd), 0o755)
	head := `{"type":"session","version":3,"id":"019b86c9-df09-7266-a32a-5468b5cddefe","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`
	if err := os.WriteFile(odd, []byte(head+"\n"+strings.Join(oddLines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, odd)
	for _, pat := range []string{"../cmd/piweb/testdata/random/*.jsonl", "../sessions/testdata/*.jsonl", "../internal/sessiontest/testdata/write/*.jsonl", "../pitree/testdata/*.jsonl"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	n, pieceN, oddN := 0, 0, 0
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		s, err := sessions.Load(abs)
		if err != nil {
			continue // not a session: nothing to search
		}
		sessions.ReadLines(s, 0, func(pos int, e *sessions.Entry, line []byte) error {
			n++
			if f == odd {
				oddN++
			}
			got, want := pieces(e, line), refPieces(e, line)
			pieceN += len(got)
			if e.ID == "w1" && (len(got) != 1 || got[0].text != "indented line") {
				t.Errorf("a line that starts with white space (as JSON allows): pieces %+v", got)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:%d (%q): pieces\n%+v\nrefPieces\n%+v", f, pos, line, got, want)
			}
			return nil
		})
	}
	if oddN != len(oddLines) {
		t.Errorf("%d of the %d odd lines read", oddN, len(oddLines))
	}
	if n < 1000 || pieceN < 1000 {
		t.Fatalf("only %d entries, %d pieces compared", n, pieceN)
	}
	t.Logf("%d files, %d entries, %d pieces", len(files), n, pieceN)
}

// BenchmarkPieces: pieces over every tenth file of the bench tree
// (sessiontest.BenchTree), the lines read into memory first; SetBytes is
// the lines' size.
func BenchmarkPieces(b *testing.B) {
	_, files, _ := sessiontest.BenchTree(b)
	files = slices.Clone(files)
	slices.Sort(files)
	type entry struct {
		e    sessions.Entry
		line []byte
	}
	var sample []entry
	var size int64
	for k := 0; k < len(files); k += 10 {
		s, err := sessions.Load(files[k])
		if err != nil {
			b.Fatal(err)
		}
		sessions.ReadLines(s, 0, func(_ int, e *sessions.Entry, line []byte) error {
			sample = append(sample, entry{*e, bytes.Clone(line)})
			size += int64(len(line))
			return nil
		})
	}
	b.SetBytes(size)
	b.ReportAllocs()
	defer sessiontest.ReportCPU(b)()
	for b.Loop() {
		for k := range sample {
			pieces(&sample[k].e, sample[k].line)
		}
	}
}

// FuzzPieces: pieces of any line the library could have checked gives
// what refPieces gives, the entry's type and role read from the line.
func FuzzPieces(f *testing.F) {
	for _, l := range oddLines {
		f.Add([]byte(l))
	}
	for _, l := range strings.Split(sessiontest.String(1, 40, sessiontest.Options{}), "\n") {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		end, err := js.EachMember(line, 0, func(js.Member) {})
		if err != nil || js.SkipWS(line, end) != len(line) {
			return
		}
		e := &sessions.Entry{}
		typ, _ := js.Lookup(line, "type")
		e.Type = js.Str(typ)
		if msg, ok := js.Lookup(line, "message"); ok && msg[0] == '{' {
			role, _ := js.Lookup(msg, "role")
			e.Role = js.Str(role)
		}
		valid := js.ToValidUTF8(line)
		want := refPieces(e, valid)
		if got := pieces(e, valid); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: pieces\n%+v\nrefPieces\n%+v", line, got, want)
		}
	})
}
