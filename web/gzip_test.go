package web

import (
	"compress/gzip"
	"io"
	"strings"
	"testing"
)

// TestGzip checks pages and the API are compressed for a client that takes
// gzip, live streams are not, and the body is the same once decompressed.
func TestGzip(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil)
	h := srv.Handler()
	for _, target := range []string{"/", "/s/" + mainID, "/api/sessions", "/static/js/app.js"} {
		plain := get(t, h, target)
		zipped := get(t, h, target, "Accept-Encoding", "gzip")
		if zipped.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: not compressed (%q)", target, zipped.Header().Get("Content-Encoding"))
			continue
		}
		zr, err := gzip.NewReader(zipped.Body)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(zr)
		if string(body) != plain.Body.String() {
			t.Errorf("%s: the decompressed body differs", target)
		}
		if !strings.Contains(zipped.Header().Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: no Vary: Accept-Encoding", target)
		}
	}
}

// TestExportsBounded checks that exports beyond the allowed number at once
// are refused with 503 and Retry-After, and that a freed slot serves again.
func TestExportsBounded(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil)
	h := srv.Handler()
	for range cap(srv.exports) {
		srv.exports <- struct{}{} // as many exports as allowed are running
	}
	rec := get(t, h, "/api/sessions/"+mainID+"/export?format=html")
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("a busy export: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	if !strings.Contains(rec.Body.String(), "Try again") {
		t.Errorf("the refusal does not say what to do: %s", rec.Body)
	}
	<-srv.exports
	if rec := get(t, h, "/api/sessions/"+mainID+"/export?format=html"); rec.Code != 200 {
		t.Errorf("with a slot free: %d", rec.Code)
	}
	if len(srv.exports) != cap(srv.exports)-1 {
		t.Errorf("the export did not give its slot back")
	}
}
