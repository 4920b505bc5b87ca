package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/push"
	"github.com/piweb/piweb/store"
)

// Exit statuses of piweb push (besides 0, done, and 2, a bad command line).
const (
	exitFailed      = 1   // anything else went wrong
	exitUnreachable = 3   // the store could not be reached, or went away: nothing lost; push again later
	exitPartial     = 4   // some files could not be pushed (the others were)
	exitInterrupted = 130 // stopped by a signal before it was done: nothing lost; push again
)

// exitError is an error with the exit status it ends piweb with.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// pushCmd sends this machine's session files to a PostgreSQL store.
func pushCmd(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	to := fs.String("to", "", "the team's PostgreSQL store: `URL` postgres://USER@HOST/DB")
	dir := fs.String("session-dir", "", "sessions root `DIR` (default: as pi finds it)")
	machine := fs.String("machine", "", "the `NAME` this machine's sessions go under (default: the host name)")
	watch := fs.Bool("watch", false, "keep running: push each append as pi writes it (within a second)")
	redact := fs.String("redact", "", "`WHAT` to mask before anything leaves this machine: secrets (as shares redact them)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: piweb push --to postgres://USER@HOST/DB [--session-dir DIR] [--machine NAME] [--watch] [--redact secrets]\n\n"+
			"Sends what pi appended since the last push (a rewritten file again whole). Exit status: 0 done, 1 failed,\n"+
			"2 bad command line, 3 the store cannot be reached (push again later), 4 some files could not be pushed,\n"+
			"130 interrupted (push again: nothing is lost or sent twice).")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, "unexpected %q"); help || err != nil {
		return err
	}
	if engine, _, err := store.ParseDSN(*to); *to == "" || err != nil || engine != store.Postgres {
		return usageError{"push needs --to postgres://USER@HOST/DB (the team's PostgreSQL store)"}
	}
	if *redact != "" && *redact != push.RedactSecrets {
		return usageError{fmt.Sprintf("--redact %s: only secrets can be redacted", *redact)}
	}
	root := *dir
	if root == "" {
		root = library.DefaultRoot()
	} else if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return usageError{fmt.Sprintf("--session-dir %s: no such folder", root)}
	}
	name := *machine
	if name == "" {
		name = machineName()
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := store.Open(ctx, *to, store.Options{Logger: log})
	if err != nil {
		return pushErr(ctx, push.Stats{}, err)
	}
	defer st.Close()
	line := newStatusLine(os.Stderr)
	p, err := push.New(push.Table{DB: st}, push.Options{Root: root, Machine: name, Redact: *redact, Logger: log,
		Progress: func(pr push.Progress) {
			line.show("piweb push: %d/%d files, %s of %s", pr.FilesDone, pr.Files, megabytes(pr.BytesDone), megabytes(pr.Bytes))
		}})
	if err != nil {
		return usageError{err.Error()}
	}
	where := fmt.Sprintf("%s's sessions (%s) to %s", name, root, st)
	if !*watch {
		stats, err := p.Push(ctx)
		line.clear()
		report(out, stats)
		return pushErr(ctx, stats, err)
	}
	fmt.Fprintf(out, "piweb push: watching %s\n", where)
	first := true
	var down bool
	err = p.Watch(ctx, push.WatchOptions{}, func(s push.Stats, err error) {
		line.clear()
		switch {
		case err != nil && !down:
			down = true
			fmt.Fprintf(os.Stderr, "piweb push: %v; trying again\n", err)
		case err == nil && down:
			down = false
			fmt.Fprintln(os.Stderr, "piweb push: the store is back")
		}
		if first && err == nil || len(s.Redacted) > 0 || len(s.Failed) > 0 {
			report(out, s)
			first = false
		}
		line.show("piweb push: watching; last push %s: %s", time.Now().Format("15:04:05"), megabytes(s.Bytes))
	})
	line.clear()
	return err
}

// pushErr is the error piweb push ends with.
func pushErr(ctx context.Context, st push.Stats, err error) error {
	switch {
	case err != nil && ctx.Err() != nil:
		return exitError{exitInterrupted, errors.New("interrupted: push again to send the rest (nothing is sent twice)")}
	case errors.Is(err, store.ErrUnavailable):
		return exitError{exitUnreachable, fmt.Errorf("%w: push again when it is back (nothing is lost or sent twice)", err)}
	case err != nil:
		return exitError{exitFailed, err}
	case len(st.Failed) > 0:
		return exitError{exitPartial, fmt.Errorf("%d of %d files could not be pushed", len(st.Failed), st.Files)}
	}
	return nil
}

// report says what a push did: how much it sent, what it masked, what failed.
func report(w io.Writer, st push.Stats) {
	msg := fmt.Sprintf("piweb push: %d files, %d sent (%s)", st.Files, st.Changed, megabytes(st.Bytes))
	if st.Rewritten > 0 {
		msg += fmt.Sprintf(", %d of them again whole (rewritten)", st.Rewritten)
	}
	fmt.Fprintln(w, msg)
	if len(st.Redacted) > 0 {
		var parts []string
		n := 0
		for _, rule := range slices.Sorted(maps.Keys(st.Redacted)) {
			parts = append(parts, fmt.Sprintf("%d %s", st.Redacted[rule], rule))
			n += st.Redacted[rule]
		}
		fmt.Fprintf(w, "piweb push: masked %d secrets before sending: %s\n", n, strings.Join(parts, ", "))
	}
	for _, f := range slices.Sorted(maps.Keys(st.Failed)) {
		fmt.Fprintf(os.Stderr, "piweb push: %s: not pushed: %v\n", f, st.Failed[f])
	}
}

// statusLine keeps one line of progress on a terminal (nothing elsewhere),
// redrawn at most ten times a second.
type statusLine struct {
	mu    sync.Mutex
	w     io.Writer // nil: not a terminal
	last  time.Time
	shown bool
}

func newStatusLine(f *os.File) *statusLine {
	if !isTerminal(f) {
		return &statusLine{}
	}
	return &statusLine{w: f}
}

func (l *statusLine) show(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil || time.Since(l.last) < 100*time.Millisecond {
		return
	}
	l.last = time.Now()
	fmt.Fprintf(l.w, "\r\033[K"+format, args...)
	l.shown = true
}

func (l *statusLine) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown {
		fmt.Fprint(l.w, "\r\033[K")
		l.shown = false
	}
	l.last = time.Time{}
}
