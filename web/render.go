package web

import (
	"bytes"
	"context"
	"net/http"
	"sync"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// render writes a templ component as an HTML response. The component is
// rendered into a buffer first: a render that fails leaves no half page
// behind a 200, but goes to the error handler whole.
func render(c echo.Context, status int, comp templ.Component) error {
	b := pageBuffers.Get().(*bytes.Buffer)
	defer putPageBuffer(b)
	// Not cancelled with the request: an error page must render for a
	// request whose connection already failed (a body that timed out).
	if err := comp.Render(context.WithoutCancel(c.Request().Context()), b); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	h.Add("Vary", "HX-Request")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	c.Response().WriteHeader(status)
	_, err := c.Response().Write(b.Bytes())
	return err
}

// pageBuffers keeps the buffers pages are rendered into: a session page
// is some 200 KB, which a fresh buffer grows to through as much again.
var pageBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledPage is the largest buffer kept for the next page: a rare huge
// one (a 100k-entry export) is left to the collector.
const maxPooledPage = 4 << 20

// putPageBuffer gives b back for the next page once it is written.
func putPageBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooledPage {
		b.Reset()
		pageBuffers.Put(b)
	}
}

// isHTMX reports whether htmx sent the request (and wants a fragment).
func isHTMX(c echo.Context) bool {
	h := c.Request().Header
	return h.Get("HX-Request") == "true" && h.Get("HX-History-Restore-Request") != "true"
}

// respond renders comp with status 200.
func respond(c echo.Context, comp templ.Component) error { return render(c, http.StatusOK, comp) }
