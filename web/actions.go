package web

// Write actions: label, rewind, fork, export and upgrade, shared by the JSON
// API (api.go) and the session page's forms (the handlers at the end). The
// library does the writing, one write to a file at a time, and publishes
// the change to the live streams; errors are mapped once, by classify.

import (
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// fork writes the path to entry ref as a new session file beside session key's.
func (s *Server) fork(key, ref string) (views.ForkResult, error) {
	f, err := s.lib.Fork(key, ref)
	if err != nil {
		return views.ForkResult{}, err
	}
	return views.ForkResult{ID: f.ID, Key: f.Key, File: f.File, Command: "pi --session " + shellQuote(f.File)}, nil
}

// shellQuote single-quotes s for a POSIX shell, closing and reopening the quotes around each quote inside it.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// --- the session page's forms ----------------------------------------------

// actionsView describes the actions on entry i of ss, the session with key.
func actionsView(key string, ss *sessions.Session, i int) views.ActionsView {
	a := views.ActionsView{Key: key, Ref: ss.Entries[i].ID, Label: ss.LabelOf(i), Version: ss.Header.Version, File: ss.File}
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
// the panel, worded by classify); anything else is returned for the central
// error handler.
func (s *Server) settle(c echo.Context, o *outcome, err error) error {
	if err == nil {
		return nil
	}
	pe := classify(err)
	if pe.status >= 500 && pe.status != http.StatusInsufficientStorage {
		return err
	}
	s.log.Info("action refused", "path", c.Request().URL.Path, "status", pe.status, "err", err)
	o.Message, o.Failed = pe.msg, true
	return nil
}

// renderActions re-renders the actions panel of entry o.ref with the
// outcome. A form posted without htmx (no script) goes back to the page.
func (s *Server) renderActions(c echo.Context, key string, o outcome) error {
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, views.StateURL(key, views.TreeState{Target: o.ref}))
	}
	var a views.ActionsView
	err := s.view(key, func(ss *sessions.Session, _ *sessions.Reader) error {
		i, ok := resolve(ss, o.ref)
		if !ok {
			return errNoEntry(key, o.ref)
		}
		a = actionsView(key, ss, i)
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
	if err := readForm(c); err != nil {
		return err
	}
	key, ref, text := sessionKey(c), c.FormValue("entry"), c.FormValue("label")
	o := outcome{ref: ref}
	o.Open = "label"
	_, err := s.lib.Label(key, ref, text)
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
	return s.renderActions(c, key, o)
}

// actRewind is the rewind form.
func (s *Server) actRewind(c echo.Context) error {
	if err := readForm(c); err != nil {
		return err
	}
	key, ref, summary := sessionKey(c), c.FormValue("entry"), c.FormValue("summary")
	o := outcome{ref: ref}
	o.Open = "rewind"
	nid, err := s.lib.Rewind(key, ref, summary, sessions.Guard{Leaf: c.FormValue("expectLeaf")})
	if err := s.settle(c, &o, err); err != nil {
		return err
	}
	if o.Failed {
		o.Summary = summary
	} else {
		o.Open = ""
		o.Message = "Rewound: pi resumes from this entry the next time it opens the session (entry " + nid + " records it)."
	}
	return s.renderActions(c, key, o)
}

// actFork is the fork form.
func (s *Server) actFork(c echo.Context) error {
	if err := readForm(c); err != nil {
		return err
	}
	key, ref := sessionKey(c), c.FormValue("entry")
	o := outcome{ref: ref}
	o.Open = "fork"
	f, err := s.fork(key, ref)
	if err := s.settle(c, &o, err); err != nil {
		return err
	}
	if !o.Failed {
		o.Fork = &f
		o.Message = "Forked into a new session."
	}
	return s.renderActions(c, key, o)
}

// actUpgrade is the upgrade button of a read-only session.
func (s *Server) actUpgrade(c echo.Context) error {
	if err := readForm(c); err != nil {
		return err
	}
	key, ref := sessionKey(c), c.FormValue("entry")
	o := outcome{ref: ref}
	if c.FormValue("confirm") != "true" {
		return errBadRequest("The upgrade was not confirmed.", nil)
	}
	backup, err := s.lib.Upgrade(key)
	if err := s.settle(c, &o, err); err != nil {
		return err
	}
	if !o.Failed {
		o.Backup = backup
		o.Message = "Upgraded to version 3: labelling and rewinding are on."
	}
	return s.renderActions(c, key, o)
}

// actShare is the share form's "Save next to the session" button.
func (s *Server) actShare(c echo.Context) error {
	if err := readForm(c); err != nil {
		return err
	}
	key, ref := sessionKey(c), c.FormValue("leaf")
	o := outcome{ref: ref}
	o.Open = "share"
	q, err := exportQuery(ref, c.FormValue("format"), formValues(c, "redact"))
	if err != nil {
		return err
	}
	path, err := s.saveExport(key, q)
	if err := s.settle(c, &o, err); err != nil {
		return err
	}
	if !o.Failed {
		o.Saved = path
		o.Message = "Saved next to the session."
	}
	return s.renderActions(c, key, o)
}

// formValues returns every value of a form field.
func formValues(c echo.Context, name string) []string {
	if err := c.Request().ParseForm(); err != nil {
		return nil
	}
	return c.Request().Form[name]
}
