package web

// The JSON API, for scripts and the UI's own tests: the sessions list, pi's
// reading of a session, and the write actions. Errors are {"error": "..."}
// (see handleError). State-changing routes are POSTs that need a JSON body,
// which a cross-site form cannot send, behind the cross-origin protection of
// Server.Handler.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/inspect"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/writer"
)

// maxBody bounds a JSON request body.
const maxBody = 1 << 20

// isAPI reports whether a request is for the JSON API (and its errors are JSON).
func isAPI(r *http.Request) bool {
	return r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/")
}

// apiError is the body of every JSON API error.
type apiError struct {
	Error string `json:"error"`
}

// renderAPIError writes pe as JSON; handleError calls it for /api requests.
func renderAPIError(c echo.Context, pe *pageError) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(pe.status, apiError{Error: pe.msg})
}

// apiList answers GET /api/sessions: every session's metadata, most
// recent activity first; on a team server each with its machine.
func (s *Server) apiList(c echo.Context) error {
	s.markIndexing(c)
	metas := s.lib.List()
	if s.opt.Machine == nil {
		return c.JSON(http.StatusOK, metas)
	}
	rows := make([]machineMeta, len(metas))
	for i, m := range metas {
		rows[i] = machineMeta{Meta: m, Machine: s.opt.Machine(m.File)}
	}
	return c.JSON(http.StatusOK, rows)
}

// machineMeta is a row of /api/sessions on a team server.
type machineMeta struct {
	sessions.Meta
	Machine string `json:"machine"` // the machine the session was pushed from
}

// apiSession answers GET /api/sessions/:key[?leaf=ID]: the JSON `piweb inspect` prints.
func (s *Server) apiSession(c echo.Context) error {
	key, leaf := sessionKey(c), c.QueryParam("leaf")
	var out bytes.Buffer
	err := s.view(key, func(ss *sessions.Session, _ *sessions.Reader) error {
		return inspect.Write(&out, ss, leaf)
	})
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, out.Bytes())
}

// labelBody is the body of POST /api/sessions/:key/label.
type labelBody struct {
	EntryID *string `json:"entryId"`
	Label   *string `json:"label"`
}

// apiLabel sets or clears the label of an entry: {"entryId", "label"} → {"id"}.
func (s *Server) apiLabel(c echo.Context) error {
	var b labelBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	if b.EntryID == nil || *b.EntryID == "" || b.Label == nil {
		return errBadRequest(`The body needs "entryId" (the entry to label) and "label" (an empty label clears it).`, nil)
	}
	nid, err := s.lib.Label(sessionKey(c), *b.EntryID, *b.Label)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"id": nid})
}

// rewindBody is the body of POST /api/sessions/:key/rewind.
type rewindBody struct {
	EntryID    *string `json:"entryId"`
	Summary    string  `json:"summary"`
	ExpectLeaf string  `json:"expectLeaf"`
}

// apiRewind makes pi resume from an entry: {"entryId", "summary"?, "expectLeaf"?} → {"id"}.
func (s *Server) apiRewind(c echo.Context) error {
	var b rewindBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	if b.EntryID == nil {
		return errBadRequest(`The body needs "entryId": the entry pi should resume from ("" for before the first entry).`, nil)
	}
	nid, err := s.lib.Rewind(sessionKey(c), *b.EntryID, b.Summary, writer.Guard{Leaf: b.ExpectLeaf})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"id": nid})
}

// forkBody is the body of POST /api/sessions/:key/fork.
type forkBody struct {
	EntryID string `json:"entryId"`
}

// forkReply is the answer to a fork.
type forkReply struct {
	SessionID string `json:"sessionId"`
	Key       string `json:"key"` // the new session's key in the library
	File      string `json:"file"`
	Command   string `json:"command"` // resumes the new session in pi
}

// apiFork writes the path to an entry as a new session: {"entryId"} → {"sessionId", "file", "command"}.
func (s *Server) apiFork(c echo.Context) error {
	var b forkBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	if b.EntryID == "" {
		return errBadRequest(`The body needs "entryId": the entry the new session ends at.`, nil)
	}
	f, err := s.fork(sessionKey(c), b.EntryID)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", "/api/sessions/"+url.PathEscape(f.Key))
	return c.JSON(http.StatusCreated, forkReply{SessionID: f.ID, Key: f.Key, File: f.File, Command: f.Command})
}

// saveBody is the body of POST /api/sessions/:key/export.
type saveBody struct {
	Leaf   string   `json:"leaf"`
	Format string   `json:"format"`
	Redact []string `json:"redact"`
}

// apiSaveExport saves the export next to the session: {"leaf"?, "format"?, "redact"?} → {"file"}.
func (s *Server) apiSaveExport(c echo.Context) error {
	var b saveBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	q, err := exportQuery(b.Leaf, b.Format, b.Redact)
	if err != nil {
		return err
	}
	path, err := s.saveExport(sessionKey(c), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]string{"file": path})
}

// upgradeBody is the body of POST /api/sessions/:key/upgrade.
type upgradeBody struct {
	Confirm bool `json:"confirm"`
}

// apiUpgrade rewrites a version 1 or 2 file as version 3: {"confirm": true} → {"backup", "version"}.
func (s *Server) apiUpgrade(c echo.Context) error {
	var b upgradeBody
	if err := decodeJSON(c, &b); err != nil {
		return err
	}
	if !b.Confirm {
		return errBadRequest(`Upgrading rewrites the session file (keeping a backup); send {"confirm": true} to do it.`, nil)
	}
	backup, err := s.lib.Upgrade(sessionKey(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"backup": backup, "version": 3})
}

// decodeJSON reads a request body that must be one JSON object of v's fields.
func decodeJSON(c echo.Context, v any) error {
	req := c.Request()
	mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return &pageError{status: http.StatusUnsupportedMediaType, title: "Send JSON", err: err,
			msg: `Send the body as JSON, with the header "Content-Type: application/json".`}
	}
	dec := json.NewDecoder(req.Body) // capped at maxBody (limitBody)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if big := (*http.MaxBytesError)(nil); errors.As(err, &big) {
			return err // 413
		}
		return errBadRequest(bodyProblem(err), err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errBadRequest("The body must hold one JSON object and nothing after it.", err)
	}
	return nil
}

// bodyProblem says what is wrong with a JSON body, without Go's wording.
func bodyProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var big *http.MaxBytesError
	switch {
	case errors.Is(err, io.EOF):
		return "The body is empty; send a JSON object."
	case errors.As(err, &big):
		return fmt.Sprintf("The body is larger than %d bytes.", maxBody)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("%q must be a %s.", typ.Field, jsonKind(typ.Type.Kind().String()))
	case errors.As(err, &typ):
		return "The body must be a JSON object."
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF):
		return "The body is not valid JSON."
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "Unknown field " + f + " in the body."
	}
	return "The body could not be read as JSON."
}

// jsonKind names a Go kind as JSON does.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "string"
	case "bool":
		return "boolean (true or false)"
	case "slice":
		return "list"
	case "ptr":
		return "string"
	}
	return k
}
