package web

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/inspect"
	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/watcher"
)

// send sends a request with a body to h, addressed to localhost; hdr holds header name/value pairs.
func send(t testing.TB, h http.Handler, method, target, contentType, body string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Host = "localhost:8377"
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// postJSON posts a JSON body as a script would.
func postJSON(t testing.TB, h http.Handler, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	return send(t, h, http.MethodPost, target, "application/json", body)
}

// decode parses a JSON response into v.
func decode(t testing.TB, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q, want JSON\n%s", ct, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("%v\n%s", err, rec.Body)
	}
}

// inspection is the JSON `piweb inspect` prints (package inspect), decoded.
type inspection struct {
	SessionID     string          `json:"sessionId"`
	Version       int             `json:"version"`
	ParentSession *string         `json:"parentSession"`
	LeafID        *string         `json:"leafId"`
	Tree          []sessions.Node `json:"tree"`
	Path          []string        `json:"path"`
	EntryCount    int             `json:"entryCount"`
	Context       struct {
		Messages []json.RawMessage `json:"messages"`
	} `json:"context"`
}

// inspectJSON is pi's reading of session id as the library holds it now,
// as `piweb inspect` prints it.
func inspectJSON(t testing.TB, lib *library.Library, id, leaf string) []byte {
	t.Helper()
	var out bytes.Buffer
	err := lib.View(id, func(s *sessions.Session) error { return inspect.Write(&out, s, leaf) })
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// inspectOf is pi's reading of session id as the library holds it now, decoded.
func inspectOf(t testing.TB, lib *library.Library, id, leaf string) *inspection {
	t.Helper()
	var in inspection
	if err := json.Unmarshal(inspectJSON(t, lib, id, leaf), &in); err != nil {
		t.Fatal(err)
	}
	return &in
}

// labelOf returns the label inspect shows on entry id ("" for none).
func labelOf(in *inspection, id string) string {
	for _, n := range in.Tree {
		if string(n.ID) == strconv.Quote(id) && n.Label != nil {
			var l string
			if err := json.Unmarshal(n.Label, &l); err != nil {
				return string(n.Label)
			}
			return l
		}
	}
	return ""
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// v2Session is a session file in pi's version 2 format, which piweb does not append to.
const v2Session = `{"type":"session","version":2,"id":"sess-v2","timestamp":"2024-03-01T09:00:00.000Z","cwd":"/home/dev/old"}
{"type":"message","id":"b2000001","parentId":null,"timestamp":"2024-03-01T09:00:01.000Z","message":{"role":"user","content":"first","timestamp":1709283601000}}
{"type":"message","id":"b2000002","parentId":"b2000001","timestamp":"2024-03-01T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"reply"}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"totalTokens":240,"cost":{"total":0.0012}},"stopReason":"stop","timestamp":1709283602000}}
`

// writeSession writes a session file into a project folder of root and returns its path.
func writeSession(t testing.TB, root, project, name, content string) string {
	t.Helper()
	dir := filepath.Join(root, project)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// pubEvents is a fakeEvents for the live streams that also records what
// the library publishes (piweb's writes go through it).
type pubEvents struct {
	*fakeEvents
	t   testing.TB
	lib *library.Library
	ch  <-chan library.Change
}

// published starts recording the changes lib publishes.
func published(t testing.TB, lib *library.Library) *pubEvents {
	ch, cancel := lib.Subscribe()
	t.Cleanup(cancel)
	return &pubEvents{fakeEvents: newFakeEvents(), t: t, lib: lib, ch: ch}
}

// take returns the changes published since the last take: it publishes a
// marker and reads up to it, so what it returns does not depend on timing.
func (p *pubEvents) take() []library.Change {
	p.t.Helper()
	p.lib.Publish(library.Change{Kind: "marker"})
	var out []library.Change
	for {
		select {
		case c := <-p.ch:
			if c.Kind == "marker" {
				return out
			}
			out = append(out, c)
		case <-time.After(guard):
			p.t.Fatalf("the marker change never came; got %+v", out)
		}
	}
}

func TestAPIReads(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()

	rec := get(t, srv, "/api/sessions")
	if rec.Code != 200 {
		t.Fatalf("list: status %d\n%s", rec.Code, rec.Body)
	}
	var list []sessions.Meta
	decode(t, rec, &list)
	if len(list) != 3 || !slices.ContainsFunc(list, func(m sessions.Meta) bool { return m.ID == mainID && m.Name == "Fix stale forecast cache" }) {
		t.Errorf("list = %+v", list)
	}

	// The same bytes as `piweb inspect`, at the session's leaf and at another.
	for _, leaf := range []string{"", "09b043aa"} {
		target := "/api/sessions/" + mainID
		if leaf != "" {
			target += "?leaf=" + leaf
		}
		rec := get(t, srv, target)
		if rec.Code != 200 {
			t.Fatalf("%s: status %d\n%s", target, rec.Code, rec.Body)
		}
		want := inspectJSON(t, lib, mainID, leaf)
		if got := rec.Body.String(); got != string(want) {
			t.Errorf("%s: not inspect's JSON:\n%.300s", target, got)
		}
	}

	tests := []struct {
		name   string
		target string
		hdr    []string
		status int
		want   string
	}{
		{"unknown session", "/api/sessions/nope", nil, 404, "No session with key “nope”"},
		{"unknown leaf", "/api/sessions/" + mainID + "?leaf=zzz", nil, 404, "no entry “zzz”"},
		{"unknown route", "/api/nope", nil, 404, "There is no such page here"},
		{"wrong method", "/api/sessions/" + mainID + "/label", nil, 405, "cannot be used that way"},
		{"foreign host", "/api/sessions", []string{"Host", "evil.example:8377"}, 403, "only answers requests addressed to this computer"},
		{"rebinding host", "/api/sessions/" + mainID, []string{"Host", "localhost.evil.example"}, 403, "localhost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, srv, tt.target, tt.hdr...)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d\n%s", rec.Code, tt.status, rec.Body)
			}
			var e apiError
			decode(t, rec, &e)
			if !strings.Contains(e.Error, tt.want) {
				t.Errorf("error %q lacks %q", e.Error, tt.want)
			}
			if rec.Header().Get("Content-Security-Policy") == "" {
				t.Error("no security headers")
			}
			if allow := rec.Header().Get("Allow"); rec.Code == 405 && !strings.Contains(allow, "POST") {
				t.Errorf("405 with Allow %q, want POST in it", allow)
			}
		})
	}
}

