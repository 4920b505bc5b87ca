package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/piweb/piweb/internal/oracle"
)

// maxShrinkTests bounds the readings one shrink may ask of pi and piweb.
const maxShrinkTests = 4000

// shrink reduces the file b to a small one on which job still differs from
// pi with the same signature sig: delta debugging over its lines, then over
// the characters of each JSON string value in each line that is left.
func shrink(t *testing.T, pi *oracle.Pi, b []byte, job oracle.DiffJob, sig string) []byte {
	t.Helper()
	file := filepath.Join(t.TempDir(), "shrink.jsonl")
	tests := 0
	still := func(c []byte) bool {
		if tests >= maxShrinkTests {
			return false
		}
		tests++
		if err := os.WriteFile(file, c, 0o644); err != nil {
			t.Fatal(err)
		}
		a := pi.Ask(t, file, "", []oracle.DiffJob{job})
		return diffSig(job, a.Results[0], piwebRun(file, job)) == sig
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	join := func(ls [][]byte) []byte { return bytes.Join(ls, nil) }
	lines = ddmin(lines, func(ls [][]byte) bool { return still(join(ls)) })
	for i := range lines {
		for s := 0; ; s++ {
			spans := stringSpans(lines[i])
			if s >= len(spans) {
				break
			}
			sp := spans[s]
			line := lines[i]
			units := strUnits(line[sp[0]:sp[1]])
			rebuild := func(us [][]byte) []byte {
				out := append([]byte{}, line[:sp[0]]...)
				for _, u := range us {
					out = append(out, u...)
				}
				return append(out, line[sp[1]:]...)
			}
			try := func(us [][]byte) bool {
				old := lines[i]
				lines[i] = rebuild(us)
				ok := still(join(lines))
				lines[i] = old
				return ok
			}
			if len(units) > 0 && try(nil) {
				units = nil
			} else {
				units = ddmin(units, try)
			}
			lines[i] = rebuild(units)
		}
	}
	return join(lines)
}

// ddmin is Zeller's delta debugging (complements only): it removes chunks of
// xs, halving their size, while test still holds.
func ddmin[T any](xs []T, test func([]T) bool) []T {
	n := 2
	for len(xs) >= 2 {
		chunk := (len(xs) + n - 1) / n
		reduced := false
		for start := 0; start < len(xs); start += chunk {
			end := min(start+chunk, len(xs))
			c := append(append([]T{}, xs[:start]...), xs[end:]...)
			if test(c) {
				xs, n, reduced = c, max(n-1, 2), true
				break
			}
		}
		if !reduced {
			if n >= len(xs) {
				break
			}
			n = min(2*n, len(xs))
		}
	}
	if len(xs) == 1 && test(nil) {
		return nil
	}
	return xs
}

// stringSpans returns the byte ranges of the contents of the JSON string
// values in line (between the quotes), found by scanning quotes and
// backslashes. Member names are left alone: emptying them would make
// duplicate keys or drop "id" and "version", other differences.
func stringSpans(line []byte) [][2]int {
	var spans [][2]int
	for i := 0; i < len(line); i++ {
		if line[i] != '"' {
			continue
		}
		start := i + 1
		j := start
		for j < len(line) && line[j] != '"' {
			if line[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(line) {
			break
		}
		k := j + 1
		for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
			k++
		}
		if k >= len(line) || line[k] != ':' {
			spans = append(spans, [2]int{start, j})
		}
		i = j
	}
	return spans
}

// strUnits splits a JSON string's contents into what the shrinker removes
// whole: escapes (\n, \uXXXX), UTF-8 characters, and single invalid bytes.
func strUnits(b []byte) [][]byte {
	var us [][]byte
	for i := 0; i < len(b); {
		n := 1
		switch {
		case b[i] == '\\' && i+1 < len(b) && b[i+1] == 'u':
			n = min(6, len(b)-i)
		case b[i] == '\\':
			n = min(2, len(b)-i)
		default:
			_, n = utf8.DecodeRune(b[i:])
		}
		us = append(us, b[i:i+n])
		i += n
	}
	return us
}
