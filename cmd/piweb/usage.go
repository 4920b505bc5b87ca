package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	_ "time/tzdata" // --timezone works where the system has no zone files

	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/usage"
	"github.com/piweb/piweb/usage/storesource"
)

// usageCmd prints what sessions cost: a report (daily, weekly, monthly,
// session, project) as a table or as @ccusage/pi's JSON, or the status line.
func usageCmd(ctx context.Context, w io.Writer, args []string) error {
	what := "daily"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		what, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("usage", flag.ContinueOnError)
	since := fs.String("since", "", "first `DATE` to count (YYYY-MM-DD or YYYYMMDD), in the time zone")
	until := fs.String("until", "", "last `DATE` to count (YYYY-MM-DD or YYYYMMDD), in the time zone")
	tz := fs.String("timezone", "", "time `ZONE` of days, weeks and months, e.g. Europe/Berlin or UTC (default: the local one)")
	fs.StringVar(tz, "z", "", "short for --timezone")
	breakdown := fs.Bool("breakdown", false, "a line per model under each row of the table")
	fs.BoolVar(breakdown, "b", false, "short for --breakdown")
	asJSON := fs.Bool("json", false, "print JSON shaped as @ccusage/pi's")
	dir := fs.String("session-dir", "", "sessions root `DIR` (default: as pi finds it)")
	order := fs.String("order", "desc", "`ORDER` of the rows: desc (newest or costliest first) or asc")
	weekStart := fs.String("start-of-week", "sunday", "first `DAY` of a week")
	project := fs.String("project", "", "count only these projects (session folders, comma-separated `NAMES`)")
	model := fs.String("model", "", "count only these models (provider/model, comma-separated `NAMES`)")
	machine := fs.String("machine", "", "count only these machines (comma-separated `NAMES`)")
	storeDSN := fs.String("store", "", "the index store piweb keeps: `sqlite:PATH` or postgres://USER@HOST/DB (default sqlite:$XDG_CACHE_HOME/piweb/index.db)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: piweb usage [daily|weekly|monthly|session|project] [--since DATE] [--until DATE] [--timezone TZ] [--breakdown] [--json] [--session-dir DIR] [--store DSN]\n       piweb usage statusline [--timezone TZ] [--session-dir DIR] [--store DSN]")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, "unexpected %q"); help || err != nil {
		return err
	}
	loc := time.Local
	if *tz != "" {
		l, err := time.LoadLocation(*tz)
		if err != nil {
			return usageError{fmt.Sprintf("--timezone %s: unknown time zone", *tz)}
		}
		loc = l
	}
	ws, err := usage.ParseWeekday(*weekStart)
	if err != nil {
		return usageError{"--start-of-week: " + err.Error()}
	}
	if *order != "asc" && *order != "desc" {
		return usageError{fmt.Sprintf("--order %s: want asc or desc", *order)}
	}
	var group usage.Group
	if what != "statusline" {
		g, err := usage.ParseGroup(what)
		if err != nil {
			fs.Usage()
			return usageError{err.Error()}
		}
		group = g
	}
	q := usage.Query{Group: group, Loc: loc, Since: *since, Until: *until, WeekStart: ws, Asc: *order == "asc",
		Projects: list(*project), Models: list(*model), Machines: list(*machine)}
	if _, err := q.Filter(); err != nil {
		return usageError{err.Error()}
	}

	root := *dir
	if root == "" {
		root = library.DefaultRoot()
	} else if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return usageError{fmt.Sprintf("--session-dir %s: no such folder", root)}
	}
	src, done, err := usageSource(ctx, root, *storeDSN, os.Stderr)
	if err != nil {
		return err
	}
	defer done()
	if what == "statusline" {
		st, err := usage.MakeStatus(ctx, src, time.Now(), loc, ws)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, st)
		return err
	}
	rep, err := usage.Make(ctx, src, q)
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(w)
	}
	if len(rep.Entries) == 0 {
		_, err := fmt.Fprintf(w, "No usage found under %s.\n", root)
		return err
	}
	return rep.WriteTable(w, usage.TableOptions{Width: termWidth(w), Breakdown: *breakdown})
}

