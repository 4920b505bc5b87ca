// Package web serves piweb's pages: the sessions list, a session's tree and
// conversation, the JSON API and the write actions, and live updates over
// server-sent events.
package web

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/piweb/piweb/auth"
	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/usage"
	"github.com/piweb/piweb/writer"
)

// Library is the session index the server reads, writes through and
// follows: library.Library.
type Library interface {
	List() []sessions.Meta
	// Listed returns List's rows shared (read only) and the library's
	// version, which changes before any change to them is published.
	Listed() ([]sessions.Meta, uint64)
	Meta(key string) (sessions.Meta, error)
	// Forks returns the sessions forked from the one with key.
	Forks(key string) []sessions.Meta
	// ForkPoint returns the entry of parent that child was forked from.
	ForkPoint(child, parent string) string
	View(key string, fn func(*sessions.Session) error) error
	Problems() map[string]error
	// Subscribe returns the library's changes from now on, and a func to stop.
	Subscribe() (<-chan library.Change, func())

	Label(key, target, label string) (string, error)
	Rewind(key, target, summary string, guard writer.Guard) (string, error)
	Fork(key, entry string) (library.Forked, error)
	Upgrade(key string) (backup string, err error)
	SaveBesideTo(key, name string, write func(io.Writer) error) (string, error)
}

// Options configure a Server.
type Options struct {
	// Addr is the address the server is bound to; its host is allowed in Host headers.
	Addr string
	// Root is the sessions root, shown on the sessions page.
	Root string
	// Demo marks the sessions as the built-in demo set.
	Demo bool
	// Logger receives request errors; nil logs to stderr.
	Logger *slog.Logger
	// Heartbeat is the interval of keep-alive comments on event streams (default 15s).
	Heartbeat time.Duration
	// Home is shortened to "~" in tool-call previews, as pi does with $HOME ("" shortens nothing).
	Home string
	// ReadTimeout bounds reading a whole request, headers and body (default
	// 30s; headers alone get a third of it), so a body that trickles in
	// cannot hold a connection. Live streams lift it once they start.
	ReadTimeout time.Duration
	// WriteIdle drops a client that reads nothing of an export or a live
	// stream for this long (default 30s): the write fails, and the export
	// slot or the stream is let go, so slow readers cannot hold them.
	WriteIdle time.Duration
	// Exports is how many exports (HTML and JSONL shares, saved or
	// downloaded) may be built at once (default 2); more get 503 with
	// Retry-After, so a few large ones cannot take all the memory.
	Exports int
	// Catalog indexes the library in the background and searches it; nil
	// with a *library.Library searches it by scanning (tests).
	Catalog *catalog.Catalog
	// Usage holds the rows of /usage and /api/usage; nil reads them from
	// the library's files (usage.Files).
	Usage usage.Source
	// Login, when set, requires a login for everything but the static
	// assets and the login page itself (auth.go).
	Login *auth.Guard
	// PublicURL is where people reach piweb through a proxy or a
	// forwarded port (https://piweb.example.com): its host is allowed,
	// its origin trusted, and with https the login cookie is Secure.
	PublicURL string
	// AllowedOrigins are more origins (scheme://host[:port]) whose
	// requests are taken; their hosts are allowed too.
	AllowedOrigins []string
	// Machine names the machine each session file lives on, on a team
	// server, whose sessions are copies: the rows of /api/sessions carry
	// it, the sessions page groups and filters by it, and the write
	// buttons say where to write instead (the library refuses writes).
	Machine func(file string) string
}

// Server is piweb's HTTP server: echo routes over a Library, fed live by its changes.
type Server struct {
	lib     Library
	opt     Options
	log     *slog.Logger
	echo    *echo.Echo
	hosts   hostAllowlist
	layouts *layoutCache
	md      *markdown
	exports chan struct{}            // one token per export being built
	steps   *lru[liveKey, *liveStep] // each live change's answer, shared by the streams that see it
	lists   *listPages               // drawn sessions lists
	cat     *catalog.Catalog
	usage   usage.Source

	quit     chan struct{} // closed by Close: live streams end
	quitOnce sync.Once
	streams  atomic.Int32 // live streams open now
	traffic  traffic      // requests being served, for Yield
}

// New builds a Server over lib.
func New(lib Library, opt Options) *Server {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opt.Heartbeat <= 0 {
		opt.Heartbeat = 15 * time.Second
	}
	if opt.Exports <= 0 {
		opt.Exports = 2
	}
	if opt.WriteIdle <= 0 {
		opt.WriteIdle = 30 * time.Second
	}
	if opt.ReadTimeout <= 0 {
		opt.ReadTimeout = 30 * time.Second
	}
	s := &Server{
		lib:     lib,
		opt:     opt,
		log:     opt.Logger,
		hosts:   newHostAllowlist(opt.Addr, append([]string{opt.PublicURL}, opt.AllowedOrigins...)...),
		layouts: newLayoutCache(16, layoutBudget, ledgerBudget),
		md:      newMarkdown(),
		exports: make(chan struct{}, opt.Exports),
		lists:   newListPages(16, listsBudget),
		steps:   newLRU[liveKey, *liveStep](liveKept, liveBudget),
		quit:    make(chan struct{}),
		cat:     opt.Catalog,
		usage:   opt.Usage,
	}
	if s.usage == nil {
		s.usage = newUsageSource(lib)
	}
	if l, ok := lib.(*library.Library); ok && s.cat == nil {
		s.cat = catalog.Loaded(l, catalog.Options{Logger: opt.Logger})
	}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = s.handleError
	// A handler that panics answers 500 (through handleError) and is
	// logged with its stack, rather than dropping the connection.
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableStackAll: true, // the stack of the panicking goroutine alone
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.log.Error("a handler panicked", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err, "stack", string(stack))
			return err
		},
	}))
	s.traffic.max = maxYield
	e.Use(s.traffic.counted, s.secure, s.authenticate, limitBody, middleware.GzipWithConfig(middleware.GzipConfig{
		// Text compresses 5-10x; level 2 costs a third of the CPU of level
		// 5 for 15% more bytes (a session page: 24 KB against 21 KB), and
		// a quarter of the default's. Live streams stay uncompressed: each
		// event must reach the page at once.
		Level: 2, MinLength: 1024,
		Skipper: func(c echo.Context) bool {
			p := c.Request().URL.Path
			return liveStream(p) || p == "/" // the sessions list compresses itself (list.go)
		},
	}))
	s.routes(e)
	s.echo = e
	return s
}

