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
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/library"
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
	cacheDir := fset.String("cache-dir", "", "keep the SQLite index store in `DIR` (the same as --store sqlite:DIR/index.db); with --from, the mirror of the pushed sessions")
	noCache := fset.Bool("no-cache", false, "keep no index store across runs: a throwaway one, deleted at exit; every start reads every file")
	from := fset.String("from", "", "serve every machine's sessions pushed to the team's PostgreSQL store at `URL` (piweb push), read-only: a team server")
	publicURL := fset.String("public-url", "", "the `URL` people reach piweb at through a reverse proxy or a forwarded port (https://piweb.example.com): its host is allowed, https makes the login cookie Secure")
	var origins []string
	fset.Func("allowed-origin", "one more `ORIGIN` (scheme://host[:port]) piweb takes requests from (repeatable)", func(v string) error {
		if err := checkOrigin(v); err != nil {
			return err
		}
		origins = append(origins, v)
		return nil
	})
	noLogin := fset.Bool("no-login", false, "serve without a login (only on a loopback address)")
	fset.Usage = func() {
		fmt.Fprintln(fset.Output(), "usage: piweb [--addr HOST:PORT] [--session-dir DIR] [--demo] [--store DSN | --cache-dir DIR | --no-cache]\n"+
			"       piweb --from postgres://USER@HOST/DB [--addr HOST:PORT] [--public-url URL] [--allowed-origin ORIGIN]...\n"+
			"       piweb push --to postgres://USER@HOST/DB [--watch] [--redact secrets]\n"+
			"       piweb token new|list|revoke [NAME] [--from URL | --store DSN]\n"+
			"       piweb inspect|tree FILE\n       piweb usage [daily|weekly|monthly|session|project|statusline] [flags]")
		fset.PrintDefaults()
	}
	if help, err := parseFlags(fset, args, "unknown command %q"); help || err != nil {
		return err
	}
	if (*storeDSN != "") && (*cacheDir != "" || *noCache) || *cacheDir != "" && *noCache {
		return usageError{"--store, --cache-dir and --no-cache are alternatives: give one"}
	}
	if *from != "" {
		if engine, _, err := store.ParseDSN(*from); err != nil || engine != store.Postgres {
			return usageError{"--from needs the team's PostgreSQL store: postgres://USER@HOST/DB"}
		}
		if *dir != "" || *demo || *storeDSN != "" || *noCache {
			return usageError{"--from serves the pushed sessions: it takes no --session-dir, --demo, --store or --no-cache"}
		}
	}
	if *publicURL != "" {
		if err := checkOrigin(web.Origin(*publicURL)); err != nil {
			return usageError{"--public-url: " + err.Error()}
		}
	}
	return listenAndServe(ctx, os.Stdout, config{addr: *addr, root: *dir, demo: *demo, store: *storeDSN, cacheDir: *cacheDir, noCache: *noCache,
		from: *from, publicURL: *publicURL, origins: origins, noLogin: *noLogin})
}

// checkOrigin checks an origin given on the command line: scheme://host[:port].
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("%q: want scheme://host[:port], as http://localhost:9000 or https://piweb.example.com", o)
	}
	return nil
}

// config is what serve was asked for.
type config struct {
	addr     string
	root     string // "" for pi's default
	demo     bool
	store    string // the store's DSN; "" for the default
	cacheDir string // "" for $XDG_CACHE_HOME/piweb
	noCache  bool
	from     string // the team's store: a team server ("" for none)

	publicURL string
	origins   []string
	noLogin   bool
}

// site is what serve serves: a library, its catalog, and what runs beside them.
type site struct {
	root   string
	lib    *library.Library
	cat    *catalog.Catalog
	web    web.Options // what the site adds to the server's options
	watch  bool        // follow the root with the watcher
	tokens *store.DB   // the login's tokens (nil: none can be read)
	// live runs once the catalog has every file, until ctx is done (the
	// team's mirror); nil for none.
	live func(ctx context.Context) error
}