func TestAPIWriteErrors(t *testing.T) {
	root := demoRoot(t)
	writeSession(t, root, "--home-dev-old--", "2024-03-01T09-00-00-000Z_sess-v2.jsonl", v2Session)
	lib := openLib(t, root)
	srv := newServer(t, lib, nil).Handler()
	file := sessionFile(t, lib, mainID)
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	api := "/api/sessions/" + mainID
	tests := []struct {
		name   string
		target string
		ctype  string
		body   string
		status int
		want   string
	}{
		{"label: no body", api + "/label", "application/json", "", 400, "The body is empty"},
		{"label: not JSON", api + "/label", "application/json", "{entryId:", 400, "not valid JSON"},
		{"label: not an object", api + "/label", "application/json", `["a"]`, 400, "must be a JSON object"},
		{"label: two values", api + "/label", "application/json", `{"entryId":"09b043aa","label":"x"} {}`, 400, "one JSON object"},
		{"label: unknown field", api + "/label", "application/json", `{"entry":"09b043aa","label":"x"}`, 400, `Unknown field "entry"`},
		{"label: wrong type", api + "/label", "application/json", `{"entryId":7,"label":"x"}`, 400, `"entryId" must be a string`},
		{"label: no entry", api + "/label", "application/json", `{"label":"x"}`, 400, `needs "entryId"`},
		{"label: no label", api + "/label", "application/json", `{"entryId":"09b043aa"}`, 400, `"label" (an empty label clears it)`},
		{"label: form post", api + "/label", "application/x-www-form-urlencoded", "entryId=09b043aa&label=x", 415, "Content-Type: application/json"},
		{"label: text post", api + "/label", "text/plain", `{"entryId":"09b043aa","label":"x"}`, 415, "Send the body as JSON"},
		{"label: too big", api + "/label", "application/json", `{"entryId":"09b043aa","label":"` + strings.Repeat("x", maxBody) + `"}`, 413, "larger than"},
		{"label: unknown session", "/api/sessions/nope/label", "application/json", `{"entryId":"09b043aa","label":"x"}`, 404, "No session with key “nope”"},
		{"label: unknown entry", api + "/label", "application/json", `{"entryId":"zzz","label":"x"}`, 404, "no entry “zzz”"},
		{"label: read-only file", "/api/sessions/sess-v2/label", "application/json", `{"entryId":"b2000001","label":"x"}`, 423, "/api/sessions/sess-v2/upgrade"},
		{"rewind: no entry", api + "/rewind", "application/json", `{"summary":"x"}`, 400, `needs "entryId"`},
		{"rewind: unknown entry", api + "/rewind", "application/json", `{"entryId":"zzz"}`, 404, "no entry “zzz”"},
		{"rewind: stale page", api + "/rewind", "application/json", `{"entryId":"09b043aa","expectLeaf":"c8578d56"}`, 409, "changed since this page showed it"},
		{"rewind: read-only file", "/api/sessions/sess-v2/rewind", "application/json", `{"entryId":"b2000001"}`, 423, "version 2"},
		{"fork: no entry", api + "/fork", "application/json", `{}`, 400, `needs "entryId"`},
		{"fork: unknown entry", api + "/fork", "application/json", `{"entryId":"zzz"}`, 404, "no entry “zzz”"},
		{"fork: unknown session", "/api/sessions/nope/fork", "application/json", `{"entryId":"zzz"}`, 404, "No session"},
		{"upgrade: not confirmed", "/api/sessions/sess-v2/upgrade", "application/json", `{}`, 400, `{"confirm": true}`},
		{"upgrade: already current", api + "/upgrade", "application/json", `{"confirm":true}`, 409, "already in version 3"},
		{"save: bad format", api + "/export", "application/json", `{"format":"pdf"}`, 400, `Unknown export format "pdf"`},
		{"save: bad redaction", api + "/export", "application/json", `{"redact":["names"]}`, 400, `Unknown redaction "names"`},
		{"save: unknown leaf", api + "/export", "application/json", `{"leaf":"zzz"}`, 404, "no entry “zzz”"},
		{"export: bad format", api + "/export?format=pdf", "", "", 400, "use jsonl, html or html-session"},
		{"export: unknown leaf", api + "/export?leaf=zzz", "", "", 404, "no entry “zzz”"},
		{"export: id-less ref", api + "/export?leaf=~3", "", "", 404, "no entry “~3”"},
		{"export: save by GET", api + "/export?save=1", "", "", 405, "POST /api/sessions/ID/export"},
		{"export: unknown session", "/api/sessions/nope/export", "", "", 404, "No session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodPost
			if tt.body == "" && tt.ctype == "" {
				method = http.MethodGet
			}
			rec := send(t, srv, method, tt.target, tt.ctype, tt.body)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d\n%.500s", rec.Code, tt.status, rec.Body)
			}
			var e apiError
			decode(t, rec, &e)
			if !strings.Contains(e.Error, tt.want) {
				t.Errorf("error %q lacks %q", e.Error, tt.want)
			}
			if strings.Contains(e.Error, "/tmp/") || strings.Contains(e.Error, "json:") {
				t.Errorf("error %q shows internals", e.Error)
			}
		})
	}
	after, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("a refused request changed the session file")
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(file), "*")); len(m) != 2 {
		t.Errorf("a refused request created files: %v", m)
	}
}

