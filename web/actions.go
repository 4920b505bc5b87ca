package web

// Write actions: label, rewind, fork, export and upgrade, shared by the JSON
// API (api.go) and the session page's forms (the handlers at the end). The
// library does the writing, one write to a file at a time, and publishes
// the change to the live streams; errors are mapped once, by classify.

import (
	"cmp"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
	"github.com/piweb/piweb/writer"
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
func (s *Server) actionsView(key string, ss *sessions.Session, r *sessions.Reader, i int) views.ActionsView {
	e := &ss.Entries[i]
	a := views.ActionsView{Key: key, Ref: e.ID, Kind: entryKind(e), Label: ss.LabelOf(i), Version: ss.Header.Version, File: ss.File}
	if s.opt.Machine != nil {
		a.Machine = cmp.Or(s.opt.Machine(ss.File), "another machine")
	}
	if b, err := r.Body(i); err == nil {
		a.Preview = oneLine(entryPreview(b), 80)
	}
	if l := ss.Leaf(); l >= 0 {
		a.Leaf = ss.Entries[l].ID
		a.LeafNoID = a.Leaf == ""
	}
	return a
}

// entryKind names an entry for people: its role, or its type.
func entryKind(e *sessions.Entry) string {
	if e.Type == sessions.TypeMessage && e.Role != "" {
		return e.Role
	}
	return strings.ReplaceAll(e.Type, "_", " ")
}

// entryPreview is a short text that tells an entry apart: what pi's ctrl+x
// copies, else its full text.
func entryPreview(b *sessions.Body) string {
	if t := b.CopyText(); strings.TrimSpace(t) != "" {
		return t
	}
	t := fullText(b)
	if len(t) > 400 {
		t = t[:400]
	}
	return t
}

// form is what an action form did: which of its fields to show again, and
// the outcome card to add to the page.
type form struct {
	ref     string // the entry the panel is for
	open    string // the form to keep open (a refusal keeps it)
	summary string // a refused rewind's summary, shown again
	draft   *string
	label   bool   // the label changed: update the header and the card too
	about   string // the entry the outcome names, when not the panel's (an undo)
	outcome views.Outcome
}

// settle records err in f's outcome when the user can act on it (a
// refusal, worded by classify); anything else is returned for the central
// error handler.
func (s *Server) settle(c echo.Context, f *form, err error) error {
	if err == nil {
		return nil
	}
	pe := classify(err)
	if pe.status >= 500 && pe.status != http.StatusInsufficientStorage {
		return err
	}
	s.log.Info("action refused", "path", c.Request().URL.Path, "status", pe.status, "err", err)
	f.outcome.Message, f.outcome.Failed = pe.msg, true
	return nil
}

// renderActions re-renders the actions panel of entry f.ref and adds the
// outcome card to the page's outcomes, where it stays until dismissed. A
// form posted without htmx (no script) goes back to the page.
func (s *Server) renderActions(c echo.Context, key string, f form) error {
	if !isHTMX(c) {
		return c.Redirect(http.StatusSeeOther, views.StateURL(key, views.TreeState{Target: f.ref}))
	}
	var a views.ActionsView
	var labelPos = -1
	err := s.view(key, func(ss *sessions.Session, r *sessions.Reader) error {
		i, ok := resolve(ss, f.ref)
		if !ok {
			return errNoEntry(key, f.ref)
		}
		a, labelPos = s.actionsView(key, ss, r, i), i
		return nil
	})
	if err != nil {
		return err
	}
	if !f.outcome.Failed {
		f.open = ""
	}
	a.Open, a.Failed, a.Summary, a.Draft = f.open, f.outcome.Failed, f.summary, f.draft
	o := f.outcome
	o.Ref, o.Preview = a.Ref, a.Preview
	if f.about != "" && f.about != a.Ref {
		o.Ref, o.Preview = f.about, ""
	}
	parts := []templ.Component{views.EntryActions(a), views.OutcomeCard(o)}
	if f.label && !o.Failed {
		parts = append(parts, views.ConvLabel(a.Label, true), views.ItemLabel("lm"+views.Itoa(labelPos), a.Label, true))
	}
	return respond(c, templ.Join(parts...))
}

// actLabel is the label form.
func (s *Server) actLabel(c echo.Context) error {
	if err := readForm(c); err != nil {
		return err
	}
	key, ref, text := sessionKey(c), c.FormValue("entry"), c.FormValue("label")
	f := form{ref: ref, open: "label", label: true, outcome: views.Outcome{Action: "Label"}}
	_, err := s.lib.Label(key, ref, text)
	if err := s.settle(c, &f, err); err != nil {
		return err
	}
	switch {
	case f.outcome.Failed:
		f.draft = &text
	case strings.TrimSpace(text) == "":
		f.outcome.Message = "Label cleared."
	default:
		f.outcome.Message = "Label saved."
	}
	return s.renderActions(c, key, f)
}

// actRewind is the rewind form, and the Undo of a rewind's card (undo=1):
// a rewind back to the leaf before, drawing the panel of entry panel.
func (s *Server) actRewind(c echo.Context) error {
	if err := readForm(c); err != nil {
		return err
	}
	key, ref, summary, prev := sessionKey(c), c.FormValue("entry"), c.FormValue("summary"), c.FormValue("expectLeaf")
	undo := c.FormValue("undo") == "1"
	f := form{ref: ref, open: "rewind", summary: summary, outcome: views.Outcome{Action: "Rewind"}}
	if undo {
		f = form{ref: cmp.Or(c.FormValue("panel"), ref), outcome: views.Outcome{Action: "Undo rewind"}, about: ref}
	}
	nid, err := s.lib.Rewind(key, ref, summary, writer.Guard{Leaf: prev})
	if err := s.settle(c, &f, err); err != nil {
		return err
	}
	switch {
	case f.outcome.Failed:
	case undo:
		f.outcome.Message = "Undone: pi resumes from " + ref + " again, where it was before the rewind (entry " + nid + " records it)."
	default:
		f.summary = ""
		f.outcome.Message = "Rewound: pi resumes from this entry the next time it opens the session (entry " + nid + " records it)."
		if prev != "" && prev != ref {
			f.outcome.Undo = &views.Undo{URL: views.SessionURL(key) + "/actions/rewind", Entry: prev, Expect: nid, Panel: ref}
		}
	}
	return s.renderActions(c, key, f)
}

// actFork is the fork form.
func (s *Server) actFork(c echo.Context) error {
	if err := readForm(c); err != nil {
		return err
	}
	key, ref := sessionKey(c), c.FormValue("entry")
	f := form{ref: ref, open: "fork", outcome: views.Outcome{Action: "Fork"}}
	fr, err := s.fork(key, ref)
	if err := s.settle(c, &f, err); err != nil {
		return err
	}
	if !f.outcome.Failed {
		f.outcome.Fork = &fr
		f.outcome.Message = "Forked into a new session."
	}
	return s.renderActions(c, key, f)
}

// actUpgrade is the upgrade button of a read-only session.
func (s *Server) actUpgrade(c echo.Context) error {
	if err := readForm(c); err != nil {
		return err
	}
	key, ref := sessionKey(c), c.FormValue("entry")
	f := form{ref: ref, outcome: views.Outcome{Action: "Upgrade"}}
	if c.FormValue("confirm") != "true" {
		return errBadRequest("The upgrade was not confirmed.", nil)
	}
	backup, err := s.lib.Upgrade(key)
	if err := s.settle(c, &f, err); err != nil {
		return err
	}
	if !f.outcome.Failed {
		f.outcome.Backup = backup
		f.outcome.Message = "Upgraded to version 3: labelling and rewinding are on."
	}
	return s.renderActions(c, key, f)
}

// actShare is the share form's "Save next to the session" button.
func (s *Server) actShare(c echo.Context) error {
	if err := readForm(c); err != nil {
		return err
	}
	key, ref := sessionKey(c), c.FormValue("leaf")
	f := form{ref: ref, open: "share", outcome: views.Outcome{Action: "Save"}}
	q, err := exportQuery(ref, c.FormValue("format"), formValues(c, "redact"))
	if err != nil {
		return err
	}
	path, err := s.saveExport(key, q)
	if err := s.settle(c, &f, err); err != nil {
		return err
	}
	if !f.outcome.Failed {
		f.outcome.Saved = path
		f.outcome.Message = "Saved next to the session."
	}
	return s.renderActions(c, key, f)
}

// formValues returns every value of a form field.
func formValues(c echo.Context, name string) []string {
	if err := c.Request().ParseForm(); err != nil {
		return nil
	}
	return c.Request().Form[name]
}
