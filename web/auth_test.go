package web

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piweb/piweb/auth"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/views"
)

// loginServer serves the demo with a login, tokens in a new SQLite store;
// it returns the server and a token.
func loginServer(t *testing.T, mod func(*Options)) (*Server, string) {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "index.db"), store.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tok, err := auth.NewToken(context.Background(), auth.Table{DB: st}, "ann")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opt := Options{Addr: "0.0.0.0:8377", Root: "/sessions", Logger: log, Login: auth.NewGuard(auth.Table{DB: st}, auth.Options{})}
	if mod != nil {
		mod(&opt)
	}
	s := New(openLib(t, demoRoot(t)), opt)
	t.Cleanup(s.Close)
	return s, tok
}

// postLogin posts a form from this site (as a browser on the page does).
func postLogin(t *testing.T, h http.Handler, target string, form url.Values, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Host = "localhost:8377"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return doReq(h, req)
}

// TestLogin walks the login: refused without it (pages to the login
// page, the API 401 JSON, the assets served), a wrong token shown the
// form again, the right one a cookie that opens every page, Bearer for
// the API, and a logout that ends it.
func TestLogin(t *testing.T) {
	s, tok := loginServer(t, nil)
	h := s.Handler()

	r := get(t, h, "/s/"+mainID+"?view=map")
	if r.Code != http.StatusSeeOther || r.Header().Get("Location") != "/login?next="+url.QueryEscape("/s/"+mainID+"?view=map") {
		t.Errorf("a page without a login: %d %q", r.Code, r.Header().Get("Location"))
	}
	r = get(t, h, "/api/sessions")
	var body apiError
	if r.Code != http.StatusUnauthorized || json.Unmarshal(r.Body.Bytes(), &body) != nil || !strings.Contains(body.Error, "Bearer") ||
		!strings.HasPrefix(r.Header().Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("the API without a login: %d %s %q", r.Code, r.Body, r.Header().Get("WWW-Authenticate"))
	}
	if r := get(t, h, views.Asset("css/app.css")); r.Code != http.StatusOK {
		t.Errorf("an asset without a login: %d", r.Code)
	}
	if r := get(t, h, "/events", "Accept", "text/event-stream"); r.Code != http.StatusUnauthorized {
		t.Errorf("a live stream without a login: %d", r.Code)
	}
	if r := get(t, h, "/", "HX-Request", "true", "HX-Current-URL", "http://localhost:8377/usage"); r.Code != http.StatusUnauthorized ||
		r.Header().Get("HX-Redirect") != "/login?next=%2Fusage" {
		t.Errorf("htmx without a login: %d %q", r.Code, r.Header().Get("HX-Redirect"))
	}
	if r := postLogin(t, h, "/s/"+mainID+"/actions/label", url.Values{"entry": {"x"}, "label": {"y"}}); r.Code != http.StatusUnauthorized {
		t.Errorf("a write without a login: %d", r.Code)
	}
	// A link from another site comes without the cookie: the page comes
	// again from this site (which sends it).
	r = get(t, h, "/s/"+mainID, "Sec-Fetch-Site", "cross-site")
	if r.Code != http.StatusOK || !strings.Contains(r.Body.String(), `http-equiv="refresh" content="0;url=/s/`+mainID+`"`) {
		t.Errorf("a link from another site: %d %s", r.Code, r.Body)
	}
	if r := get(t, h, "//evil.example/x", "Sec-Fetch-Site", "cross-site"); strings.Contains(r.Body.String(), "evil") {
		t.Errorf("bounced elsewhere: %s", r.Body)
	}

	r = get(t, h, "/login?next=%2Fusage")
	if r.Code != http.StatusOK || !strings.Contains(r.Body.String(), `name="token"`) || !strings.Contains(r.Body.String(), `value="/usage"`) {
		t.Fatalf("the login page: %d %s", r.Code, r.Body)
	}
	r = postLogin(t, h, "/login", url.Values{"token": {tok + "x"}, "next": {"/usage"}})
	if r.Code != http.StatusUnauthorized || !strings.Contains(r.Body.String(), "log in") || r.Header().Get("Set-Cookie") != "" {
		t.Errorf("a wrong token: %d %s", r.Code, r.Body)
	}
	// From another site, even the right token is refused (cross-origin protection stays).
	if r := postLogin(t, h, "/login", url.Values{"token": {tok}}, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"); r.Code != http.StatusForbidden {
		t.Errorf("a login from another site: %d", r.Code)
	}
	r = postLogin(t, h, "/login", url.Values{"token": {tok}, "next": {"//evil.example/"}})
	ck := r.Result().Cookies()
	if r.Code != http.StatusSeeOther || r.Header().Get("Location") != "/" || len(ck) != 1 {
		t.Fatalf("login: %d %q %v", r.Code, r.Header().Get("Location"), ck)
	}
	c := ck[0]
	if c.Name != cookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Path != "/" || c.MaxAge <= 0 {
		t.Errorf("cookie %+v", c)
	}
	cookie := "Cookie"
	val := c.Name + "=" + c.Value
	for _, p := range []string{"/", "/s/" + mainID, "/api/sessions", "/usage", "/search?q=cache"} {
		if r := get(t, h, p, cookie, val); r.Code != http.StatusOK {
			t.Errorf("%s logged in: %d", p, r.Code)
		}
	}
	if r := get(t, h, "/", cookie, val); !strings.Contains(r.Body.String(), `action="/logout"`) {
		t.Error("no way to log out on the sessions page")
	}
	if r := get(t, h, "/login?next=%2Fusage", cookie, val); r.Code != http.StatusSeeOther || r.Header().Get("Location") != "/usage" {
		t.Errorf("the login page when logged in: %d %q", r.Code, r.Header().Get("Location"))
	}
	// Bearer, for scripts.
	if r := get(t, h, "/api/sessions", "Authorization", "Bearer "+tok); r.Code != http.StatusOK {
		t.Errorf("bearer: %d %s", r.Code, r.Body)
	}
	if r := get(t, h, "/api/sessions", "Authorization", "Basic "+tok); r.Code != http.StatusUnauthorized {
		t.Errorf("basic: %d", r.Code)
	}
	if r := get(t, h, "/api/sessions", "Authorization", "Bearer nope"); r.Code != http.StatusUnauthorized {
		t.Errorf("a wrong bearer: %d", r.Code)
	}
	// Logging out ends the session.
	r = postLogin(t, h, "/logout", nil, cookie, val)
	if r.Code != http.StatusSeeOther || len(r.Result().Cookies()) != 1 || r.Result().Cookies()[0].MaxAge >= 0 {
		t.Errorf("logout: %d %v", r.Code, r.Result().Cookies())
	}
	if r := get(t, h, "/", cookie, val); r.Code != http.StatusSeeOther {
		t.Errorf("after logout: %d", r.Code)
	}
}

