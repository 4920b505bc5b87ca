package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/piweb/piweb/sessions"
)

func TestRoutes(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	tests := []struct {
		name    string
		target  string
		hdr     []string
		status  int
		want    []string
		notWant []string
	}{
		{"sessions page", "/", nil, 200,
			[]string{"<!doctype html>", "Fix stale forecast cache", "Port cache fix to the API", "/home/dev/weather-api",
				"forked from <a href=\"/s/" + mainID + "\">Fix stale forecast cache</a>"}, nil},
		{"search", "/?q=dark+mode", nil, 200, []string{"Add a dark mode"}, []string{"Fix stale forecast cache</a>"}},
		{"search by folder", "/?q=weather-api", nil, 200, []string{"Port cache fix"}, []string{"Add a dark mode"}},
		{"search as htmx fragment", "/?q=dark", []string{"HX-Request", "true"}, 200,
			[]string{`<div id="sessions"`, "Add a dark mode"}, []string{"<html", "<head"}},
		{"sort by name", "/?sort=name", nil, 200, []string{`<option value="name" selected>`}, nil},
		{"session page", "/s/" + mainID, nil, 200,
			[]string{`id="tree"`, `class="row`, "← active", "[bug report]", "[branch summary]", "[compaction: 91k tokens]",
				"Both callers use the default cache", `data-target=""`}, nil},
		{"session with target", "/s/" + mainID + "?target=4a76b713", nil, 200,
			[]string{"oldText matched 0 times", `data-ref="4a76b713"`}, nil},
		{"session with filter", "/s/" + mainID + "?filter=user-only", nil, 200,
			[]string{`class="filter on" data-filter="user-only"`, "user: "}, []string{"[read: src/forecast/cache.ts]"}},
		{"session with search", "/s/" + mainID + "/rows?q=widget", nil, 200, []string{"Here is the widget now"}, []string{"Do both: key by city"}},
		{"session model context", "/s/" + mainID + "?target=c8578d56&view=context", nil, 200,
			[]string{"What the model sees at this entry", "Compaction summary", ">kept<"}, nil},
		{"rows around", "/s/" + mainID + "/rows?target=4bcfd0c7", nil, 200, []string{`id="n`}, []string{"<html"}},
		{"rows after", "/s/" + mainID + "/rows?after=0", nil, 200, []string{`class="row`}, nil},
		{"entry", "/s/" + mainID + "/entry?e=ee882ce3", nil, 200,
			[]string{`<img src="data:image/png;base64,`, "npm test -- forecast", "Project rule", "<details class=\"thinking\">"}, nil},
		{"entry context", "/s/" + mainID + "/entry?e=ee882ce3&view=context", nil, 200, []string{"What the model sees"}, nil},
		{"fork session", "/s/" + forkID, nil, 200, []string{"Forked from <a href=\"/s/" + mainID + "\""}, nil},
		{"asset", "/static/css/app.css", nil, 200, []string{".tree"}, nil},
		{"htmx asset", "/static/vendor/htmx.min.js", nil, 200, []string{"htmx"}, nil},
		{"unknown session", "/s/nope", nil, 404, []string{"Session not found", "“nope”", "all sessions"}, []string{"no such session"}},
		{"unknown session fragment", "/s/nope/entry?e=x", []string{"HX-Request", "true"}, 404,
			[]string{`class="error-box"`, "Session not found"}, []string{"<html"}},
		// An entry a link or an old page names that the file no longer holds
		// (pi migrated it with new ids): the session at its leaf, with a note.
		{"unknown entry", "/s/" + mainID + "?target=zzz", nil, 200, []string{"Entry zzz is no longer in this session", `data-ref="c8578d56"`}, nil},
		{"unknown entry fragment", "/s/" + mainID + "/entry?e=zzz", nil, 200, []string{`data-stale="Entry zzz is no longer`, `data-ref="c8578d56"`}, nil},
		{"unknown leaf", "/s/" + mainID + "?leaf=zzz", nil, 200, []string{"Entry zzz is no longer in this session"}, nil},
		{"id-less ref", "/s/" + mainID + "/entry?e=~3", nil, 200, []string{`data-stale="Entry ~3 is no longer`}, nil},
		{"bad filter", "/s/" + mainID + "?filter=bogus", nil, 400, []string{"Unknown tree filter"}, []string{"unknown tree filter \""}},
		{"bad position", "/s/" + mainID + "/rows?after=-4", nil, 400, []string{"Bad row position"}, nil},
		{"unknown page", "/nope", nil, 404, []string{"Not found"}, nil},
		{"unknown asset", "/static/../../go.mod", nil, 404, []string{"Not found"}, []string{"module github.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, srv, tt.target, tt.hdr...)
			body := rec.Body.String()
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d\n%s", rec.Code, tt.status, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(body, w) {
					t.Errorf("body has %q", w)
				}
			}
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("CSP = %q", csp)
			}
		})
	}
}

