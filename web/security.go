package web

import (
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/labstack/echo/v4"
)

// contentSecurityPolicy allows only piweb's own scripts and styles (no
// inline code), images from piweb or data: URLs, and no framing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// secure refuses requests whose Host is not this machine (DNS rebinding)
// and sets the security headers on every response.
func (s *Server) secure(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		securityHeaders(c.Response().Header())
		if !s.hosts.allows(c.Request().Host) {
			return errForbiddenHost(c.Request().Host)
		}
		return next(c)
	}
}

// limitBody caps every request body at maxBody: a larger one is refused
// with 413 before it is read (by its length) or as soon as it passes the
// cap (while it is read, as the form handlers do first in readForm).
func limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.ContentLength > maxBody {
			return &http.MaxBytesError{Limit: maxBody}
		}
		req.Body = http.MaxBytesReader(c.Response(), req.Body, maxBody)
		return next(c)
	}
}

// readForm parses a form body; a body over the cap is a 413, never a
// silently emptied field (FormValue drops parse errors).
func readForm(c echo.Context) error {
	return c.Request().ParseForm()
}

// securityHeaders sets the headers every response carries.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// denyCrossOrigin answers a state-changing request from another origin.
func (s *Server) denyCrossOrigin(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	c := s.echo.NewContext(r, w)
	s.handleError(errCrossOrigin(r.Header.Get("Origin")), c)
}

// hostAllowlist is the set of host names a request may be addressed to.
type hostAllowlist map[string]bool

// newHostAllowlist allows the loopback names and the host of the bound
// address (for a wildcard address, this machine's names and interface
// addresses), and the hosts of the URLs piweb is also reached at (a
// public URL, allowed origins).
func newHostAllowlist(addr string, urls ...string) hostAllowlist {
	a := hostAllowlist{"localhost": true, "127.0.0.1": true, "::1": true}
	for _, u := range urls {
		if p, err := url.Parse(u); err == nil && p.Hostname() != "" {
			a[strings.ToLower(strings.TrimSuffix(p.Hostname(), "."))] = true
		}
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, ia := range addrs {
				if n, ok := ia.(*net.IPNet); ok {
					a[n.IP.String()] = true
				}
			}
		}
		if name, err := os.Hostname(); err == nil {
			a[strings.ToLower(name)] = true
		}
	} else if host != "" {
		a[host] = true
	}
	return a
}

// allows reports whether a Host header names an allowed host (any port).
func (a hostAllowlist) allows(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport // no port
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	return host != "" && a[host]
}
