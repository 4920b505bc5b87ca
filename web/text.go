package web

import (
	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
)

// entryText answers GET /s/:key/text?e=REF with the entry's whole text as
// plain text (sessions.Body.FullText): what the page cuts when it is very long.
func (s *Server) entryText(c echo.Context) error {
	return s.plainEntry(c, func(r *sessions.Reader, i int) (string, bool, error) {
		text, err := r.FullText(i)
		return text, err == nil, err
	})
}