func TestSecurityHeaders(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	rec := get(t, srv, "/")
	want := map[string]string{
		"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	}
	for k, v := range want {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	// No inline script or style anywhere in the page: the CSP would block them.
	body := rec.Body.String()
	for _, bad := range []string{"<script>", "<style", " style=", " onclick=", "hx-on"} {
		if strings.Contains(body, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	rec = get(t, srv, "/s/"+mainID)
	for _, bad := range []string{"<script>", "<style", " style=", " onclick=", "hx-on"} {
		if strings.Contains(rec.Body.String(), bad) {
			t.Errorf("session page contains %q", bad)
		}
	}
}

func TestHostAllowlist(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	tests := []struct {
		host   string
		status int
	}{
		{"localhost:8377", 200},
		{"localhost", 200},
		{"LOCALHOST:8377", 200},
		{"127.0.0.1:8377", 200},
		{"[::1]:8377", 200},
		{"evil.example:8377", 403},
		{"evil.example", 403},
		{"127.0.0.1.evil.example", 403},
		{"localhost.evil.example:8377", 403},
		{"", 403},
	}
	for _, tt := range tests {
		rec := get(t, srv, "/", "Host", tt.host)
		if rec.Code != tt.status {
			t.Errorf("Host %q: status %d, want %d", tt.host, rec.Code, tt.status)
		}
		if tt.status == 403 {
			if !strings.Contains(rec.Body.String(), "Address not allowed") {
				t.Errorf("Host %q: not the friendly page:\n%s", tt.host, rec.Body)
			}
			if rec.Header().Get("Content-Security-Policy") == "" {
				t.Errorf("Host %q: no CSP on the refusal", tt.host)
			}
		}
	}
	// The bound address is allowed too.
	s := New(openLib(t, demoRoot(t)), Options{Addr: "192.0.2.7:9000"})
	if rec := get(t, s.Handler(), "/", "Host", "192.0.2.7:9000"); rec.Code != 200 {
		t.Errorf("bound address: status %d", rec.Code)
	}
}

func TestCrossOriginWrites(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		rec := do(t, srv, m, "/s/"+mainID, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "Request from another site refused") {
			t.Errorf("%s cross-origin: status %d\n%s", m, rec.Code, rec.Body)
		}
		if rec.Header().Get("Content-Security-Policy") == "" || rec.Header().Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s cross-origin: the refusal lacks the security headers", m)
		}
		// Same origin passes the check (and finds no such route yet).
		rec = do(t, srv, m, "/s/"+mainID, "Origin", "http://localhost:8377", "Sec-Fetch-Site", "same-origin")
		if rec.Code == http.StatusForbidden {
			t.Errorf("%s same-origin: refused", m)
		}
	}
	// Reads from anywhere are fine (they change nothing).
	if rec := get(t, srv, "/", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); rec.Code != 200 {
		t.Errorf("cross-origin GET: status %d", rec.Code)
	}
}

func TestAssetCaching(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	page := get(t, srv, "/").Body.String()
	i := strings.Index(page, "/static/css/app.css?v=")
	if i < 0 {
		t.Fatal("no versioned stylesheet URL")
	}
	url := page[i : i+strings.IndexByte(page[i:], '"')]
	rec := get(t, srv, url)
	if rec.Code != 200 || !strings.Contains(rec.Header().Get("Cache-Control"), "immutable") {
		t.Errorf("%s: status %d, Cache-Control %q", url, rec.Code, rec.Header().Get("Cache-Control"))
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
		t.Errorf("Content-Type %q", ct)
	}
	rec = get(t, srv, "/static/css/app.css?v=stale")
	if cc := rec.Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("stale version: Cache-Control %q", cc)
	}
}

// TestMethods: pages answer HEAD like GET, without a body; a known address
// used with the wrong method is 405 with Allow, an unknown one 404.
func TestMethods(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	tests := []struct {
		method, target string
		status         int
		allow          string // a method the Allow header must name
	}{
		{"HEAD", "/", 200, ""},
		{"HEAD", "/s/" + mainID, 200, ""},
		{"HEAD", "/static/css/app.css", 200, ""},
		{"HEAD", "/nope", 404, ""},
		{"POST", "/", 405, "GET"},
		{"DELETE", "/s/" + mainID, 405, "GET"},
		{"GET", "/api/sessions/" + mainID + "/rewind", 405, "POST"},
		{"POST", "/nope", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			rec := do(t, srv, tt.method, tt.target)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d\n%s", rec.Code, tt.status, rec.Body)
			}
			if tt.allow != "" && !strings.Contains(rec.Header().Get("Allow"), tt.allow) {
				t.Errorf("Allow %q lacks %s", rec.Header().Get("Allow"), tt.allow)
			}
			if tt.method == "HEAD" && tt.status == 200 && rec.Header().Get("Content-Type") == "" {
				t.Error("HEAD without the GET's Content-Type")
			}
		})
	}
}

// TestCopyText: /copy answers what pi's ctrl+x copies, as text; 204 when
// there is nothing to copy; 404 for an unknown entry.
func TestCopyText(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	tests := []struct {
		ref    string
		status int
		want   string
	}{
		{"09b043aa", 200, "Alternatively, could we just drop the cache entirely?"},
		{"zzz", 404, "Entry not found"},
	}
	for _, tt := range tests {
		rec := get(t, srv, "/s/"+mainID+"/copy?e="+tt.ref)
		if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("%s: %d %q, want %d %q", tt.ref, rec.Code, rec.Body, tt.status, tt.want)
		}
		if ct := rec.Header().Get("Content-Type"); tt.status == 200 && !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("%s: Content-Type %q", tt.ref, ct)
		}
	}
	// A label entry has nothing to copy.
	lib := openLib(t, demoRoot(t))
	var label string
	if err := lib.View(mainID, func(ss *sessions.Session) error {
		for i := range ss.Entries {
			if ss.Entries[i].Type == sessions.TypeLabel {
				label = ss.Entries[i].ID
			}
		}
		return nil
	}); err != nil || label == "" {
		t.Fatalf("no label entry in the demo: %v", err)
	}
	if rec := get(t, newServer(t, lib, nil).Handler(), "/s/"+mainID+"/copy?e="+label); rec.Code != 204 || rec.Body.Len() != 0 {
		t.Errorf("label entry: %d %q, want 204 and no body", rec.Code, rec.Body)
	}
}