func TestAPILabel(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	ev := published(t, lib)
	srv := newServer(t, lib, ev.fakeEvents).Handler()
	api := "/api/sessions/" + mainID

	rec := postJSON(t, srv, api+"/label", `{"entryId":"09b043aa","label":"  try later  "}`)
	if rec.Code != 200 {
		t.Fatalf("status %d\n%s", rec.Code, rec.Body)
	}
	var r struct{ ID string }
	decode(t, rec, &r)
	in := inspectOf(t, lib, mainID, "")
	if got := labelOf(in, "09b043aa"); got != "try later" {
		t.Errorf("label = %q, want the trimmed label", got)
	}
	if deref(in.LeafID) != r.ID {
		t.Errorf("leaf = %s, want the label entry %s", deref(in.LeafID), r.ID)
	}
	if evs := ev.take(); len(evs) != 1 || evs[0].Kind != library.KindAppend || !slices.Equal(evs[0].NewIDs, []string{r.ID}) ||
		evs[0].Leaf != r.ID || evs[0].OldLeaf != "4638afcc" || evs[0].Key != mainID {
		t.Errorf("published %+v", evs)
	}
	// The next GET sees it at once.
	var got inspection
	decode(t, get(t, srv, api), &got)
	if labelOf(&got, "09b043aa") != "try later" {
		t.Error("GET does not show the new label")
	}

	// An empty label clears it.
	if rec := postJSON(t, srv, api+"/label", `{"entryId":"09b043aa","label":""}`); rec.Code != 200 {
		t.Fatalf("clear: status %d\n%s", rec.Code, rec.Body)
	}
	if got := labelOf(inspectOf(t, lib, mainID, ""), "09b043aa"); got != "" {
		t.Errorf("cleared label = %q", got)
	}
}

