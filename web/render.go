package web

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// render writes a templ component as an HTML response.
func render(c echo.Context, status int, comp templ.Component) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	h.Add("Vary", "HX-Request")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	c.Response().WriteHeader(status)
	return comp.Render(c.Request().Context(), c.Response())
}

// isHTMX reports whether htmx sent the request (and wants a fragment).
func isHTMX(c echo.Context) bool {
	h := c.Request().Header
	return h.Get("HX-Request") == "true" && h.Get("HX-History-Restore-Request") != "true"
}

// respond renders comp with status 200.
func respond(c echo.Context, comp templ.Component) error { return render(c, http.StatusOK, comp) }
