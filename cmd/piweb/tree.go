package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/piweb/piweb/sessions"
)

// tree prints a session's tree for a terminal.
func tree(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("tree", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return usageError{"usage: piweb tree FILE"}
	}
	s, err := sessions.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	on := s.OnPath(s.Leaf())
	s.Walk(func(i, depth int) bool {
		e := &s.Entries[i]
		mark := " "
		if on[i] {
			mark = "•"
		}
		fmt.Fprintf(w, "%s %s%s %s", mark, strings.Repeat("  ", depth), e.ID, e.Type)
		if e.Role != "" {
			fmt.Fprintf(w, " %s", e.Role)
		}
		if l := s.LabelOf(i); l != "" {
			fmt.Fprintf(w, " [%s]", l)
		}
		if i == s.Leaf() {
			fmt.Fprint(w, " ← active")
		}
		fmt.Fprintln(w)
		return true
	})
	return nil
}