func TestAPIRewind(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()
	api := "/api/sessions/" + mainID

	// With the leaf the page saw: allowed; pi resumes from a child of the target.
	rec := postJSON(t, srv, api+"/rewind", `{"entryId":"09b043aa","expectLeaf":"4638afcc"}`)
	if rec.Code != 200 {
		t.Fatalf("status %d\n%s", rec.Code, rec.Body)
	}
	var r struct{ ID string }
	decode(t, rec, &r)
	in := inspectOf(t, lib, mainID, "")
	if deref(in.LeafID) != r.ID || len(in.Path) < 2 || in.Path[len(in.Path)-2] != "09b043aa" {
		t.Errorf("leaf %s, path %v: want the rewind entry under 09b043aa", deref(in.LeafID), in.Path)
	}
	// The page that saw the old leaf is now stale.
	rec = postJSON(t, srv, api+"/rewind", `{"entryId":"c8578d56","expectLeaf":"4638afcc"}`)
	if rec.Code != 409 {
		t.Errorf("stale rewind: status %d", rec.Code)
	}
	// With a summary: pi's own branch_summary, which the model sees.
	rec = postJSON(t, srv, api+"/rewind", `{"entryId":"c8578d56","summary":"Tried dropping the cache.","expectLeaf":"`+r.ID+`"}`)
	if rec.Code != 200 {
		t.Fatalf("rewind with summary: status %d\n%s", rec.Code, rec.Body)
	}
	decode(t, rec, &r)
	in = inspectOf(t, lib, mainID, "")
	last := in.Context.Messages[len(in.Context.Messages)-1]
	if deref(in.LeafID) != r.ID || !strings.Contains(string(last), "Tried dropping the cache.") {
		t.Errorf("leaf %s, last message %s", deref(in.LeafID), last)
	}
}

