package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/piweb/piweb/inspect"
	"github.com/piweb/piweb/sessions"
)

// usageError marks a bad command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// parseFlags parses args with fs. help is true when --help was asked for
// (the usage is printed: nothing more to do); a bad flag, or an argument
// left over when leftover names it ("unexpected %q"; "" takes them), is a
// usageError.
func parseFlags(fs *flag.FlagSet, args []string, leftover string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, usageError{err.Error()}
	}
	if leftover != "" && fs.NArg() > 0 {
		fs.Usage()
		return false, usageError{fmt.Sprintf(leftover, fs.Arg(0))}
	}
	return false, nil
}

func exitCode(err error) int {
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	var e exitError
	if errors.As(err, &e) {
		return e.code
	}
	return 1
}

// run dispatches the subcommands.
func run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "inspect":
			return inspectCmd(os.Stdout, args[1:])
		case "tree":
			return tree(os.Stdout, args[1:])
		case "usage":
			return usageCmd(ctx, os.Stdout, args[1:])
		case "push":
			return pushCmd(ctx, os.Stdout, args[1:])
		case "token":
			return tokenCmd(ctx, os.Stdout, args[1:])
		}
	}
	return serve(ctx, args)
}

// inspectCmd prints pi's reading of a session file as JSON (package inspect).
func inspectCmd(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	leaf := fs.String("leaf", "", "entry `ID` to read the path and context at (default: the file's last entry)")
	diags := fs.Bool("diagnostics", false, "print the problems found in the file to stderr")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: piweb inspect [--leaf ID] FILE")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError{"inspect takes one FILE"}
	}
	s, err := sessions.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	if *diags {
		for _, d := range s.Diags {
			fmt.Fprintln(os.Stderr, d)
		}
	}
	return inspect.Write(w, s, *leaf)
}