// liveStream reports whether path is a live stream's (/events,
// /s/KEY/events, /usage/events).
func liveStream(path string) bool { return strings.HasSuffix(path, "/events") }

// routes registers every route: the pages, the JSON API and the page's
// action forms. There is no catch-all route: echo's own 404 and 405 (with
// Allow) reach handleError.
func (s *Server) routes(e *echo.Echo) {
	// Pages and assets answer HEAD too (net/http drops the body); live streams do not.
	page := []string{http.MethodGet, http.MethodHead}
	e.Match(page, "/", s.list)
	e.GET("/events", s.listEvents)
	e.Match(page, "/s/:key", s.session)
	e.Match(page, "/s/:key/rows", s.rows)
	e.Match(page, "/s/:key/entry", s.entry)
	e.GET("/s/:key/copy", s.copyText)
	e.GET("/s/:key/text", s.entryText)
	e.GET("/s/:key/events", s.sessionEvents)
	e.GET("/s/:key/export", s.export)
	e.GET("/s/:key/redactions", s.redactions)
	e.GET("/s/:key/patch", s.patchFile)
	e.GET("/s/:key/compare", s.comparePage)
	e.GET("/s/:key/map", s.sessionMap)
	e.GET("/s/:key/minimap", s.minimap)
	e.GET("/s/:key/family.svg", s.familySVG)
	e.POST("/s/:key/actions/label", s.actLabel)
	e.POST("/s/:key/actions/rewind", s.actRewind)
	e.POST("/s/:key/actions/fork", s.actFork)
	e.POST("/s/:key/actions/share", s.actShare)
	e.POST("/s/:key/actions/upgrade", s.actUpgrade)
	e.Match(page, "/static/*", s.asset)
	e.Match(page, "/search", s.searchPage)
	e.Match(page, "/palette", s.palette)
	e.Match(page, "/index/progress", s.indexProgress)
	e.Match(page, "/usage", s.usagePage)
	e.GET("/usage/events", s.usageEvents)
	e.Match(page, "/login", s.loginPage)
	e.POST("/login", s.login)
	e.POST("/logout", s.logout)

	api := e.Group("/api")
	api.GET("/sessions", s.apiList)
	api.GET("/search", s.apiSearch)
	api.GET("/index", s.apiIndex)
	api.GET("/usage", s.apiUsage)
	api.GET("/sessions/:key", s.apiSession)
	api.POST("/sessions/:key/label", s.apiLabel)
	api.POST("/sessions/:key/rewind", s.apiRewind)
	api.POST("/sessions/:key/fork", s.apiFork)
	api.GET("/sessions/:key/export", s.export)
	api.GET("/sessions/:key/stats", s.apiStats)
	api.GET("/sessions/:key/files", s.apiFiles)
	api.GET("/sessions/:key/compare", s.apiCompare)
	api.POST("/sessions/:key/export", s.apiSaveExport)
	api.POST("/sessions/:key/upgrade", s.apiUpgrade)
}

// Handler returns the server's handler, with cross-origin protection for
// state-changing requests in front of the routes.
func (s *Server) Handler() http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(s.denyCrossOrigin))
	for _, o := range append([]string{s.opt.PublicURL}, s.opt.AllowedOrigins...) {
		if o == "" {
			continue
		}
		if err := cop.AddTrustedOrigin(Origin(o)); err != nil {
			s.log.Warn("an allowed origin is not scheme://host[:port]: left out", "origin", o, "err", err)
		}
	}
	return cop.Handler(s.echo)
}

// HTTPServer returns an http.Server for the handler with piweb's limits:
// slow headers and slow bodies time out, headers are capped, idle
// connections close.
func (s *Server) HTTPServer() *http.Server {
	hs := &http.Server{Handler: s.Handler(), ReadTimeout: s.opt.ReadTimeout, ReadHeaderTimeout: s.opt.ReadTimeout / 3,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	hs.RegisterOnShutdown(s.Close)
	return hs
}

// Close ends the live event streams, so that an http.Server can shut down,
// and empties the caches.
func (s *Server) Close() {
	s.quitOnce.Do(func() {
		close(s.quit)
		s.layouts.clear()
		s.layouts.ledgers.clear()
		s.layouts.search.clear()
		s.lists.drawn.clear()
		s.steps.clear()
	})
}
