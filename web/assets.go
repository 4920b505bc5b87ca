package web

import (
	"bytes"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/static"
)

// asset serves an embedded static file. A URL carrying the file's content
// hash (as static.URL makes them) may be cached for good.
func (s *Server) asset(c echo.Context) error {
	name := strings.TrimPrefix(path.Clean("/"+c.Param("*")), "/")
	b, err := fs.ReadFile(static.Assets(), name)
	if err != nil || name == "" || name == "." {
		return errNotFound("file")
	}
	sum, _ := static.Sum(name)
	h := c.Response().Header()
	if v := c.QueryParam("v"); v != "" && v == sum {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	h.Set("ETag", `"`+sum+`"`)
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		h.Set(echo.HeaderContentType, ct)
	}
	http.ServeContent(c.Response(), c.Request(), name, time.Time{}, bytes.NewReader(b))
	return nil
}
