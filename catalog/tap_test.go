package catalog

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

const tapHeader = `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`

// tapCompare reads data as the library's first read does with a
// gatherer's tap, and checks each entry's pieces as the tap read them
// against buildPieces' and, as indexed, refPieces', and that the read takes and
// refuses the lines it does without a tap (the tap reads some strings in
// place of its scan); it returns how many entries the tap read.
func tapCompare(t *testing.T, data []byte) (tapped int) {
	t.Helper()
	bufs := &syncBufs{}
	g := bufs.gather(nil, "x.jsonl", "p")
	ar := &textArena{}
	defer func() {
		tapRead, terr := sessions.ParseBytesEach(data, "x.jsonl", func(int, *sessions.Entry, []byte) {}, &(&syncBufs{}).gather(nil, "x.jsonl", "p").tap)
		plain, perr := sessions.ParseBytesEach(data, "x.jsonl", func(int, *sessions.Entry, []byte) {}, nil)
		if (terr == nil) != (perr == nil) || terr == nil && (len(tapRead.Entries) != len(plain.Entries) || !reflect.DeepEqual(tapRead.Diags, plain.Diags)) {
			t.Fatalf("%q: read with a tap %v, %s; without %v, %s", data, terr, tapSummary(tapRead), perr, tapSummary(plain))
		}
	}()
	_, _ = sessions.ParseBytesEach(data, "x.jsonl", func(pos int, e *sessions.Entry, line []byte) {
		d, f, ok := g.tap.take(line)
		if !ok {
			if len(line) > 0 && line[0] == '{' {
				t.Fatalf("%q: not read by the tap", line)
			}
			return
		}
		tapped++
		got, more := d.ofEntry(e)
		if more {
			got = d.assemble(got, e, f)
		}
		g.bufs.ar.out = got
		d.line, d.buf = nil, nil
		got = append([]piece(nil), got...)
		for k := range got {
			got[k].text = string(js.ToValidUTF8([]byte(got[k].text)))
		}
		ar.reset()
		built := append([]piece(nil), buildPieces(ar, e, line)...)
		for k := range built {
			built[k].text = string(js.ToValidUTF8([]byte(built[k].text)))
		}
		if !reflect.DeepEqual(got, built) {
			t.Fatalf("%q: the tap's pieces\n%+v\nbuildPieces\n%+v", line, got, built)
		}
		if want := refPieces(e, js.ToValidUTF8(line)); !reflect.DeepEqual(asIndexed(got), asIndexed(want)) {
			t.Fatalf("%q: the tap's pieces\n%+v\nrefPieces\n%+v", line, got, want)
		}
	}, &g.tap)
	g.tap.done()
	return tapped
}

// tapSummary is what tapCompare compares of two reads.
func tapSummary(s *sessions.Session) string {
	if s == nil {
		return "no session"
	}
	return fmt.Sprintf("%d entries, %v", len(s.Entries), s.Diags)
}

// TestTapPieces: the pieces a first read's tap reads are buildPieces'
// and refPieces', on generated sessions and odd lines.
func TestTapPieces(t *testing.T) {
	n := 0
	for seed := range int64(6) {
		data := sessiontest.String(seed, 300, sessiontest.Options{BigEvery: 50})
		n += tapCompare(t, []byte(data))
	}
	if n < 1500 {
		t.Fatalf("only %d entries read by the tap", n)
	}
	for _, l := range oddLines {
		tapCompare(t, []byte(tapHeader+"\n"+l+"\n"))
	}
	// Lines the read refuses midway (one cut short, one with more after
	// it, strings the tap would read holding a control character or a
	// bad escape), then one it takes: what the refused ones decoded goes
	// back, the next is read whole.
	data := strings.Join([]string{tapHeader,
		`{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":"cut"}]`,
		`{"type":"message","id":"b","message":{"role":"user","content":"x"}} trailing`,
		"{\"type\":\"message\",\"id\":\"d\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"tab\there\"}]}}",
		"{\"type\":\"message\",\"id\":\"e\",\"message\":{\"role\":\"bashExecution\",\"command\":\"ls\",\"output\":\"" + strings.Repeat("long ", 20) + "\x01\"}}",
		`{"type":"message","id":"f","message":{"role":"user","content":"bad \q escape"}}`,
		`{"type":"message","id":"c","message":{"role":"user","content":[{"type":"text","text":"whole wombat"}]}}`,
	}, "\n") + "\n"
	if got := tapCompare(t, []byte(data)); got != 1 {
		t.Fatalf("%d entries read by the tap, want 1", got)
	}
}

// FuzzTapPieces: the pieces of any lines the library reads, as its first
// read's tap reads them, are buildPieces' and refPieces'.
func FuzzTapPieces(f *testing.F) {
	for _, l := range oddLines {
		f.Add([]byte(l))
	}
	for _, l := range strings.Split(sessiontest.String(1, 40, sessiontest.Options{}), "\n")[1:] {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, lines []byte) {
		if bytes.Contains(lines, []byte(`"session"`)) {
			return // a second header is no entry; a first would not be the fuzzed lines'
		}
		tapCompare(t, append([]byte(tapHeader+"\n"), lines...))
	})
}
