package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// countedAt counts the reads of a file.
type countedAt struct {
	f     io.ReaderAt
	reads int
}

func (c *countedAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.f.ReadAt(p, off)
}

// TestGathered checks that a Gathered reader reads the lines it was given
// as Raw does, with one read of the file when they lie close together and
// line by line when they do not, that a line outside its span is still
// read from the file, and that a changed line is still told.
func TestGathered(t *testing.T) {
	lines := []string{tHeader}
	parent := ""
	for i := range 40 {
		id := fmt.Sprintf("e%02d", i)
		text := fmt.Sprintf("message %d", i)
		if i == 30 {
			text = strings.Repeat("far ", 400_000) // 1.6 MB: entries past it are far from those before
		}
		lines = append(lines, tUser(id, parent, i, text))
		parent = id
	}
	path := tWrite(t, t.TempDir(), "g.jsonl", tLines(lines...))
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &countedAt{f: f}
	r := NewReader(s, c)
	want := func(p int) []byte {
		t.Helper()
		line, err := s.Raw(p)
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	for _, tc := range []struct {
		name      string
		positions []int
		reads     int // of the file, for the lines of positions
	}{
		{"near, in order", []int{1, 2, 3, 4, 5, 6}, 1},
		{"near, any order, some not entries", []int{9, -1, 7, 400, 8, 2}, 1},
		{"one", []int{5}, 1},
		{"far apart", []int{2, 3, 31, 32}, 4},
		{"the long line", []int{29, 30, 31}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.reads = 0
			g := r.Gathered(tc.positions)
			for _, p := range tc.positions {
				if p < 0 || p >= len(s.Entries) {
					continue
				}
				got, err := g.Raw(p)
				if err != nil || !bytes.Equal(got, want(p)) {
					t.Errorf("entry %d: %.40q, %v", p, got, err)
				}
			}
			if c.reads != tc.reads {
				t.Errorf("%d reads of the file, want %d", c.reads, tc.reads)
			}
			if got, err := g.Raw(35); err != nil || !bytes.Equal(got, want(35)) { // outside any span
				t.Errorf("entry 35 outside the span: %.40q, %v", got, err)
			}
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := r.Raw(4); err != nil || !bytes.Equal(got, want(4)) {
				t.Errorf("the reader it came from, after Close: %.40q, %v", got, err)
			}
		})
	}

	// The file rewritten with other ids at the same places: the lines are not the entries.
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.ReplaceAll(data, []byte(`"e0`), []byte(`"x0`)), 0o644); err != nil {
		t.Fatal(err)
	}
	g := r.Gathered([]int{1, 2, 3, 4})
	defer g.Close()
	if _, err := g.Raw(2); !errors.Is(err, ErrChanged) {
		t.Errorf("a changed line: %v, want ErrChanged", err)
	}
	if _, err := g.RawQuick(3); !errors.Is(err, ErrChanged) {
		t.Errorf("a changed line read quickly: %v, want ErrChanged", err)
	}
}
