package web

// The login (Options.Login): every request but the static assets and the
// login page itself needs either the session cookie the login page sets
// or a token in "Authorization: Bearer". Unauthenticated, the API answers
// 401 JSON and a page goes to the login page (and back after it). The
// checks of the Host header and of cross-origin writes (security.go) run
// before and after it as they always do.

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/auth"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/views"
)

// cookieName is the login session's cookie.
const cookieName = "piweb_session"

// authenticate lets a request through when login is off, for the static
// assets and the login page, and with a valid session cookie or Bearer
// token; it refuses the others (needLogin).
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		g := s.opt.Login
		if g == nil {
			return next(c)
		}
		req := c.Request()
		if p := req.URL.Path; strings.HasPrefix(p, "/static/") || p == "/login" {
			return next(c)
		}
		ctx := req.Context()
		if h := req.Header.Get("Authorization"); h != "" {
			scheme, tok, _ := strings.Cut(h, " ")
			if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="piweb"`)
				return errUnauthorized(nil)
			}
			if _, err := g.Bearer(ctx, clientAddr(req), strings.TrimSpace(tok)); err != nil {
				return s.loginRefused(c, err)
			}
			c.SetRequest(req.WithContext(views.WithLogout(ctx)))
			return next(c)
		}
		if ck, err := req.Cookie(cookieName); err == nil {
			if _, ok := g.Session(ctx, ck.Value); ok {
				c.SetRequest(req.WithContext(views.WithLogout(ctx)))
				return next(c)
			}
		}
		return s.needLogin(c)
	}
}

// needLogin answers a request without a login: pages go to the login
// page (and come back after it), anything else is 401.
func (s *Server) needLogin(c echo.Context) error {
	req := c.Request()
	back := "/login?next=" + url.QueryEscape(req.URL.RequestURI())
	switch {
	case isAPI(req) || req.Header.Get("Accept") == "text/event-stream":
	case isHTMX(c):
		next := "/"
		if u, err := url.Parse(req.Header.Get("HX-Current-URL")); err == nil {
			next = localPath(u.RequestURI())
		}
		c.Response().Header().Set("HX-Redirect", "/login?next="+url.QueryEscape(next))
	case req.Method == http.MethodGet || req.Method == http.MethodHead:
		if req.Header.Get("Sec-Fetch-Site") == "cross-site" {
			// A link from another site: the browser held back the login
			// cookie (SameSite=Strict). Come again from this site, which
			// sends it: a logged-in user sees the page, others log in.
			return render(c, http.StatusOK, views.Bounce(localPath(req.URL.RequestURI())))
		}
		return c.Redirect(http.StatusSeeOther, back)
	}
	c.Response().Header().Set("WWW-Authenticate", `Bearer realm="piweb"`)
	return errUnauthorized(nil)
}

// loginRefused answers a Bearer token or a login that was refused.
func (s *Server) loginRefused(c echo.Context, err error) error {
	var tm *auth.TooMany
	switch {
	case errors.As(err, &tm):
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(tm.RetryAfter.Seconds()+1)))
		return &pageError{status: http.StatusTooManyRequests, title: "Too many failed logins",
			msg: "Too many failed logins came from your address: try again in " + tm.RetryAfter.Round(time.Minute).String() + ".", err: err}
	case errors.Is(err, auth.ErrBadToken):
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="piweb", error="invalid_token"`)
		return errUnauthorized(err)
	case errors.Is(err, store.ErrUnavailable):
		return &pageError{status: http.StatusServiceUnavailable, title: "Cannot check the login",
			msg: "piweb cannot read its tokens right now (its store cannot be reached). Try again in a moment.", err: err}
	}
	return err
}

// errUnauthorized refuses a request without a valid login.
func errUnauthorized(err error) error {
	return &pageError{status: http.StatusUnauthorized, title: "Log in first",
		msg: "This piweb needs a login: log in at /login, or send a token as \"Authorization: Bearer TOKEN\" (`piweb token new NAME` makes one).", err: err}
}

// clientAddr is the address failed logins are counted against: the
// connection's, or, when that is a proxy on this machine, the last
// address the proxy added to X-Forwarded-For (the one it saw).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			parts := strings.Split(xff[len(xff)-1], ",")
			if last := strings.TrimSpace(parts[len(parts)-1]); net.ParseIP(last) != nil {
				return last
			}
		}
	}
	return host
}

// loginPage shows the login form; logged in already, it goes on.
func (s *Server) loginPage(c echo.Context) error {
	next := localPath(c.QueryParam("next"))
	g := s.opt.Login
	if g == nil {
		return c.Redirect(http.StatusSeeOther, next)
	}
	if ck, err := c.Request().Cookie(cookieName); err == nil {
		if _, ok := g.Session(c.Request().Context(), ck.Value); ok {
			return c.Redirect(http.StatusSeeOther, next)
		}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return respond(c, views.LoginPage(views.LoginView{Next: next}))
}

// login checks the token typed into the login page, sets the session
// cookie and goes on to the page asked for; refused, it shows the form
// again with why.
func (s *Server) login(c echo.Context) error {
	g := s.opt.Login
	if g == nil {
		return errNotFound("page")
	}
	if err := readForm(c); err != nil {
		return err
	}
	req := c.Request()
	next := localPath(c.FormValue("next"))
	cookie, _, err := g.Login(req.Context(), clientAddr(req), c.FormValue("token"))
	if err != nil {
		pe := classify(s.loginRefused(c, err))
		if pe.status >= 500 && pe.status != http.StatusServiceUnavailable {
			return err
		}
		s.log.Info("login refused", "addr", clientAddr(req), "status", pe.status, "err", err)
		c.Response().Header().Set("Cache-Control", "no-store")
		return render(c, pe.status, views.LoginPage(views.LoginView{Next: next, Message: pe.msg}))
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: cookieName, Value: cookie, Path: "/", MaxAge: int(g.SessionAge().Seconds()),
		HttpOnly: true, Secure: s.httpsOnly(req), SameSite: http.SameSiteStrictMode})
	return c.Redirect(http.StatusSeeOther, next)
}

// logout ends the session and goes to the login page.
func (s *Server) logout(c echo.Context) error {
	if ck, err := c.Request().Cookie(cookieName); err == nil && s.opt.Login != nil {
		s.opt.Login.Logout(ck.Value)
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.httpsOnly(c.Request()), SameSite: http.SameSiteStrictMode})
	return c.Redirect(http.StatusSeeOther, "/login")
}

// httpsOnly reports whether the login cookie is sent over https only: the
// request came over TLS, or people reach piweb at an https public URL.
func (s *Server) httpsOnly(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(strings.ToLower(s.opt.PublicURL), "https://")
}

// localPath returns p when it is a path on this server, else "/": the
// login never sends anyone to another site.
func localPath(p string) string {
	u, err := url.Parse(p)
	if err != nil || p == "" || p[0] != '/' || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") ||
		u.Scheme != "" || u.Host != "" || strings.ContainsAny(p, "\r\n") {
		return "/"
	}
	return p
}

// Origin returns the origin (scheme://host[:port]) of a URL, as the
// cross-origin check compares it; s itself when it does not parse.
func Origin(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return s
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}