// TestLoginRateLimit: five wrong tokens from an address, and the sixth
// attempt is refused with 429 and Retry-After, the right token too;
// another address logs in.
func TestLoginRateLimit(t *testing.T) {
	s, tok := loginServer(t, nil)
	h := s.Handler()
	for i := range 5 {
		if r := postLogin(t, h, "/login", url.Values{"token": {"piweb_wrong"}}); r.Code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i, r.Code)
		}
	}
	r := postLogin(t, h, "/login", url.Values{"token": {tok}})
	if r.Code != http.StatusTooManyRequests || r.Header().Get("Retry-After") == "" || !strings.Contains(r.Body.String(), "Too many failed logins") {
		t.Errorf("the sixth attempt: %d %q %s", r.Code, r.Header().Get("Retry-After"), r.Body)
	}
	if r := get(t, h, "/api/sessions", "Authorization", "Bearer "+tok); r.Code != http.StatusTooManyRequests {
		t.Errorf("bearer from a refused address: %d", r.Code)
	}
	req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
	req.Host, req.RemoteAddr = "localhost:8377", "198.51.100.7:5555"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if r := doReq(h, req); r.Code != http.StatusSeeOther {
		t.Errorf("another address: %d", r.Code)
	}
	// Behind a proxy on this machine, the address it saw counts.
	for _, c := range []struct{ remote, xff, want string }{
		{"127.0.0.1:4000", "203.0.113.9", "203.0.113.9"},
		{"127.0.0.1:4000", "10.0.0.1, 203.0.113.9", "203.0.113.9"},
		{"192.0.2.1:4000", "203.0.113.9", "192.0.2.1"}, // not a local proxy: its header is not taken
		{"[::1]:4000", "", "::1"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = c.remote
		if c.xff != "" {
			req.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := clientAddr(req); got != c.want {
			t.Errorf("%s with %q: %q, want %q", c.remote, c.xff, got, c.want)
		}
	}
}

// TestPublicURL: the public URL's host is allowed (others still are not),
// its origin may post, and an https one makes the cookie Secure.
func TestPublicURL(t *testing.T) {
	s, tok := loginServer(t, func(o *Options) {
		o.PublicURL = "https://piweb.example.com"
		o.AllowedOrigins = []string{"http://devbox:9000"}
	})
	h := s.Handler()
	if r := get(t, h, "/login", "Host", "piweb.example.com"); r.Code != http.StatusOK {
		t.Errorf("the public host: %d", r.Code)
	}
	if r := get(t, h, "/login", "Host", "devbox:9000"); r.Code != http.StatusOK {
		t.Errorf("an allowed origin's host: %d", r.Code)
	}
	if r := get(t, h, "/login", "Host", "evil.example"); r.Code != http.StatusForbidden {
		t.Errorf("another host: %d", r.Code)
	}
	r := postLogin(t, h, "/login", url.Values{"token": {tok}}, "Sec-Fetch-Site", "", "Origin", "https://piweb.example.com")
	if r.Code != http.StatusSeeOther || len(r.Result().Cookies()) != 1 || !r.Result().Cookies()[0].Secure {
		t.Errorf("login through the public URL: %d %v", r.Code, r.Result().Cookies())
	}
	if r := postLogin(t, h, "/login", url.Values{"token": {tok}}, "Sec-Fetch-Site", "cross-site", "Origin", "http://devbox:9000"); r.Code != http.StatusSeeOther {
		t.Errorf("login from an allowed origin: %d", r.Code)
	}
	if r := postLogin(t, h, "/login", url.Values{"token": {tok}}, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"); r.Code != http.StatusForbidden {
		t.Errorf("login from another origin: %d", r.Code)
	}
}

// TestLocalPath: the login only ever goes on to a path of this server.
func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/s/x?view=map": "/s/x?view=map", "": "/", "//evil.example": "/", "/\\evil.example": "/",
		"https://evil.example/": "/", "javascript:alert(1)": "/", "usage": "/", "/a\r\nSet-Cookie: x": "/",
	} {
		if got := localPath(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
