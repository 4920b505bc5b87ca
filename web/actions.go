package web

// Write actions: label, rewind, fork, export and upgrade, shared by the JSON
// API (api.go) and the session page's forms (the handlers at the end). The
// sessions package does the writing; this file finds the file, maps what can
// go wrong to what the user is told, and makes the change visible at once.

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
	"github.com/piweb/piweb/watcher"
)

// Publisher announces a change as the watcher would; the server publishes
// its own writes through Events when they implement it.
type Publisher interface {
	Publish(watcher.Event)
}

// writable is what a writer needs to know of a session before it writes.
type writable struct {
	h        *sessions.Session // the file and the root it is confined to (Session.Handle)
	version  int
	leafNoID bool // the last line has no id
}

// writable looks session id up in the library.
func (s *Server) writable(id string) (writable, error) {
	var w writable
	err := s.lib.View(id, func(ss *sessions.Session) error {
		w = writable{h: ss.Handle(), version: ss.Header.Version}
		if l := ss.Leaf(); l >= 0 {
			w.leafNoID = ss.Entries[l].ID == ""
		}
		return nil
	})
	if errors.Is(err, sessions.ErrNoSession) {
		return w, errNoSession(id)
	}
	return w, err
}

// refresh brings the library up to date with file right after a write, so
// the response and the next request see it, and publishes the change to the
// live streams (the watcher then finds nothing new when its own event comes).
func (s *Server) refresh(file string) {
	id, d, err := s.lib.Refresh(file)
	if err != nil {
		s.log.Warn("re-reading a session after a write", "file", file, "err", err)
		return
	}
	pub, ok := s.events.(Publisher)
	if !ok || !d.Changed() {
		return
	}
	ev := watcher.Event{SessionID: id, File: file}
	err = s.lib.View(id, func(ss *sessions.Session) error {
		if l := ss.Leaf(); l >= 0 {
			ev.Leaf = ss.Entries[l].ID
		}
		switch {
		case d.Reloaded && d.OldLeaf < 0:
			ev.Kind = watcher.KindNew
			return nil
		case d.Reloaded:
			ev.Kind = watcher.KindReload
			return nil
		}
		ev.Kind = watcher.KindAppend
		if d.OldLeaf >= 0 && d.OldLeaf < len(ss.Entries) {
			ev.OldLeaf = ss.Entries[d.OldLeaf].ID
		}
		for _, i := range d.New {
			if ss.Entries[i].ID == "" {
				ev.Kind, ev.NewIDs = watcher.KindReload, nil // ids cannot name it: clients re-read
				return nil
			}
			ev.NewIDs = append(ev.NewIDs, ss.Entries[i].ID)
		}
		return nil
	})
	if err == nil {
		pub.Publish(ev)
	}
}

// writeError turns what a writer returned into what the user is told.
func writeError(id, ref string, version int, err error) error {
	var pe *pageError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe):
		return err
	case errors.Is(err, sessions.ErrNoSession):
		return errNoSession(id)
	case errors.Is(err, sessions.ErrNoEntry):
		return errNoEntry(ref)
	case errors.Is(err, sessions.ErrStale):
		return &pageError{status: http.StatusConflict, title: "The session changed", err: err,
			msg: "The session changed since this page showed it: pi (or another window) wrote to it. The tree now shows where it is; check it and try again."}
	case errors.Is(err, sessions.ErrBusy):
		return &pageError{status: http.StatusConflict, title: "The session file is busy", err: err,
			msg: "The session file kept changing while piweb tried to write to it (pi is probably working in it). Try again in a moment."}
	case errors.Is(err, sessions.ErrReadOnly):
		return errReadOnly(id, version, err)
	case errors.Is(err, sessions.ErrOutsideRoot):
		return &pageError{status: http.StatusForbidden, title: "Outside the sessions root", err: err,
			msg: "piweb writes only inside the sessions root, and never through a symbolic link; this session's file or folder leads out of it."}
	case errors.Is(err, fs.ErrExist):
		return &pageError{status: http.StatusConflict, title: "The file already exists", err: err,
			msg: "A file of that name already exists next to the session; piweb never overwrites one. Move it away and try again."}
	case errors.Is(err, fs.ErrNotExist):
		return &pageError{status: http.StatusNotFound, title: "Session file not found", err: err,
			msg: "The session file is no longer on disk. It may have been moved or deleted."}
	case errors.Is(err, fs.ErrPermission):
		return &pageError{status: http.StatusInternalServerError, title: "Permission denied", err: err,
			msg: "piweb may not write to this session's folder (permission denied). The details are in its log."}
	}
	return err
}

