// Package patch makes and reads the unified diffs of the file changes an
// agent's tools made: pi's edit results, writes, and a path's net patch.
package patch

import (
	"fmt"
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Count returns the lines a unified diff adds and removes (headers excluded).
func Count(p string) (added, removed int) {
	for line := range strings.Lines(p) {
		switch {
		case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "):
		case strings.HasPrefix(line, "+"):
			added++
		case strings.HasPrefix(line, "-"):
			removed++
		}
	}
	return added, removed
}

// Diff returns the unified diff of a file from before to after; an empty
// before with created set is a new file (from /dev/null). Equal texts give "".
func Diff(path, before, after string, created bool) string {
	from := "a/" + strings.TrimPrefix(path, "/")
	if created {
		from = "/dev/null"
	}
	return udiff.Unified(from, "b/"+strings.TrimPrefix(path, "/"), before, after)
}

// Apply applies a unified diff to content. Each hunk must find its context
// and removed lines where its header says (after the shift of the hunks
// before it); a diff that does not fit gives an error, never a guess.
func Apply(p, content string) (string, error) {
	src := splitLines(content)
	var out []string
	at := 0            // next line of src to copy
	var oldN, newN int // lines of the hunk still to come, each side
	var last byte      // the op of the hunk line before
	for raw := range strings.Lines(p) {
		line := strings.TrimSuffix(raw, "\n")
		if strings.HasPrefix(line, "\\") { // "\ No newline at end of file": about the line before
			if last != '-' && len(out) > 0 {
				out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
			}
			continue
		}
		if oldN == 0 && newN == 0 {
			if !strings.HasPrefix(line, "@@ ") {
				continue // file headers, comments
			}
			start, on, nn, ok := hunkHeader(line)
			if !ok {
				return "", fmt.Errorf("bad hunk header %q", line)
			}
			if start < at || start > len(src) {
				return "", fmt.Errorf("hunk %q out of place", line)
			}
			out = append(out, src[at:start]...)
			at, oldN, newN = start, on, nn
			continue
		}
		op, text := byte(' '), ""
		if line != "" { // some tools drop the space of an empty context line
			op, text = line[0], line[1:]
		}
		switch op {
		case ' ', '-':
			if at >= len(src) || strings.TrimSuffix(src[at], "\n") != text {
				return "", fmt.Errorf("line %d does not match the patch", at+1)
			}
			if op == ' ' {
				out = append(out, src[at])
				newN--
			}
			oldN--
			at++
		case '+':
			out = append(out, text+"\n")
			newN--
		default:
			return "", fmt.Errorf("unexpected line %q in a hunk", line)
		}
		if oldN < 0 || newN < 0 {
			return "", fmt.Errorf("a hunk longer than its header says")
		}
		last = op
	}
	if oldN != 0 || newN != 0 {
		return "", fmt.Errorf("the patch ends inside a hunk")
	}
	out = append(out, src[at:]...)
	return strings.Join(out, ""), nil
}

// splitLines splits text into lines that keep their newlines.
func splitLines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		out = append(out, l)
	}
	return out
}

// hunkHeader reads "@@ -a,b +c,d @@": the 0-based first old line and the
// two sides' line counts.
func hunkHeader(h string) (start, oldN, newN int, ok bool) {
	rest, found := strings.CutPrefix(h, "@@ -")
	if !found {
		return 0, 0, 0, false
	}
	old, rest, found := strings.Cut(rest, " +")
	if !found {
		return 0, 0, 0, false
	}
	nw, _, found := strings.Cut(rest, " @@")
	if !found {
		return 0, 0, 0, false
	}
	rng := func(r string) (int, int, bool) {
		a, b, two := strings.Cut(r, ",")
		x, err := strconv.Atoi(a)
		if err != nil || x < 0 {
			return 0, 0, false
		}
		n := 1
		if two {
			if n, err = strconv.Atoi(b); err != nil || n < 0 {
				return 0, 0, false
			}
		}
		return x, n, true
	}
	a, oldN, ok1 := rng(old)
	_, newN, ok2 := rng(nw)
	if !ok1 || !ok2 || (oldN > 0 && a == 0) {
		return 0, 0, 0, false
	}
	if oldN == 0 {
		return a, 0, newN, true // an empty old side names the line before it
	}
	return a - 1, oldN, newN, true
}

// Relabel gives a patch with pi's "--- path / +++ path" headers git's
// "a/" and "b/" names, so that `git apply` and `patch -p1` take it.
func Relabel(p, path string) string {
	rel := strings.TrimPrefix(path, "/")
	var b strings.Builder
	for line := range strings.Lines(p) {
		switch {
		case strings.HasPrefix(line, "--- ") && !strings.HasPrefix(line, "--- /dev/null"):
			b.WriteString("--- a/" + rel + "\n")
		case strings.HasPrefix(line, "+++ "):
			b.WriteString("+++ b/" + rel + "\n")
		default:
			b.WriteString(line)
		}
	}
	return b.String()
}

// FromDisplay makes a unified diff of pi's display diff (an edit result's
// details.diff, which older pi versions record without details.patch):
// lines "+N text", "-N text" and " N text" with N the line number (the new
// file's for added lines, the old file's otherwise), runs separated by
// " ..." markers. It returns "" for text that is not such a diff.
func FromDisplay(path, display string) string {
	type line struct {
		op   byte
		num  int
		text string
	}
	var hunks [][]line
	var cur []line
	for raw := range strings.Lines(display) {
		raw = strings.TrimSuffix(raw, "\n")
		if raw == "" {
			continue
		}
		op := raw[0]
		if op != '+' && op != '-' && op != ' ' {
			return ""
		}
		rest := strings.TrimLeft(raw[1:], " ")
		if rest == "..." {
			if len(cur) > 0 {
				hunks, cur = append(hunks, cur), nil
			}
			continue
		}
		end := 0
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		num, err := strconv.Atoi(rest[:end])
		if end == 0 || err != nil || (end < len(rest) && rest[end] != ' ') {
			return ""
		}
		text := ""
		if end < len(rest) {
			text = rest[end+1:]
		}
		cur = append(cur, line{op, num, text})
	}
	if len(cur) > 0 {
		hunks = append(hunks, cur)
	}
	if len(hunks) == 0 {
		return ""
	}
	rel := strings.TrimPrefix(path, "/")
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", rel, rel)
	delta := 0 // new line number minus old, before the hunk
	for _, h := range hunks {
		oldStart := h[0].num
		if h[0].op == '+' {
			oldStart = h[0].num - delta
		}
		var oldN, newN, added, removed int
		for _, l := range h {
			switch l.op {
			case ' ':
				oldN++
				newN++
			case '+':
				newN++
				added++
			case '-':
				oldN++
				removed++
			}
		}
		newStart := oldStart + delta
		os, ns := oldStart, newStart
		if oldN == 0 {
			os--
		}
		if newN == 0 {
			ns--
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", span(os, oldN), span(ns, newN))
		for _, l := range h {
			b.WriteByte(l.op)
			b.WriteString(l.text)
			b.WriteByte('\n')
		}
		delta += added - removed
	}
	return b.String()
}

// span is a hunk range as unified diffs write it ("3" for one line).
func span(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}