// listenAndServe opens the library (or the demo, or a team's mirror),
// starts the watcher and serves HTTP on cfg.addr, telling out where.
func listenAndServe(ctx context.Context, out io.Writer, cfg config) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if cfg.from != "" {
		st, done, err := teamSite(ctx, out, log, cfg)
		if err != nil {
			return err
		}
		defer done()
		return serveSite(ctx, out, log, cfg, st)
	}
	root := cfg.root
	if root == "" {
		root = library.DefaultRoot()
	} else if fi, err := os.Stat(root); !cfg.demo && err != nil {
		// A folder named on purpose that is not there is a typo, not a wish for the demo.
		return usageError{fmt.Sprintf("--session-dir %s: no such folder (run with --demo for the built-in demo sessions)", root)}
	} else if !cfg.demo && !fi.IsDir() {
		return usageError{fmt.Sprintf("--session-dir %s: is a file, not a folder (give the folder that holds pi's project folders)", root)}
	}
	files, err := library.SessionFiles(root)
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
		cfg.demo, cfg.noCache, cfg.store = true, true, "" // the demo is small and temporary: a throwaway store
		files, _ = library.SessionFiles(root)
		fmt.Fprintf(out, "piweb: serving DEMO data: %s copied to %s\n", sessionCount(len(files), "built-in "), root)
	} else {
		fmt.Fprintf(out, "piweb: serving %s from %s\n", sessionCount(len(files), ""), root)
	}
	lib := library.NewLibrary(root)
	st, closeStore := openStore(ctx, out, log, cfg)
	defer closeStore()
	copt := catalog.Options{Logger: log}
	if st != nil {
		copt.Store = st
	}
	var tokens *store.DB
	if !cfg.noLogin && (cfg.publicURL != "" || !loopbackName(cfg.addr)) { // a login may be needed: its tokens
		var closeTokens func()
		tokens, closeTokens = tokenStore(ctx, log, cfg, st)
		defer closeTokens()
	}
	cat := catalog.New(lib, copt)
	var wopt web.Options
	if st != nil { // usage from the store; from the files until its first build is done, and while it is down
		wopt.Usage = storesource.New(usage.Stored{DB: st}, machineName(), storesource.Options{Settle: cat.Wait, Ready: cat.SearchReady(),
			Fallback: usage.NewFiles(lib, machineName())})
	}
	return serveSite(ctx, out, log, cfg, &site{root: root, lib: lib, cat: cat, web: wopt, watch: true, tokens: tokens})
}

// serveSite listens on cfg.addr and serves st until ctx is done.
func serveSite(ctx context.Context, out io.Writer, log *slog.Logger, cfg config, st *site) error {
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%s is already in use (is piweb already running?); pick another address with --addr 127.0.0.1:PORT", cfg.addr)
		}
		return fmt.Errorf("cannot listen on %s: %w", cfg.addr, err)
	}
	bound := ln.Addr().String()
	guard, err := loginGuard(ctx, out, cfg, bound, st)
	if err != nil {
		ln.Close()
		return err
	}
	lib, cat := st.lib, st.cat

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var w *watcher.Watcher
	if st.watch {
		if w, err = watcher.New(lib, watcher.Options{Logger: log}); err != nil {
			ln.Close()
			return err
		}
	}
	watched := make(chan error, 1)
	go func() {
		// After the catalog's fill: the watcher's first scan reads every
		// file the library does not hold yet, which the fill restores
		// from the store for much less.
		select {
		case <-cat.Ready():
			switch {
			case w != nil:
				watched <- w.Run(ctx)
			case st.live != nil:
				watched <- st.live(ctx)
			}
		case <-ctx.Done():
		}
	}()
	opt := st.web
	opt.Addr, opt.Root, opt.Demo, opt.Logger, opt.Home, opt.Catalog = bound, st.root, cfg.demo, log, homeDir(), cat
	opt.Login, opt.PublicURL, opt.AllowedOrigins = guard, cfg.publicURL, cfg.origins
	srv := web.New(lib, opt)
	cat.YieldTo(srv.Yield) // the index build lets pages go first
	hs := srv.HTTPServer()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	// The address first: the progress and "indexed" lines come after it,
	// however fast the fill.
	fmt.Fprintf(out, "piweb: open http://%s/\n", browserAddr(bound))
	if cfg.publicURL != "" {
		fmt.Fprintf(out, "piweb: reached at %s\n", cfg.publicURL)
	}
	cataloged := make(chan error, 1)
	go func() { cataloged <- cat.Run(ctx) }()
	go func() {
		// Once the library is filled, room for the index build's batches;
		// once the store holds every file, what serving holds (the list,
		// the trees people read) and no more.
		select {
		case <-cat.Ready():
		case <-ctx.Done():
			return
		}
		select {
		case <-cat.SearchReady():
		default:
			limitMemory(log, "the index build", 256<<20, 96<<20)
			select {
			case <-cat.SearchReady():
			case <-ctx.Done():
				return
			}
		}
		limitMemory(log, "serving", 160<<20, 64<<20)
	}()
	go reportProgress(ctx, out, cat)

	select {
	case err = <-served:
	case err = <-watched:
		if err != nil {
			err = fmt.Errorf("watching %s: %w", st.root, err)
		}
	case err = <-cataloged:
		cataloged = nil // done: nothing to wait for below
		if err != nil {
			err = fmt.Errorf("indexing %s: %w", st.root, err)
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

// loopbackName reports whether addr, before it is bound, names a loopback
// host (an address or localhost).
func loopbackName(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && (host == "localhost" || loopback(addr))
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

// limitMemory sets a soft memory limit, unless GOMEMLIMIT says otherwise:
// by default Go lets the heap grow to twice what is live before it
// collects, so a burst of requests would double piweb's memory. The limit
// leaves room for a quarter more than what is live now plus work bytes,
// and never less than floor; the GC works harder near it rather than
// growing past it. Freed memory goes back to the system.
func limitMemory(log *slog.Logger, why string, floor, work int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	limit := max(floor, int64(m.HeapAlloc)*5/4+work)
	debug.SetMemoryLimit(limit)
	debug.FreeOSMemory()
	log.Info("memory limit set", "MiB", limit>>20, "live MiB", m.HeapAlloc>>20, "for", why)
}