// usageSource returns where the report's rows come from: the index store
// (the one piweb serves from), current already (piweb keeps it so while
// it runs on root) or brought up to date with root first by a catalog run
// until the store holds every file as it is; or, when the store cannot be
// used, the files themselves, said on warn. done closes what it opened.
func usageSource(ctx context.Context, root, dsn string, warn io.Writer) (src usage.Source, done func(), err error) {
	log := slog.New(slog.NewTextHandler(warn, &slog.HandlerOptions{Level: slog.LevelError}))
	if dsn == "" {
		if dsn, err = store.DefaultDSN(); err != nil {
			return nil, nil, err
		}
	}
	files := func(why error) (usage.Source, func(), error) {
		fmt.Fprintf(warn, "piweb: the index store cannot be used (%v): reading the session files instead\n", why)
		lib, err := library.OpenLibrary(root)
		if err != nil {
			return nil, nil, fmt.Errorf("reading sessions under %s: %w", root, err)
		}
		return usage.NewFiles(lib, machineName()), func() {}, nil
	}
	st, err := store.Open(ctx, dsn, store.Options{Logger: log})
	if err != nil {
		return files(err)
	}
	if err := st.Ping(ctx); err != nil {
		st.Close()
		return files(err)
	}
	light := lightGC()
	if current(ctx, st, root) { // piweb keeps it so while it runs on root
		return storesource.New(usage.Stored{DB: st}, machineName(), storesource.Options{}), func() { st.Close(); light() }, nil
	}
	light() // the catalog reads the files: the collector as usual
	ws := &watchedStore{DB: st, failed: make(chan error, 1)}
	cat := catalog.New(library.NewLibrary(root), catalog.Options{Store: ws, Logger: log})
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- cat.Run(runCtx) }()
	settled := make(chan error, 1)
	go func() { settled <- cat.Wait(runCtx) }()
	go func() { // a store far behind (a first run): say why this takes a while
		select {
		case <-cat.Ready():
			if n := cat.Progress().SearchTotal; n > 0 {
				fmt.Fprintf(warn, "piweb: bringing the index store up to date with %d of the sessions under %s first (once: later runs, and piweb while it runs, keep it current)\n", n, root)
			}
		case <-runCtx.Done():
		}
	}()
	select {
	case err = <-settled:
	case err = <-ws.failed:
	case err = <-ran: // the root could not be listed
		if err == nil {
			err = ctx.Err()
		}
	}
	cancel()
	if rerr := <-ran; err == nil {
		err = rerr
	}
	if err != nil {
		st.Close()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if errors.Is(err, errStoreFailed) {
			return files(err)
		}
		return nil, nil, fmt.Errorf("reading sessions under %s: %w", root, err)
	}
	return storesource.New(usage.Stored{DB: st}, machineName(), storesource.Options{}), func() { st.Close() }, nil
}

// lightGC lets the garbage collector wait for five times the live heap
// rather than twice (unless $GOGC says otherwise) until undo is called:
// reading a current store and writing a report allocates a few MB, and
// the command ends; a collection (each starts the collector's threads)
// would cost more than it frees.
func lightGC() (undo func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(400)
	return sync.OnceFunc(func() { debug.SetGCPercent(prev) })
}

// current reports whether st holds every session file under root as it
// is (the size and modification time it saw, as a catalog's restart
// checks them) and no other. The store is read while the files are
// listed and looked at, those a few at a time.
func current(ctx context.Context, st *store.DB, root string) bool {
	type stamps struct {
		m   map[string]store.Stamp
		err error
	}
	read := make(chan stamps, 1)
	go func() {
		m, err := st.Stamps(ctx, "")
		read <- stamps{m, err}
	}()
	files, err := library.SessionFiles(root)
	var seen []store.Stamp
	if err == nil {
		seen, err = statFiles(files)
	}
	got := <-read
	if err != nil || got.err != nil || len(got.m) != len(files) {
		return false
	}
	for i, p := range files {
		s, ok := got.m[p]
		if !ok || s.Size != seen[i].Size || s.ModTime != seen[i].ModTime {
			return false
		}
	}
	return true
}

// statFiles returns the size and modification time of each file, looked
// at by as many goroutines as there are processors (a stat is a system
// call: a thousand files take milliseconds); an error if one cannot be.
func statFiles(files []string) ([]store.Stamp, error) {
	out := make([]store.Stamp, len(files))
	workers := min(runtime.GOMAXPROCS(0), (len(files)+63)/64)
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			var err error
			for i := w * len(files) / workers; i < (w+1)*len(files)/workers; i++ {
				fi, e := os.Stat(files[i])
				if e != nil {
					err = e
					break
				}
				out[i] = store.Stamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
			}
			errs <- err
		}()
	}
	var err error
	for range workers {
		err = cmp.Or(err, <-errs)
	}
	return out, err
}

// errStoreFailed says a save to the store failed while it was brought up to date.
var errStoreFailed = errors.New("saving to it failed")

// watchedStore is the store as the catalog uses it, telling when saves
// fail for good: at once when the disk is full or the server is down,
// after a few failures of other kinds (a busy database is tried again by
// the catalog, and usually works the next time).
type watchedStore struct {
	*store.DB
	failed chan error
	fails  atomic.Int32
}

// storeTries is how many failed saves of other kinds make the command
// give up on the store.
const storeTries = 5

func (w *watchedStore) fail(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	if errors.Is(err, store.ErrFull) || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrClosed) || w.fails.Add(1) >= storeTries {
		select {
		case w.failed <- fmt.Errorf("%w: %v", errStoreFailed, err):
		default:
		}
	}
	return err
}

func (w *watchedStore) SaveMany(ctx context.Context, saves []*store.Save) error {
	return w.fail(ctx, w.DB.SaveMany(ctx, saves))
}

func (w *watchedStore) Remove(ctx context.Context, machine string, paths ...string) error {
	return w.fail(ctx, w.DB.Remove(ctx, machine, paths...))
}

// list splits a comma-separated flag value.
func list(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// machineName names this machine in the rows it reads.
func machineName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "local"
}

// termWidth returns the width of the terminal w writes to: $COLUMNS,
// else the terminal's own, else 0 (not a terminal: the wide table).
func termWidth(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok {
		return ttyWidth(f)
	}
	return 0
}