// errReadOnly refuses a write to a version 1 or 2 file and says how to upgrade it.
func errReadOnly(id string, version int, err error) error {
	v := "an old format"
	if version > 0 {
		v = fmt.Sprintf("pi's old version %d format", version)
	}
	return &pageError{status: http.StatusLocked, title: "The session file is read-only", err: err,
		msg: fmt.Sprintf("This session file is in %s, which pi rewrites in place when it opens it, so piweb does not append to it. "+
			"Upgrade it first with the Upgrade button on its page (or POST /api/sessions/%s/upgrade with {\"confirm\": true}); the original is kept as a backup.", v, id)}
}

// label sets (or, with an empty label, clears) the label of entry ref and returns the new entry's id.
func (s *Server) label(id, ref, label string) (string, error) {
	w, err := s.writable(id)
	if err != nil {
		return "", err
	}
	if w.version < 3 {
		return "", errReadOnly(id, w.version, sessions.ErrReadOnly)
	}
	if w.leafNoID {
		return "", &pageError{status: http.StatusConflict, title: "Cannot label here",
			msg: "The last line of the session file has no id, so pi would resume from nothing after a new label. Rewind to an entry first."}
	}
	nid, err := s.indexedWrite(id, w, func(ss *sessions.Session) (string, error) { return sessions.Label(ss, ref, label) })
	if err != nil {
		return "", writeError(id, ref, w.version, err)
	}
	s.refresh(w.h.File)
	return nid, nil
}

// indexedWrite runs an appending writer on the library's index of session
// id, under its read lock, so the writer can start from that index when the
// file still holds exactly what it indexed (else it reads the file again).
// A session the library dropped meanwhile is written through w's handle.
func (s *Server) indexedWrite(id string, w writable, write func(*sessions.Session) (string, error)) (string, error) {
	var nid string
	var werr error
	err := s.lib.View(id, func(ss *sessions.Session) error {
		if ss.File != w.h.File {
			nid, werr = write(w.h) // another file took the id: write where the check was made
			return nil
		}
		nid, werr = write(ss)
		return nil
	})
	if errors.Is(err, sessions.ErrNoSession) {
		return write(w.h)
	}
	if err != nil {
		return "", err
	}
	return nid, werr
}

// rewind makes pi resume from entry ref ("" for before the first entry),
// refusing when the session's leaf is no longer expectLeaf (when given).
func (s *Server) rewind(id, ref, summary, expectLeaf string) (string, error) {
	w, err := s.writable(id)
	if err != nil {
		return "", err
	}
	if w.version < 3 {
		return "", errReadOnly(id, w.version, sessions.ErrReadOnly)
	}
	nid, err := s.indexedWrite(id, w, func(ss *sessions.Session) (string, error) {
		return sessions.Rewind(ss, ref, summary, sessions.Guard{Leaf: expectLeaf})
	})
	if err != nil {
		return "", writeError(id, ref, w.version, err)
	}
	s.refresh(w.h.File)
	return nid, nil
}

// fork writes the path to entry ref as a new session file beside session id's.
func (s *Server) fork(id, ref string) (views.ForkResult, error) {
	w, err := s.writable(id)
	if err != nil {
		return views.ForkResult{}, err
	}
	nid, file, err := sessions.Fork(w.h, ref)
	if err != nil {
		return views.ForkResult{}, writeError(id, ref, w.version, err)
	}
	s.refresh(file)
	return views.ForkResult{ID: nid, File: file, Command: "pi --session " + shellQuote(file)}, nil
}

// upgrade migrates a version 1 or 2 file to version 3 and returns the backup's path.
func (s *Server) upgrade(id string) (string, error) {
	w, err := s.writable(id)
	if err != nil {
		return "", err
	}
	if w.version >= 3 {
		return "", &pageError{status: http.StatusConflict, title: "Nothing to upgrade",
			msg: fmt.Sprintf("This session file is already in version %d, the format piweb writes to.", w.version)}
	}
	backup, err := w.h.Upgrade()
	if err != nil {
		return "", writeError(id, "", w.version, err)
	}
	s.refresh(w.h.File)
	return backup, nil
}

// shellQuote single-quotes s for a POSIX shell, closing and reopening the quotes around each quote inside it.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// --- the session page's forms ----------------------------------------------

// actionsView describes the actions on entry i of ss.
func actionsView(ss *sessions.Session, i int) views.ActionsView {
	a := views.ActionsView{SessionID: ss.Header.ID, Ref: ss.Entries[i].ID, Label: ss.LabelOf(i), Version: ss.Header.Version}
	if l := ss.Leaf(); l >= 0 {
		a.Leaf = ss.Entries[l].ID
		a.LeafNoID = a.Leaf == ""
	}
	return a
}

// outcome is what an action did, for the panel that shows it.
type outcome struct {
	views.ActionsView        // only the outcome fields are used
	label             bool   // the label changed: update the conversation header too
	ref               string // the entry the panel is for
}

