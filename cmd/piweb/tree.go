package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/piweb/piweb/pitree"
	"github.com/piweb/piweb/sessions"
)

// tree prints a session's tree as pi's /tree view draws it, without colors.
func tree(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("tree", flag.ContinueOnError)
	leaf := fs.String("leaf", "", "entry `ID` to take as the active leaf (default: the file's last entry)")
	filter := fs.String("filter", "default", "filter `MODE`: default, no-tools, user-only, labeled-only or all")
	search := fs.String("search", "", "show only entries holding every word of `TEXT`, as pi's search does")
	fold := fs.String("fold", "", "comma-separated entry `IDS` to fold")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: piweb tree [--leaf ID] [--filter MODE] [--search TEXT] [--fold IDS] FILE")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError{"tree takes one FILE"}
	}
	f, err := pitree.ParseFilter(*filter)
	if err != nil {
		return usageError{err.Error()}
	}
	s, err := sessions.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	opt := pitree.Options{Leaf: s.Leaf(), Filter: f, Search: *search, Home: homeDir()}
	if *leaf != "" {
		i, ok := s.Lookup(*leaf)
		if !ok {
			return fmt.Errorf("%w: %q", sessions.ErrNoEntry, *leaf)
		}
		opt.Leaf = i
	}
	if *fold != "" {
		opt.Folded = map[string]bool{}
		for _, id := range strings.Split(*fold, ",") {
			opt.Folded[strings.TrimSpace(id)] = true
		}
	}
	r, err := s.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	l, err := pitree.New(s, r, opt)
	if err != nil {
		return err
	}
	return l.Render(w, r)
}

// homeDir is the home directory pi shortens to "~" ($HOME, else $USERPROFILE).
func homeDir() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	return os.Getenv("USERPROFILE")
}