func TestAPIFork(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	ev := published(t, lib)
	srv := newServer(t, lib, ev.fakeEvents).Handler()
	src := sessionFile(t, lib, mainID)

	rec := postJSON(t, srv, "/api/sessions/"+mainID+"/fork", `{"entryId":"09b043aa"}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("status %d\n%s", rec.Code, rec.Body)
	}
	var r forkReply
	decode(t, rec, &r)
	if !filepath.IsAbs(r.File) || filepath.Dir(r.File) != filepath.Dir(src) || r.Command != "pi --session '"+r.File+"'" {
		t.Errorf("reply %+v", r)
	}
	if loc := rec.Header().Get("Location"); loc != "/api/sessions/"+r.SessionID {
		t.Errorf("Location %q", loc)
	}
	s, err := sessions.Load(r.File)
	if err != nil {
		t.Fatal(err)
	}
	if s.Header.ParentSession != src || s.Header.ID != r.SessionID {
		t.Errorf("header %+v, want parentSession %s", s.Header, src)
	}
	// pi's fork leaves the label entries out of the path and adds them after it.
	want := withoutLabels(inspectOf(t, lib, mainID, "09b043aa"))
	if got := inspectOf(t, lib, r.SessionID, "09b043aa").Path; !slices.Equal(got, want) {
		t.Errorf("fork path %v, want %v", got, want)
	}
	if evs := ev.take(); len(evs) != 1 || evs[0].Kind != library.KindNew || evs[0].Key != r.SessionID {
		t.Errorf("published %+v", evs)
	}
	// The list and the session page know it at once.
	if rec := get(t, srv, "/s/"+r.SessionID); rec.Code != 200 || !strings.Contains(rec.Body.String(), "Forked from") {
		t.Errorf("new session page: status %d", rec.Code)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/home/dev/a b.jsonl": `'/home/dev/a b.jsonl'`,
		"/tmp/it's":           `'/tmp/it'\''s'`,
		"":                    `''`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestAPIUpgrade(t *testing.T) {
	root := demoRoot(t)
	file := writeSession(t, root, "--home-dev-old--", "2024-03-01T09-00-00-000Z_sess-v2.jsonl", v2Session)
	lib := openLib(t, root)
	ev := published(t, lib)
	srv := newServer(t, lib, ev.fakeEvents).Handler()
	api := "/api/sessions/sess-v2"

	rec := postJSON(t, srv, api+"/upgrade", `{"confirm":true}`)
	if rec.Code != 200 {
		t.Fatalf("status %d\n%s", rec.Code, rec.Body)
	}
	var r struct {
		Backup  string
		Version int
	}
	decode(t, rec, &r)
	if r.Backup != file+".v2.bak" || r.Version != 3 {
		t.Errorf("reply %+v", r)
	}
	if b, err := os.ReadFile(r.Backup); err != nil || string(b) != v2Session {
		t.Errorf("backup: %v %q", err, b)
	}
	if in := inspectOf(t, lib, "sess-v2", ""); in.Version != 3 {
		t.Errorf("version %d after the upgrade", in.Version)
	}
	if evs := ev.take(); len(evs) != 1 || evs[0].Kind != library.KindReload {
		t.Errorf("published %+v", evs)
	}
	// Now it takes labels; a second upgrade has nothing to do.
	if rec := postJSON(t, srv, api+"/label", `{"entryId":"b2000001","label":"start"}`); rec.Code != 200 {
		t.Errorf("label after upgrade: status %d\n%s", rec.Code, rec.Body)
	}
	if rec := postJSON(t, srv, api+"/upgrade", `{"confirm":true}`); rec.Code != 409 {
		t.Errorf("second upgrade: status %d", rec.Code)
	}
}

// TestCrossOriginAPI checks that every state-changing route refuses a
// request from another site, and takes a same-origin one.
func TestCrossOriginAPI(t *testing.T) {
	root := demoRoot(t)
	writeSession(t, root, "--home-dev-old--", "2024-03-01T09-00-00-000Z_sess-v2.jsonl", v2Session)
	lib := openLib(t, root)
	srv := newServer(t, lib, nil).Handler()
	file := sessionFile(t, lib, mainID)
	api := "/api/sessions/" + mainID
	ui := "/s/" + mainID + "/actions/"
	const form = "application/x-www-form-urlencoded"
	tests := []struct {
		target, ctype, body string
		status              int // for the same-origin request (a form posted without htmx goes back to the page)
	}{
		{api + "/label", "application/json", `{"entryId":"09b043aa","label":"x"}`, 200},
		{api + "/rewind", "application/json", `{"entryId":"09b043aa"}`, 200},
		{api + "/fork", "application/json", `{"entryId":"09b043aa"}`, 201},
		{api + "/export", "application/json", `{"format":"html"}`, 201},
		{"/api/sessions/sess-v2/upgrade", "application/json", `{"confirm":true}`, 200},
		{ui + "label", form, "entry=09b043aa&label=y", 303},
		{ui + "rewind", form, "entry=09b043aa", 303},
		{ui + "fork", form, "entry=09b043aa", 303},
		{ui + "share", form, "leaf=09b043aa&format=jsonl", 303},
		{"/s/sess-v2/actions/upgrade", form, "entry=b2000001&confirm=true", 303},
	}
	refusals := [][]string{
		{"Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "cross-site"},
		{"Origin", "http://evil.example"},
		{"Origin", "http://localhost.evil.example:8377"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			before, _ := os.ReadFile(file)
			files, _ := filepath.Glob(filepath.Join(filepath.Dir(file), "*"))
			for _, hdr := range refusals {
				rec := send(t, srv, http.MethodPost, tt.target, tt.ctype, tt.body, hdr...)
				if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "does not accept changes sent from other web sites") {
					t.Errorf("%v: status %d\n%s", hdr, rec.Code, rec.Body)
				}
				if strings.HasPrefix(tt.target, "/api/") && !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
					t.Errorf("%v: refusal is %q, not JSON", hdr, rec.Header().Get("Content-Type"))
				}
			}
			after, _ := os.ReadFile(file)
			now, _ := filepath.Glob(filepath.Join(filepath.Dir(file), "*"))
			if !bytes.Equal(before, after) || len(now) != len(files) {
				t.Fatal("a refused request wrote to the session folder")
			}
			rec := send(t, srv, http.MethodPost, tt.target, tt.ctype, tt.body,
				"Origin", "http://localhost:8377", "Sec-Fetch-Site", "same-origin")
			if rec.Code != tt.status {
				t.Errorf("same origin: status %d, want %d\n%.500s", rec.Code, tt.status, rec.Body)
			}
		})
	}
}

