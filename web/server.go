// Package web serves piweb's pages: the sessions list, a session's tree and
// conversation, and live updates over server-sent events.
package web

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/watcher"
)

// Library is the session index the server reads.
type Library interface {
	List() []sessions.Meta
	View(id string, fn func(*sessions.Session) error) error
	Problems() map[string]error
	// Refresh re-reads a file after piweb wrote to it or created it.
	Refresh(file string) (id string, d sessions.Delta, err error)
}

// Events delivers session changes (from the watcher) to the live streams.
type Events interface {
	Subscribe() (<-chan watcher.Event, func())
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
	// Home is shortened to "~" in tool-call previews, as pi does with $HOME.
	Home string
}

// Server is piweb's HTTP server: echo routes over a Library, fed live by Events.
type Server struct {
	lib     Library
	events  Events
	opt     Options
	log     *slog.Logger
	echo    *echo.Echo
	hosts   hostAllowlist
	layouts *layoutCache
	md      *markdown

	quit     chan struct{} // closed by Close: live streams end
	quitOnce sync.Once
	streams  atomic.Int32 // live streams open now
}

// New builds a Server over lib; events may be nil (no live updates).
func New(lib Library, events Events, opt Options) *Server {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opt.Heartbeat <= 0 {
		opt.Heartbeat = 15 * time.Second
	}
	if opt.Home == "" {
		opt.Home, _ = os.UserHomeDir()
	}
	s := &Server{
		lib:     lib,
		events:  events,
		opt:     opt,
		log:     opt.Logger,
		hosts:   newHostAllowlist(opt.Addr),
		layouts: newLayoutCache(16),
		md:      newMarkdown(),
		quit:    make(chan struct{}),
	}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = s.handleError
	e.Use(s.secure)
	s.routes(e)
	s.echo = e
	return s
}

// routes registers every route. The JSON API and write actions will get their own file (api.go).
func (s *Server) routes(e *echo.Echo) {
	// Pages and assets answer HEAD too (net/http drops the body); live streams do not.
	page := []string{http.MethodGet, http.MethodHead}
	e.Match(page, "/", s.list)
	e.GET("/events", s.listEvents)
	e.Match(page, "/s/:id", s.session)
	e.Match(page, "/s/:id/rows", s.rows)
	e.Match(page, "/s/:id/entry", s.entry)
	e.GET("/s/:id/copy", s.copyText)
	e.GET("/s/:id/text", s.entryText)
	e.GET("/s/:id/events", s.sessionEvents)
	e.Match(page, "/static/*", s.asset)
	s.writeRoutes(e) // the JSON API and the session page's actions (api.go)
	// No catch-all route: echo's own 404 and 405 (with Allow) reach handleError.
}

// Handler returns the server's handler, with cross-origin protection for
// state-changing requests in front of the routes.
func (s *Server) Handler() http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(s.denyCrossOrigin))
	return cop.Handler(s.echo)
}

// Close ends the live event streams, so that an http.Server can shut down.
func (s *Server) Close() {
	s.quitOnce.Do(func() { close(s.quit) })
}
