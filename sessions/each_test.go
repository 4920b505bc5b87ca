package sessions

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
)

// eachCall is one call of a reader's fn: a position, the entry and its line.
type eachCall struct {
	pos  int
	e    Entry
	line string
}

// tSameEach reads file with RefreshEach into a new library of dir and
// checks that what fn had is what ReadLinesAsWritten from 0 gives (or,
// where Each.Epoch is 0, that fn had nothing the library holds).
func tSameEach(t *testing.T, dir, file string) {
	t.Helper()
	l := NewLibrary(dir)
	var got []eachCall
	each, err := l.RefreshEach(file, func(pos int, e *Entry, line []byte) {
		got = append(got, eachCall{pos, *e, string(line)})
	})
	n, epoch, version := 0, uint64(0), 0
	held := l.ViewFile(file, func(s *Session) error {
		n, epoch, version = len(s.Entries), s.epoch, s.Header.Version
		return nil
	}) == nil
	if !held {
		if err == nil || each.Epoch != 0 {
			t.Fatalf("not held, yet err %v, epoch %d", err, each.Epoch)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if version < 2 {
		if each.Epoch != 0 || len(got) != 0 {
			t.Fatalf("version %d: epoch %d, %d calls; want none", version, each.Epoch, len(got))
		}
		return
	}
	if each.Epoch != epoch || each.Entries != n {
		t.Fatalf("Each %+v; the session's epoch %d, %d entries", each, epoch, n)
	}
	var want []eachCall
	if _, err := l.ReadLinesAsWritten(file, 0, func(pos int, e *Entry, line []byte) error {
		want = append(want, eachCall{pos, *e, string(line)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d calls; ReadLinesAsWritten gives %d", len(got), len(want))
	}
	for k := range got {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Fatalf("call %d:\n got %+v\nwant %+v", k, got[k], want[k])
		}
	}
}

// eachOdd is files of every oddity the reading of a file meets.
func eachOdd() map[string]string {
	u, a := sessiontest.User, sessiontest.Asst
	e := sessiontest.Entry
	lines := sessiontest.Lines
	return map[string]string{
		"plain":      sessiontest.String(3, 60, sessiontest.Options{Scale: 0.05}),
		"duplicate":  lines(tHeader, u("a", "", 1, "one"), a("b", "a", 2, "two"), u("a", "b", 3, "again a"), a("b", "a", 4, "again b")),
		"notobject":  lines(tHeader, u("a", "", 1, "one"), `42`, `"text"`, `[1,2]`, `0`, `null`, `false`, a("b", "a", 2, "two")),
		"malformed":  lines(tHeader, u("a", "", 1, "one"), `{"type":"message","id":"x",`, `not json`, a("b", "a", 2, "two"), `{"a":1} trailing`),
		"blank":      strings.ReplaceAll(lines(tHeader, "", "  ", u("a", "", 1, "one"), "", a("b", "a", 2, "two")), "\n", "\r\n"),
		"unterm":     lines(tHeader, u("a", "", 1, "one")) + a("b", "a", 2, "unterminated"),
		"unterm-bad": lines(tHeader, u("a", "", 1, "one")) + `{"type":"message","id":"b"`,
		"escaped-id": lines(tHeader, `  {"type":"message","id":"a\u0062","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"escaped"}}`,
			`{"type":"message","id":"x","id":"y","parentId":"ab","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":"two ids"}}`,
			`{"type":"message","id":7,"parentId":"y","timestamp":"2026-01-01T00:00:03Z","message":{"role":"user","content":"number id"}}`,
			`{"type":"message","message":{"role":"user","content":"no id","id":"q"},"id":"late"}`),
		"header2":  lines(tHeader, u("a", "", 1, "one"), strings.Replace(tHeader, `"s1"`, `"s2"`, 1), a("b", "a", 2, "two")),
		"badutf8":  lines(tHeader, e("message", "a", "", 1, `,"message":{"role":"user","content":"caf`+"\xe9 \xff"+`"}`), a("b", "a", 2, "two \xc3")),
		"v2hook":   lines(strings.Replace(tHeader, `"version":3`, `"version":2`, 1), u("a", "", 1, "one"), e("message", "b", "a", 2, `,"message":{"role":"hookMessage","customType":"x","content":"hook"}`)),
		"v1":       lines(`{"type":"session","id":"v1s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`, `{"type":"message","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"one"}}`, `{"type":"compaction","timestamp":"2026-01-01T00:00:02Z","summary":"s","firstKeptEntryIndex":1}`),
		"noheader": lines(u("a", "", 1, "one"), tHeader, a("b", "a", 2, "two")),
		"empty":    "",
		"header":   tHeader,
		"text":     "hello\nworld\n",
	}
}

// TestRefreshEach: what RefreshEach gives fn during the read is what
// ReadLinesAsWritten gives after it, on files of every oddity, the
// fuzzers' seeds and a file read in pieces (larger than wholeMax).
func TestRefreshEach(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "--w--")
	os.MkdirAll(proj, 0o755)
	files := eachOdd()
	for _, name := range []string{"write/basic.jsonl", "write/noid.jsonl", "write/unterminated.jsonl", "write/v1.jsonl", "write/v2.jsonl", "branches.jsonl", "index-v1/session.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	seeds, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzLoad", "*"))
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// go test fuzz v1, then []byte("...") and the split.
		_, rest, _ := strings.Cut(string(b), "\n[]byte(")
		lit, _, _ := strings.Cut(rest, ")\n")
		data, err := strconv.Unquote(lit)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		files["seed-"+filepath.Base(p)] = data
	}
	if !testing.Short() {
		files["large"] = sessiontest.String(5, 400, sessiontest.Options{BigEvery: 3}) + sessiontest.Asst("tail", "", 1, "unterminated")
		if len(files["large"]) <= wholeMax {
			t.Fatalf("large is %d bytes, not above wholeMax", len(files["large"]))
		}
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(proj, strings.ReplaceAll(name, "/", "_")+".jsonl")
			if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			tSameEach(t, dir, file)
		})
	}
}

