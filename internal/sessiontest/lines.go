package sessiontest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Header is a version 3 session header, session id "s1", cwd "/w".
const Header = `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`

// Time returns the ISO timestamp sec seconds after 2026-01-01T00:00:00Z.
func Time(sec int) string {
	return time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC).Format("2006-01-02T15:04:05.000Z")
}

// Entry returns one entry line; parent "" is written as null and extra (`,"k":v...`) is added inside.
func Entry(typ, id, parent string, sec int, extra string) string {
	p := "null"
	if parent != "" {
		p = strconv.Quote(parent)
	}
	return fmt.Sprintf(`{"type":%q,"id":%q,"parentId":%s,"timestamp":%q%s}`, typ, id, p, Time(sec), extra)
}

// User returns a user message entry.
func User(id, parent string, sec int, text string) string {
	q, _ := json.Marshal(text)
	ms := time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC).UnixMilli()
	return Entry("message", id, parent, sec, fmt.Sprintf(`,"message":{"role":"user","content":%s,"timestamp":%d}`, q, ms))
}

// Asst returns an assistant message entry of 3 tokens costing 0.25.
func Asst(id, parent string, sec int, text string) string {
	q, _ := json.Marshal(text)
	return Entry("message", id, parent, sec, fmt.Sprintf(`,"message":{"role":"assistant","content":[{"type":"text","text":%s}],`+
		`"api":"anthropic-messages","provider":"anthropic","model":"claude","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":0.25}},"stopReason":"stop","timestamp":1}`, q))
}

// Lines joins lines into file content, each ended by a newline.
func Lines(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// Append appends content to the file at path, failing the test on error.
func Append(t testing.TB, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Crowded returns a session whose labels would stand on one another where
// a map draws them: three branches (x, y and z) of n entries side by side
// from a1, and a label ("L<k> checkpoint <target>") on each target in turn,
// the labels hanging off the last entry of z.
func Crowded(n int, targets ...string) string {
	lines := []string{Header, User("u1", "", 1, "start"), Asst("a1", "u1", 2, "ok")}
	for _, br := range []string{"x", "y", "z"} {
		parent := "a1"
		for k := 1; k <= n; k++ {
			id := fmt.Sprintf("%s%d", br, k)
			lines = append(lines, User(id, parent, 3, "go "+id))
			parent = id
		}
	}
	parent := fmt.Sprintf("z%d", n)
	for k, target := range targets {
		id := fmt.Sprintf("l%d", k)
		lines = append(lines, Entry("label", id, parent, 4, fmt.Sprintf(`,"targetId":%q,"label":"L%d checkpoint %s"`, target, 51+k*283, target)))
		parent = id
	}
	return Lines(lines...)
}

// File writes content to name under dir and returns its path.
func File(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	Put(t, p, content)
	return p
}

// CopyFixture copies the fixture testdata/write/name of this package into
// a temporary folder and returns the copy's path.
func CopyFixture(t testing.TB, name string) string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information to find the fixtures")
	}
	data := ReadFile(t, filepath.Join(filepath.Dir(self), "testdata", "write", name))
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// ReadFile returns the content of the file at path, failing the test on error.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
