package web

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
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

// errNoEntry refuses a reference to an entry the session does not hold.
func errNoEntry(key, ref string) error {
	return &sessions.Error{Kind: sessions.ErrNoEntry, Key: key, Entry: ref}
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
	var ne net.Error
	timedOut := errors.As(err, &ne) && ne.Timeout()
	if !timedOut && (errors.Is(err, context.Canceled) || errors.Is(req.Context().Err(), context.Canceled)) {
		return // the client went away
	}
	pe := classify(err)
	if se := (*sessions.Error)(nil); pe.status == http.StatusNotFound && errors.As(err, &se) && se.Kind == sessions.ErrNoSession && s.indexing() {
		// Not reached yet, rather than not there: ask again soon.
		pe = s.errStillIndexing(err)
		c.Response().Header().Set("Retry-After", "2")
	}
	attrs := []any{"method", req.Method, "path", req.URL.Path, "status", pe.status, "err", err}
	switch {
	case pe.status == http.StatusServiceUnavailable:
		s.log.Info("request refused: busy", attrs...)
	case pe.status >= 500:
		s.log.Error("request failed", attrs...)
	default:
		s.log.Info("request refused", attrs...)
	}
	if c.Response().Committed {
		return
	}
	if pe.status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "5")
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

// classify turns any error into what the user is told: the one mapping of
// failures (the library's and writers' kinds, the file system's, echo's and
// the server's own) to statuses and messages.
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
		case http.StatusRequestEntityTooLarge:
			p.msg = fmt.Sprintf("The request is larger than piweb accepts (%s).", views.Bytes(maxBody))
		}
		return p
	}
	var se *sessions.Error
	errors.As(err, &se)
	key, entry, version := "", "", 0
	if se != nil {
		key, entry, version = se.Key, se.Entry, se.Version
	}
	p := func(status int, title, msg string) *pageError {
		return &pageError{status: status, title: title, msg: msg, err: err}
	}
	var big *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return p(http.StatusRequestTimeout, "Too slow",
			"The request did not arrive in time, so piweb gave up on it and changed nothing.")
	case errors.As(err, &big):
		return p(http.StatusRequestEntityTooLarge, "Too large",
			fmt.Sprintf("The request is larger than piweb accepts (%s).", views.Bytes(big.Limit)))
	case errors.Is(err, sessions.ErrNoSession):
		return p(http.StatusNotFound, "Session not found",
			fmt.Sprintf("No session with key “%s” is indexed under the sessions root. It may have been moved or deleted.", key))
	case errors.Is(err, sessions.ErrNoEntry):
		return p(http.StatusNotFound, "Entry not found",
			fmt.Sprintf("This session has no entry “%s”. The link may be from another session or an older copy of the file.", entry))
	case errors.Is(err, sessions.ErrStale):
		return p(http.StatusConflict, "The session changed",
			"The session changed since this page showed it: pi (or another window) wrote to it. The tree now shows where it is; check it and try again.")
	case errors.Is(err, sessions.ErrBusy):
		return p(http.StatusConflict, "The session file is busy",
			"The session file kept changing while piweb tried to write to it (pi is probably working in it). Try again in a moment.")
	case errors.Is(err, sessions.ErrNoLeafID):
		return p(http.StatusConflict, "Cannot label here",
			"The last line of the session file has no id, so pi would resume from nothing after a new label. Rewind to an entry first.")
	case errors.Is(err, sessions.ErrNotUpgradable):
		return p(http.StatusConflict, "Nothing to upgrade",
			fmt.Sprintf("This session file is already in version %d, which pi does not rewrite.", version))
	case errors.Is(err, sessions.ErrElsewhere):
		machine := "another machine"
		if se != nil && se.Detail != "" {
			machine = se.Detail
		}
		return p(http.StatusConflict, "A copy of a session on "+machine, views.Elsewhere(machine))
	case errors.Is(err, sessions.ErrReadOnly):
		return readOnly(key, version, err)
	case errors.Is(err, sessions.ErrNoSpace):
		return p(http.StatusInsufficientStorage, "The disk is full",
			"The disk holding your sessions is full, so piweb wrote nothing: the session file is exactly as it was. Free some space and try again.")
	case errors.Is(err, sessions.ErrChanged):
		return p(http.StatusConflict, "The session file changed",
			"The file was rewritten or replaced on disk while piweb was using it. Reload the page and try again.")
	case errors.Is(err, sessions.ErrOutsideRoot):
		return p(http.StatusForbidden, "Outside the sessions root",
			"piweb reads and writes only inside the sessions root, and never through a symbolic link; this session's file or folder leads out of it.")
	case errors.Is(err, fs.ErrExist):
		return p(http.StatusConflict, "The file already exists",
			"A file of that name already exists next to the session; piweb never overwrites one. Move it away and try again.")
	case errors.Is(err, fs.ErrNotExist):
		return p(http.StatusNotFound, "Session file not found",
			"The session file is no longer on disk. It may have been moved or deleted.")
	case errors.Is(err, fs.ErrPermission):
		return p(http.StatusInternalServerError, "Permission denied",
			"piweb may not read or write this session's file or folder (permission denied). The details are in its log.")
	}
	return p(http.StatusInternalServerError, "Something went wrong",
		"piweb could not show this page. The details are in its log.")
}

// readOnly refuses a write to a file in a format piweb does not append to.
func readOnly(key string, version int, err error) *pageError {
	pe := &pageError{status: http.StatusLocked, title: "The session file is read-only", err: err}
	switch {
	case version == 1 || version == 2:
		pe.msg = fmt.Sprintf("This session file is in pi's old version %d format, which pi rewrites in place when it opens it, so piweb does not append to it. "+
			"Upgrade it first with the Upgrade button on its page (or POST /api/sessions/%s/upgrade with {\"confirm\": true}); the original is kept as a backup.", version, key)
	case version > 3:
		pe.msg = fmt.Sprintf("This session file is in version %d, newer than the format piweb knows (3), so piweb only shows it and never writes to it.", version)
	default:
		pe.msg = "This session cannot be changed: it is not a file piweb can write to."
	}
	return pe
}