// settle records err in o when the user can act on it (a refusal, shown in
// the panel); anything else is returned for the central error handler.
func (s *Server) settle(c echo.Context, o *outcome, err error) error {
	if err == nil {
		return nil
	}
	pe := classify(err)
	if pe.status >= 500 {
		return err
	}
	s.log.Info("action refused", "path", c.Request().URL.Path, "status", pe.status, "err", err)
	o.Message, o.Failed = pe.msg, true
	return nil
}

// renderActions re-renders the actions panel of entry o.ref with the
// outcome. A form posted without htmx (no script) goes back to the page.
func (s *Server) renderActions(c echo.Context, id string, o outcome) error {
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, views.StateURL(id, views.TreeState{Target: o.ref}))
	}
	var a views.ActionsView
	err := s.view(id, func(ss *sessions.Session, _ *sessions.Reader) error {
		i, ok := resolve(ss, o.ref)
		if !ok {
			return errNoEntry(o.ref)
		}
		a = actionsView(ss, i)
		return nil
	})
	if err != nil {
		return err
	}
	a.Open, a.Message, a.Failed, a.Summary, a.Draft = o.Open, o.Message, o.Failed, o.Summary, o.Draft
	a.Fork, a.Saved, a.Backup = o.Fork, o.Saved, o.Backup
	if o.label {
		return respond(c, templ.Join(views.EntryActions(a), views.ConvLabel(a.Label, true)))
	}
	return respond(c, views.EntryActions(a))
}

// actLabel is the label form.
func (s *Server) actLabel(c echo.Context) error {
	id, ref, text := sessionID(c), c.FormValue("entry"), c.FormValue("label")
	o := outcome{ref: ref}
	o.Open = "label"
	_, err := s.label(id, ref, text)
	if err := s.settle(c, &o, err); err != nil {
		return err
	}
	switch {
	case o.Failed:
		o.Draft = &text
	case strings.TrimSpace(text) == "":
		o.Message, o.Open, o.label = "Label cleared.", "", true
	default:
		o.Message, o.Open, o.label = "Label saved.", "", true
	}
	return s.renderActions(c, id, o)
}

// actRewind is the rewind form.
func (s *Server) actRewind(c echo.Context) error {
	id, ref, summary := sessionID(c), c.FormValue("entry"), c.FormValue("summary")
	o := outcome{ref: ref}
	o.Open = "rewind"
	nid, err := s.rewind(id, ref, summary, c.FormValue("expectLeaf"))
	if err := s.settle(c, &o, err); err != nil {
		return err
	}
	if o.Failed {
		o.Summary = summary
	} else {
		o.Open = ""
		o.Message = "Rewound: pi resumes from this entry the next time it opens the session (entry " + nid + " records it)."
	}
	return s.renderActions(c, id, o)
}

// actFork is the fork form.
func (s *Server) actFork(c echo.Context) error {
	id, ref := sessionID(c), c.FormValue("entry")
	o := outcome{ref: ref}
	o.Open = "fork"
	f, err := s.fork(id, ref)
	if err := s.settle(c, &o, err); err != nil {
		return err
	}
	if !o.Failed {
		o.Fork = &f
		o.Message = "Forked into a new session."
	}
	return s.renderActions(c, id, o)
}

// actUpgrade is the upgrade button of a read-only session.
func (s *Server) actUpgrade(c echo.Context) error {
	id, ref := sessionID(c), c.FormValue("entry")
	o := outcome{ref: ref}
	if c.FormValue("confirm") != "true" {
		return errBadRequest("The upgrade was not confirmed.", nil)
	}
	backup, err := s.upgrade(id)
	if err := s.settle(c, &o, err); err != nil {
		return err
	}
	if !o.Failed {
		o.Backup = backup
		o.Message = "Upgraded to version 3: labelling and rewinding are on."
	}
	return s.renderActions(c, id, o)
}

// actShare is the share form's "Save next to the session" button.
func (s *Server) actShare(c echo.Context) error {
	id, ref := sessionID(c), c.FormValue("leaf")
	o := outcome{ref: ref}
	o.Open = "share"
	q, err := exportQuery(ref, c.FormValue("format"), formValues(c, "redact"))
	if err != nil {
		return err
	}
	path, err := s.saveExport(id, q)
	if err := s.settle(c, &o, err); err != nil {
		return err
	}
	if !o.Failed {
		o.Saved = path
		o.Message = "Saved next to the session."
	}
	return s.renderActions(c, id, o)
}

// formValues returns every value of a form field.
func formValues(c echo.Context, name string) []string {
	if err := c.Request().ParseForm(); err != nil {
		return nil
	}
	return c.Request().Form[name]
}
