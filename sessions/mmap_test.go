//go:build unix

package sessions

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
)

// linesOf returns the positions and lines ReadLines (or ReadLinesAsWritten) gives for file from from.
func linesOf(t *testing.T, l *Library, file string, from int, asWritten, mapped bool) ([]int, []string) {
	t.Helper()
	defer func(old bool) { noMap = old }(noMap)
	noMap = !mapped
	var pos []int
	var lines []string
	read := l.ReadLines
	if asWritten {
		read = l.ReadLinesAsWritten
	}
	if _, err := read(file, from, func(p int, e *Entry, line []byte) error {
		pos = append(pos, p)
		lines = append(lines, string(line))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return pos, lines
}

// TestReadLinesMapped: lines read from the mapped file are the lines read
// through the window, as written and as pi decodes them, from any position,
// also after the file grew and after a line changed in place.
func TestReadLinesMapped(t *testing.T) {
	defer func(old int64) { mapMin = old }(mapMin)
	mapMin = 0 // map any span of lines, from whatever line it starts at
	dir := t.TempDir()
	proj := filepath.Join(dir, "--home-dev-p--")
	os.MkdirAll(proj, 0o755)
	file := filepath.Join(proj, "2026-01-01T00-00-00-000Z_s.jsonl")
	gen := sessiontest.String(7, 300, sessiontest.Options{BigEvery: 20})
	// A line with bytes that are not UTF-8, which the two readings give differently.
	bad := sessiontest.Entry("message", "bad1", "", 9999, `,"message":{"role":"user","content":"caf`+"\xe9 \xff"+`"}`)
	if err := os.WriteFile(file, []byte(gen+bad+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	l.ViewFile(file, func(s *Session) error { n = s.Len(); return nil })
	check := func(what string, want int) {
		t.Helper()
		for _, asWritten := range []bool{false, true} {
			for _, from := range []int{0, 1, n / 2, n - 1, n, n + 5} {
				mp, ml := linesOf(t, l, file, from, asWritten, true)
				rp, rl := linesOf(t, l, file, from, asWritten, false)
				if !slices.Equal(mp, rp) || !slices.Equal(ml, rl) {
					t.Fatalf("%s, from %d, as written %v: mapped read %d lines, window %d; they differ", what, from, asWritten, len(ml), len(rl))
				}
				if from == 0 && len(ml) != want {
					t.Fatalf("%s: %d lines, want %d", what, len(ml), want)
				}
			}
		}
	}
	check("generated", n)
	// Mapping from a line inside the file (not at a page's start) works:
	// the lines above were not read through the window instead.
	l.ViewFile(file, func(s *Session) error {
		r, err := s.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		e := s.Entries[n/2]
		m, unmap, ok := r.mapped(e.Off, e.Off+int64(e.Len))
		if !ok || e.Off%int64(os.Getpagesize()) == 0 {
			t.Fatalf("mapping from offset %d: ok %v", e.Off, ok)
		}
		defer unmap()
		line, err := m.lineInto(nil, n/2, false, true)
		want, _ := r.Raw(n / 2)
		if err != nil || string(line) != string(want) {
			t.Fatalf("mapped line %q (%v), want %q", line, err, want)
		}
		return nil
	})
	if _, ml := linesOf(t, l, file, n-1, true, true); !strings.Contains(ml[0], "caf\xe9 \xff") {
		t.Fatalf("as written, the last line lost its bytes: %q", ml[0])
	}
	if _, ml := linesOf(t, l, file, n-1, false, true); !strings.Contains(ml[0], "caf\uFFFD \uFFFD") {
		t.Fatalf("as pi reads it, the last line is %q", ml[0])
	}

	// Grown since the library read it: only what the library knows is read.
	sessiontest.Append(t, file, sessiontest.User("new1", "bad1", 10000, "more")+"\n")
	check("grown", n)

	// A line changed in place (same length, another id): skipped both ways.
	data, _ := os.ReadFile(file)
	data = []byte(strings.Replace(string(data), `"id":"bad1"`, `"id":"bad2"`, 1))
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	check("changed", n-1)
}

// TestReadLinesTruncated: a file cut short while its lines are read from
// its mapping (which then faults) gives ErrChanged, not a crash, and the
// lines given before are whole.
func TestReadLinesTruncated(t *testing.T) {
	defer func(old int64) { mapMin = old }(mapMin)
	mapMin = 0
	dir := t.TempDir()
	proj := filepath.Join(dir, "--home-dev-p--")
	os.MkdirAll(proj, 0o755)
	file := filepath.Join(proj, "2026-01-01T00-00-00-000Z_s.jsonl")
	long := strings.Repeat("x", 20000) // lines of several pages
	content := sessiontest.Lines(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/p"}`,
		sessiontest.User("u1", "", 1, long), sessiontest.Asst("a1", "u1", 2, long),
		sessiontest.User("u2", "a1", 3, long), sessiontest.Asst("a2", "u2", 4, long))
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, asWritten := range []bool{false, true} {
		read := l.ReadLines
		if asWritten {
			read = l.ReadLinesAsWritten
		}
		var got []int
		_, err := read(file, 0, func(p int, e *Entry, line []byte) error {
			if !strings.HasSuffix(string(line), "}") || !strings.Contains(string(line), long) {
				t.Fatalf("line %d is not whole", p)
			}
			got = append(got, p)
			if p == 0 {
				// Another program cuts the file short while it is read.
				if err := os.Truncate(file, 10); err != nil {
					t.Fatal(err)
				}
			}
			return nil
		})
		if !errors.Is(err, ErrChanged) || !slices.Equal(got, []int{0}) {
			t.Fatalf("as written %v: read %v, err %v; want [0] and ErrChanged", asWritten, got, err)
		}
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