// TestRefreshEachHeld: a file the library holds already is refreshed as
// Refresh does, and fn is not called.
func TestRefreshEachHeld(t *testing.T) {
	dir := t.TempDir()
	file := tWrite(t, dir, "a.jsonl", sessiontest.Lines(tHeader, sessiontest.User("a", "", 1, "one")))
	l := NewLibrary(dir)
	if _, err := l.Refresh(file); err != nil {
		t.Fatal(err)
	}
	sessiontest.Append(t, file, sessiontest.Asst("b", "a", 2, "two")+"\n")
	calls := 0
	each, err := l.RefreshEach(file, func(int, *Entry, []byte) { calls++ })
	if err != nil || each.Epoch != 0 || calls != 0 {
		t.Fatalf("err %v, %+v, %d calls", err, each, calls)
	}
	if n := l.Len(); n != 1 {
		t.Fatalf("%d sessions", n)
	}
	l.ViewFile(file, func(s *Session) error {
		if len(s.Entries) != 2 {
			t.Errorf("%d entries after the append", len(s.Entries))
		}
		return nil
	})
}

// FuzzRefreshEach: on any file, RefreshEach's calls are ReadLinesAsWritten's lines.
func FuzzRefreshEach(f *testing.F) {
	fuzzSeeds(f, func(data []byte) { f.Add(data) })
	for _, data := range eachOdd() {
		f.Add([]byte(data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzMaxBytes {
			return
		}
		dir := t.TempDir()
		file := filepath.Join(dir, "f.jsonl")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if bytes.Count(data, []byte("\n")) > 5000 {
			return
		}
		tSameEach(t, dir, file)
	})
}
