package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/static"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/usage"
	"github.com/piweb/piweb/usage/storesource"
	"github.com/piweb/piweb/watcher"
	"github.com/piweb/piweb/web"
)

// defaultAddr is where piweb listens: loopback only.
const defaultAddr = "127.0.0.1:8377"

// serve runs the web server until ctx is done.
func serve(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("piweb", flag.ContinueOnError)
	addr := fset.String("addr", defaultAddr, "`host:port` to listen on")
	dir := fset.String("session-dir", "", "sessions root `DIR` (default: as pi finds it: $PI_CODING_AGENT_SESSION_DIR, $PI_CODING_AGENT_DIR/sessions or ~/.pi/agent/sessions)")
	demo := fset.Bool("demo", false, "serve the built-in demo sessions instead of yours")
	storeDSN := fset.String("store", "", "the index store: `sqlite:PATH` or postgres://USER@HOST/DB (default sqlite:$XDG_CACHE_HOME/piweb/index.db)")
	cacheDir := fset.String("cache-dir", "", "keep the SQLite index store in `DIR` (the same as --store sqlite:DIR/index.db)")
	noCache := fset.Bool("no-cache", false, "keep no index store across runs: a throwaway one, deleted at exit; every start reads every file")
	fset.Usage = func() {
		fmt.Fprintln(fset.Output(), "usage: piweb [--addr HOST:PORT] [--session-dir DIR] [--demo] [--store DSN | --cache-dir DIR | --no-cache]\n       piweb inspect|tree FILE\n       piweb usage [daily|weekly|monthly|session|project|statusline] [flags]")
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fset.NArg() > 0 {
		fset.Usage()
		return usageError{fmt.Sprintf("unknown command %q", fset.Arg(0))}
	}
	if (*storeDSN != "") && (*cacheDir != "" || *noCache) || *cacheDir != "" && *noCache {
		return usageError{"--store, --cache-dir and --no-cache are alternatives: give one"}
	}
	return listenAndServe(ctx, os.Stdout, config{addr: *addr, root: *dir, demo: *demo, store: *storeDSN, cacheDir: *cacheDir, noCache: *noCache})
}

// config is what serve was asked for.
type config struct {
	addr     string
	root     string // "" for pi's default
	demo     bool
	store    string // the store's DSN; "" for the default
	cacheDir string // "" for $XDG_CACHE_HOME/piweb
	noCache  bool
}

// listenAndServe opens the library (or the demo), starts the watcher and
// serves HTTP on cfg.addr, telling out where.
func listenAndServe(ctx context.Context, out io.Writer, cfg config) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	root := cfg.root
	if root == "" {
		root = sessions.DefaultRoot()
	} else if fi, err := os.Stat(root); !cfg.demo && err != nil {
		// A folder named on purpose that is not there is a typo, not a wish for the demo.
		return usageError{fmt.Sprintf("--session-dir %s: no such folder (run with --demo for the built-in demo sessions)", root)}
	} else if !cfg.demo && !fi.IsDir() {
		return usageError{fmt.Sprintf("--session-dir %s: is a file, not a folder (give the folder that holds pi's project folders)", root)}
	}
	files, err := sessions.SessionFiles(root)
	if err != nil && !cfg.demo {
		return fmt.Errorf("reading sessions under %s: %w", root, err)
	}
	if cfg.demo || len(files) == 0 {
		if !cfg.demo {
			fmt.Fprintf(out, "piweb: no sessions under %s\n", root)
		}
		if root, err = copyDemo(); err != nil {
			return fmt.Errorf("copying the demo sessions: %w", err)
		}
		defer os.RemoveAll(root)
		cfg.demo, cfg.noCache, cfg.store, cfg.cacheDir = true, true, "", "" // the demo is small and temporary: a throwaway store
		files, _ = sessions.SessionFiles(root)
		fmt.Fprintf(out, "piweb: serving DEMO data: %s copied to %s\n", sessionCount(len(files), "built-in "), root)
	} else {
		fmt.Fprintf(out, "piweb: serving %s from %s\n", sessionCount(len(files), ""), root)
	}
	lib := sessions.NewLibrary(root)
	st, closeStore := openStore(ctx, out, log, cfg)
	defer closeStore()
	copt := catalog.Options{Logger: log}
	if st != nil {
		copt.Store = st
	}
	cat := catalog.New(lib, copt)

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%s is already in use (is piweb already running?); pick another address with --addr 127.0.0.1:PORT", cfg.addr)
		}
		return fmt.Errorf("cannot listen on %s: %w", cfg.addr, err)
	}
	bound := ln.Addr().String()
	if !loopback(bound) {
		// piweb has no authentication: whoever reaches the port reads every session and can write to them.
		fmt.Fprintf(out, "piweb: WARNING: listening on %s, which is reachable from other machines.\n"+
			"piweb: WARNING: piweb has no login: anyone who can reach this port can read every session under %s\n"+
			"piweb: WARNING: (prompts, code, tool output, any secrets in them) and add labels, rewinds and forks.\n"+
			"piweb: WARNING: unless you mean it, stop piweb and use --addr 127.0.0.1:PORT.\n", bound, root)
		log.Warn("piweb is listening on a non-loopback address without authentication", "addr", bound)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := watcher.New(lib, watcher.Options{Logger: log})
	if err != nil {
		ln.Close()
		return err
	}
	watched := make(chan error, 1)
	go func() {
		// After the catalog's fill: the watcher's first scan reads every
		// file the library does not hold yet, which the fill restores
		// from the store for much less.
		select {
		case <-cat.Ready():
			limitMemory(log)
			watched <- w.Run(ctx)
		case <-ctx.Done():
		}
	}()
	wopt := web.Options{Addr: bound, Root: root, Demo: cfg.demo, Logger: log, Home: homeDir(), Catalog: cat}
	if st != nil { // usage from the store; from the files until its first build is done, and while it is down
		wopt.Usage = storesource.New(st, machineName(), storesource.Options{Settle: cat.Wait, Ready: cat.SearchReady(),
			Fallback: usage.NewFiles(lib, machineName())})
	}
	srv := web.New(lib, wopt)
	hs := srv.HTTPServer()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	// The address first: the progress and "indexed" lines come after it,
	// however fast the fill.
	fmt.Fprintf(out, "piweb: open http://%s/\n", browserAddr(bound))
	cataloged := make(chan error, 1)
	go func() { cataloged <- cat.Run(ctx) }()
	go reportProgress(ctx, out, cat)

	select {
	case err = <-served:
	case err = <-watched:
		if err != nil {
			err = fmt.Errorf("watching %s: %w", root, err)
		}
	case err = <-cataloged:
		cataloged = nil // done: nothing to wait for below
		if err != nil {
			err = fmt.Errorf("indexing %s: %w", root, err)
		}
	case <-ctx.Done():
	}
	shut, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	if serr := hs.Shutdown(shut); err == nil && serr != nil {
		err = serr
	}
	cancel()
	if cataloged != nil {
		select { // the catalog commits what it has before the store closes
		case <-cataloged:
		case <-time.After(5 * time.Second):
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// sessionCount says "1 session" or "3 sessions", with an adjective.
func sessionCount(n int, adj string) string {
	if n == 1 {
		return "1 " + adj + "session"
	}
	return fmt.Sprintf("%d %ssessions", n, adj)
}

// loopback reports whether a bound address only accepts connections from this machine.
func loopback(bound string) bool {
	host, _, err := net.SplitHostPort(bound)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// browserAddr is the address to print for a browser: a wildcard host becomes localhost.
func browserAddr(bound string) string {
	host, port, err := net.SplitHostPort(bound)
	if err != nil {
		return bound
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// copyDemo copies the embedded demo sessions into a new temporary root.
func copyDemo() (string, error) {
	root, err := os.MkdirTemp("", "piweb-demo-")
	if err != nil {
		return "", err
	}
	if err := static.WriteDemo(root); err != nil {
		os.RemoveAll(root)
		return "", err
	}
	return root, nil
}

// openStore opens the index store as cfg asks, and returns it with the
// func that closes it (and removes a throwaway one). Without a store (none
// can be made) piweb runs without: it says so, and search scans.
func openStore(ctx context.Context, out io.Writer, log *slog.Logger, cfg config) (*store.DB, func()) {
	dsn, cleanup := cfg.store, func() {}
	var err error
	switch {
	case cfg.noCache:
		var dir string
		if dir, err = os.MkdirTemp("", "piweb-store-"); err == nil {
			dsn, cleanup = "sqlite:"+filepath.Join(dir, "index.db"), func() { os.RemoveAll(dir) }
		}
	case dsn == "" && cfg.cacheDir != "":
		dsn = "sqlite:" + filepath.Join(cfg.cacheDir, "index.db")
	case dsn == "":
		dsn, err = store.DefaultDSN()
	}
	if err == nil {
		var st *store.DB
		if st, err = store.Open(ctx, dsn, store.Options{Logger: log}); err == nil {
			return st, func() { st.Close(); cleanup() }
		}
	}
	cleanup()
	fmt.Fprintf(out, "piweb: no index store (%v): every start reads every session file, and search scans them\n", err)
	log.Warn("running without an index store", "err", err)
	return nil, func() {}
}

// reportProgress says when the sessions are indexed; while they are, and
// stderr is a terminal, it keeps a progress line there.
func reportProgress(ctx context.Context, out io.Writer, cat *catalog.Catalog) {
	term := isTerminal(os.Stderr)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	shown := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-cat.Ready():
			if shown {
				fmt.Fprint(os.Stderr, "\r\033[K")
			}
			p := cat.Progress()
			fmt.Fprintf(out, "piweb: indexed %s (%s) in %s\n", sessionCount(cat.Library().Len(), ""),
				megabytes(p.BytesTotal), p.Elapsed.Round(time.Millisecond))
			return
		case <-tick.C:
			if term {
				p := cat.Progress()
				fmt.Fprintf(os.Stderr, "\r\033[Kpiweb: indexing %d/%d files, %s of %s (%s/s)", p.FilesDone, p.FilesTotal,
					megabytes(p.BytesDone), megabytes(p.BytesTotal), megabytes(int64(p.Rate)))
				shown = true
			}
		}
	}
}

// megabytes writes n bytes for people.
func megabytes(n int64) string {
	if n < 1e6 {
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// limitMemory sets a soft memory limit once the library is filled, unless
// GOMEMLIMIT says otherwise: the index is most of what piweb keeps, and by
// default Go lets the heap grow to twice what is live before it collects,
// so a burst of requests would double piweb's memory. The limit leaves room
// for a quarter more than the index plus 96 MiB of work, and never less
// than 256 MiB; the GC works harder near it rather than growing past it.
func limitMemory(log *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	limit := max(int64(256<<20), int64(m.HeapAlloc)*5/4+96<<20)
	debug.SetMemoryLimit(limit)
	log.Info("memory limit set", "MiB", limit>>20, "index MiB", m.HeapAlloc>>20)
}