// TestWatcherSeesOneChange checks that a write announced by the server is
// not announced again by the watcher when its own notification arrives:
// a line appended after it (as pi appends) is the watcher's next
// announcement, alone; the watcher handles its notifications in order, so
// by then it has handled the server's write.
func TestWatcherSeesOneChange(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	stop := startWatcher(t, lib)
	defer stop()
	srv := newServer(t, lib, nil).Handler()
	ch, cancel := lib.Subscribe()
	defer cancel()

	rec := postJSON(t, srv, "/api/sessions/"+mainID+"/label", `{"entryId":"09b043aa","label":"once"}`)
	if rec.Code != 200 {
		t.Fatalf("status %d\n%s", rec.Code, rec.Body)
	}
	var r struct{ ID string }
	decode(t, rec, &r)
	file, _ := lib.File(mainID)
	sessiontest.Append(t, file, sessiontest.User("pi000001", r.ID, 59, "appended by pi")+"\n")
	var evs []library.Change
	for len(evs) == 0 || !slices.Contains(evs[len(evs)-1].NewIDs, "pi000001") {
		select {
		case e := <-ch:
			evs = append(evs, e)
		case <-time.After(guard): // a guard against a hang: it ends by an event
			t.Fatalf("the watcher did not announce pi's line: %+v", evs)
		}
	}
	if len(evs) != 2 || evs[0].Kind != library.KindAppend || !slices.Equal(evs[0].NewIDs, []string{r.ID}) ||
		evs[1].Kind != library.KindAppend || !slices.Equal(evs[1].NewIDs, []string{"pi000001"}) {
		t.Errorf("events %+v, want an append of %s, then one of pi's line alone", evs, r.ID)
	}
}

