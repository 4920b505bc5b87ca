package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
)

func TestAPISearch(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	var ans struct {
		Hits []catalog.Hit `json:"hits"`
		Next *string       `json:"next"`
	}
	rec := get(t, srv, "/api/search?q=cache")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	decode(t, rec, &ans)
	if len(ans.Hits) == 0 {
		t.Fatal("no hits for cache")
	}
	var raw map[string][]map[string]any
	json.Unmarshal(rec.Body.Bytes(), &raw)
	for _, k := range []string{"key", "sessionId", "entryId", "type", "role", "onPath", "snippet", "timestamp"} {
		if _, ok := raw["hits"][0][k]; !ok {
			t.Errorf("a hit lacks %q: %v", k, raw["hits"][0])
		}
	}
	for _, h := range ans.Hits {
		if !strings.Contains(strings.ToLower(h.Snippet), "cache") || h.Key == "" || h.EntryID == "" {
			t.Errorf("hit %+v", h)
		}
	}
	// Paging: limit 1 gives a next page that goes on.
	decode(t, get(t, srv, "/api/search?q=cache&limit=1"), &ans)
	if len(ans.Hits) != 1 || ans.Next == nil {
		t.Fatalf("limit 1: %d hits, next %v", len(ans.Hits), ans.Next)
	}
	first := ans.Hits[0]
	decode(t, get(t, srv, "/api/search?q=cache&limit=1&cursor="+url.QueryEscape(*ans.Next)), &ans)
	if len(ans.Hits) != 1 || ans.Hits[0].EntryID+ans.Hits[0].Type == first.EntryID+first.Type && ans.Hits[0].Snippet == first.Snippet {
		t.Fatalf("second page: %+v", ans.Hits)
	}

	bad := []struct{ q, want string }{
		{"", "empty query"},
		{"re:(", "regular expression"},
		{strings.Repeat("x ", 5000), "too long"},
		{"a\x01b", "control character"},
		{"role:robot x", "role"},
		{"after:someday x", "date"},
	}
	for _, b := range bad {
		rec := get(t, srv, "/api/search?q="+url.QueryEscape(b.q))
		if rec.Code != 400 || !strings.Contains(strings.ToLower(rec.Body.String()), b.want) {
			t.Errorf("%q: %d %s", b.q, rec.Code, rec.Body)
		}
	}
	for _, target := range []string{"/api/search?q=x&limit=0", "/api/search?q=x&limit=abc", "/api/search?q=x&cursor=garbage"} {
		if rec := get(t, srv, target); rec.Code != 400 {
			t.Errorf("%s: %d %s", target, rec.Code, rec.Body)
		}
	}
	// A catastrophic pattern runs under its budget; unicode is searched as text.
	for _, q := range []string{"re:(a+)+$", "re:(.*)*x", "天気 ü", "🚀"} {
		if rec := get(t, srv, "/api/search?q="+url.QueryEscape(q)); rec.Code != 200 {
			t.Errorf("%q: %d %s", q, rec.Code, rec.Body)
		}
	}
}

func TestSearchPage(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()
	rec := get(t, srv, "/search?q=cache")
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, "<mark>") || !strings.Contains(body, `class="search-group"`) || !strings.Contains(body, "target=") {
		t.Fatalf("status %d\n%s", rec.Code, body)
	}
	rec = get(t, srv, "/search?q=re:(", "HX-Request", "true")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "search-error") || strings.Contains(rec.Body.String(), "<html") {
		t.Fatalf("bad regex fragment: %d %s", rec.Code, rec.Body)
	}
	if rec := get(t, srv, "/search"); rec.Code != 200 || !strings.Contains(rec.Body.String(), "role:user") {
		t.Fatalf("empty search page: %d", rec.Code)
	}
	// The palette finds sessions, labels and entries.
	rec = get(t, srv, "/palette?q=bug", "HX-Request", "true")
	pb := rec.Body.String()
	for _, want := range []string{"Labels", "bug report", "Entries", "All hits for"} {
		if !strings.Contains(pb, want) {
			t.Errorf("palette lacks %q:\n%s", want, pb)
		}
	}
	if rec := get(t, srv, "/palette?q=forecast"); !strings.Contains(rec.Body.String(), "Sessions") {
		t.Errorf("palette: no session for forecast:\n%s", rec.Body)
	}
	// Every page has the palette.
	if !strings.Contains(get(t, srv, "/").Body.String(), `id="palette"`) || !strings.Contains(get(t, srv, "/s/"+mainID).Body.String(), `id="palette"`) {
		t.Error("a page without the palette")
	}
}

// TestSearchHitOpens: an off-path hit opens its session with the entry
// selected and the page says it is off the path.
func TestSearchHitOpens(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()
	var ans struct{ Hits []catalog.Hit }
	decode(t, get(t, srv, "/api/search?q="+url.QueryEscape("is:offpath the")+"&limit=50"), &ans)
	if len(ans.Hits) == 0 {
		t.Fatal("no off-path hit in the demo")
	}
	for _, h := range ans.Hits {
		if h.Place != catalog.PlaceOffPath || h.OnPath {
			t.Fatalf("is:offpath gave %+v", h)
		}
		var place uint8
		lib.View(h.Key, func(s *sessions.Session) error {
			i, _ := s.Lookup(h.EntryID)
			place = s.Places()[i]
			return nil
		})
		if place != 0 {
			t.Fatalf("%s is not off the path", h.EntryID)
		}
	}
	h := ans.Hits[0]
	rec := get(t, srv, "/s/"+h.Key+"?target="+h.EntryID)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Off-path") {
		t.Fatalf("status %d; no off-path note", rec.Code)
	}
}

// TestIndexingAnswers: while the library is being filled, the API says
// so, a session not reached yet is 503 with Retry-After (not 404), and
// the sessions page shows the progress bar.
func TestIndexingAnswers(t *testing.T) {
	root := demoRoot(t)
	lib := library.NewLibrary(root)
	cat := catalog.New(lib, catalog.Options{})
	s := New(lib, Options{Addr: "127.0.0.1:8377", Root: root, Catalog: cat, Logger: newServer(t, lib, nil).log})
	t.Cleanup(s.Close)
	h := s.Handler()
	rec := get(t, h, "/api/sessions/"+mainID)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "still reading") {
		t.Fatalf("not indexed yet: %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if rec := get(t, h, "/s/"+mainID); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("page: %d", rec.Code)
	}
	if rec := get(t, h, "/api/sessions"); rec.Header().Get(indexingHeader) == "" {
		t.Fatal("no indexing header")
	}
	if rec := get(t, h, "/"); !strings.Contains(rec.Body.String(), `id="index-progress"`) || !strings.Contains(rec.Body.String(), "<progress") {
		t.Fatalf("no progress bar:\n%s", rec.Body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cat.Run(ctx)
	<-cat.Ready()
	if rec := get(t, h, "/api/sessions/"+mainID); rec.Code != 200 {
		t.Fatalf("after indexing: %d", rec.Code)
	}
	if rec := get(t, h, "/api/sessions/nosuch"); rec.Code != 404 {
		t.Fatalf("unknown after indexing: %d", rec.Code)
	}
	rec = get(t, h, "/index/progress", "HX-Request", "true")
	if rec.Header().Get("HX-Trigger") != "piweb-indexed" || strings.Contains(rec.Body.String(), "<progress") {
		t.Fatalf("done progress: %v %s", rec.Header(), rec.Body)
	}
	if rec := get(t, h, "/api/sessions"); rec.Header().Get(indexingHeader) != "" {
		t.Fatal("indexing header after indexing")
	}
}
