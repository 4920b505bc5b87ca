package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// pageError is an error with what to tell the user; err holds the detail for the log.
type pageError struct {
	status int
	title  string
	msg    string
	err    error
}

func (e *pageError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("%d %s: %v", e.status, e.title, e.err)
	}
	return fmt.Sprintf("%d %s", e.status, e.title)
}

func (e *pageError) Unwrap() error { return e.err }

func errNotFound(what string) error {
	return &pageError{status: http.StatusNotFound, title: "Not found",
		msg: fmt.Sprintf("There is no such %s here.", what)}
}

func errNoSession(id string) error {
	return &pageError{status: http.StatusNotFound, title: "Session not found",
		msg: fmt.Sprintf("No session with id “%s” is indexed under the sessions root. It may have been moved or deleted.", id)}
}

func errNoEntry(ref string) error {
	return &pageError{status: http.StatusNotFound, title: "Entry not found",
		msg: fmt.Sprintf("This session has no entry “%s”. The link may be from another session or an older copy of the file.", ref)}
}

func errBadRequest(msg string, err error) error {
	return &pageError{status: http.StatusBadRequest, title: "Bad request", msg: msg, err: err}
}

func errForbiddenHost(host string) error {
	return &pageError{status: http.StatusForbidden, title: "Address not allowed",
		msg: "piweb only answers requests addressed to this computer (localhost). Open it through http://localhost instead.",
		err: fmt.Errorf("host %q not allowed", host)}
}

func errCrossOrigin(origin string) error {
	return &pageError{status: http.StatusForbidden, title: "Request from another site refused",
		msg: "piweb does not accept changes sent from other web sites.",
		err: fmt.Errorf("cross-origin request from %q", origin)}
}

// errStale answers a request for rows around a row the tree no longer shows.
func errStale() error {
	return &pageError{status: http.StatusConflict, title: "The tree changed",
		msg: "The session changed since this page was loaded. Reload the page to see it."}
}

// handleError is the one place errors become responses: it logs the detail
// and renders a friendly page, or a fragment for htmx, never the raw error.
func (s *Server) handleError(err error, c echo.Context) {
	req := c.Request()
	if errors.Is(err, context.Canceled) || errors.Is(req.Context().Err(), context.Canceled) {
		return // the client went away
	}
	pe := classify(err)
	attrs := []any{"method", req.Method, "path", req.URL.Path, "status", pe.status, "err", err}
	switch {
	case pe.status >= 500:
		s.log.Error("request failed", attrs...)
	default:
		s.log.Info("request refused", attrs...)
	}
	if c.Response().Committed {
		return
	}
	if req.Method == http.MethodHead || req.Header.Get("Accept") == "text/event-stream" {
		_ = c.NoContent(pe.status)
		return
	}
	if isAPI(req) {
		if err := renderAPIError(c, pe); err != nil {
			s.log.Error("rendering an API error", "err", err)
		}
		return
	}
	v := views.ErrorView{Status: pe.status, Title: pe.title, Message: pe.msg, Demo: s.opt.Demo}
	if isHTMX(c) {
		err = render(c, pe.status, views.ErrorBox(v))
	} else {
		err = render(c, pe.status, views.ErrorPage(v))
	}
	if err != nil {
		s.log.Error("rendering the error page", "err", err)
	}
}

// classify turns any error into what the user is told.
func classify(err error) *pageError {
	var pe *pageError
	if errors.As(err, &pe) {
		return pe
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		p := &pageError{status: he.Code, err: err, title: http.StatusText(he.Code),
			msg: "piweb cannot answer this request."}
		switch he.Code {
		case http.StatusNotFound:
			p.title, p.msg = "Not found", "There is no such page here."
		case http.StatusMethodNotAllowed:
			p.msg = "This address cannot be used that way."
		}
		return p
	}
	switch {
	case errors.Is(err, sessions.ErrNoSession):
		return &pageError{status: http.StatusNotFound, title: "Session not found", err: err,
			msg: "This session is no longer indexed. It may have been moved or deleted."}
	case errors.Is(err, sessions.ErrChanged):
		return &pageError{status: http.StatusConflict, title: "The session file changed", err: err,
			msg: "The file was rewritten on disk while piweb was reading it. Reload the page."}
	}
	return &pageError{status: http.StatusInternalServerError, title: "Something went wrong", err: err,
		msg: "piweb could not show this page. The details are in its log."}
}