// startWatcher runs a watcher over lib with a short debounce and returns
// a func that stops it.
func startWatcher(t *testing.T, lib *library.Library) func() {
	t.Helper()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := watcher.New(lib, watcher.Options{Debounce: 20 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx)
	}()
	return func() { cancel(); <-done }
}

// withoutLabels returns an inspection's path without its label entries.
func withoutLabels(in *inspection) []string {
	label := map[string]bool{}
	for _, n := range in.Tree {
		var id, typ string
		if json.Unmarshal(n.ID, &id) == nil && json.Unmarshal(n.Type, &typ) == nil && typ == sessions.TypeLabel {
			label[id] = true
		}
	}
	var out []string
	for _, id := range in.Path {
		if !label[id] {
			out = append(out, id)
		}
	}
	return out
}

// TestAPIOddFiles covers files the writers treat specially: a last line
// without an id, and a version 2 file, which can still be forked and shared.
func TestAPIOddFiles(t *testing.T) {
	root := t.TempDir()
	writeSession(t, root, "--home-dev-old--", "2024-03-01T09-00-00-000Z_sess-v2.jsonl", v2Session)
	writeSession(t, root, "--home-dev-x--", "2025-01-01T10-00-00-000Z_noid.jsonl",
		`{"type":"session","version":3,"id":"noid","timestamp":"2025-01-01T10:00:00.000Z","cwd":"/home/dev/x"}
{"type":"message","id":"c1000001","parentId":null,"timestamp":"2025-01-01T10:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1735725601000}}
{"type":"custom","customType":"ext","data":{}}
`)
	lib := openLib(t, root)
	srv := newServer(t, lib, nil).Handler()

	// A label would hang off nothing; a rewind repairs that.
	rec := postJSON(t, srv, "/api/sessions/noid/label", `{"entryId":"c1000001","label":"x"}`)
	var e apiError
	decode(t, rec, &e)
	if rec.Code != 409 || !strings.Contains(e.Error, "Rewind to an entry first") {
		t.Errorf("label after an id-less line: status %d %q", rec.Code, e.Error)
	}
	if rec := postJSON(t, srv, "/api/sessions/noid/rewind", `{"entryId":"c1000001"}`); rec.Code != 200 {
		t.Errorf("rewind: status %d\n%s", rec.Code, rec.Body)
	}
	if rec := postJSON(t, srv, "/api/sessions/noid/label", `{"entryId":"c1000001","label":"x"}`); rec.Code != 200 {
		t.Errorf("label after the rewind: status %d\n%s", rec.Code, rec.Body)
	}

	// A version 2 file is read as pi migrates it: forks and exports are version 3.
	rec = postJSON(t, srv, "/api/sessions/sess-v2/fork", `{"entryId":"b2000002"}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("fork of a v2 file: status %d\n%s", rec.Code, rec.Body)
	}
	var f forkReply
	decode(t, rec, &f)
	if s, err := sessions.Load(f.File); err != nil || s.Header.Version != 3 {
		t.Errorf("fork of a v2 file: %v", err)
	}
	rec = get(t, srv, "/api/sessions/sess-v2/export")
	if s, err := readtest.Parse(t, rec.Body.Bytes(), "x.jsonl"); rec.Code != 200 || err != nil || s.Header.Version != 3 {
		t.Errorf("export of a v2 file: status %d, %v", rec.Code, err)
	}
}
