package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/piweb/piweb/inspect"
	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/share"
	"github.com/piweb/piweb/views"
)

// plantedKey is an Anthropic API key planted in a session, to be redacted.
const plantedKey = "sk-ant-api03-Zx8kQ2vN5mR7tY1uI4oP6aS9dF3gH0jK_lL2zX5cV8bN1mQ4wE7rT0yU3iO6pA9sD2fG5hJ8kL1zX4cV7bN0mQ3wE-6rT9yAA"

// plantSecrets appends to session id a turn holding plantedKey in a user
// message, a thinking block and a tool result, and a tool result that
// prints a script tag. It returns the id of the last entry.
func plantSecrets(t *testing.T, lib *library.Library, id string) string {
	t.Helper()
	file := sessionFile(t, lib, id)
	appendLines(t, file,
		`{"type":"message","id":"5ec00001","parentId":"4638afcc","timestamp":"2026-05-12T09:00:00.000Z","message":{"role":"user","content":"Deploy with ANTHROPIC_API_KEY=`+plantedKey+` please","timestamp":1778576400000}}`,
		`{"type":"message","id":"5ec00002","parentId":"5ec00001","timestamp":"2026-05-12T09:00:01.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"The user pasted `+plantedKey+` in the chat; do not echo it."},{"type":"toolCall","id":"call_x1","name":"bash","arguments":{"command":"cat .env"}}],"provider":"anthropic","model":"claude-opus-4-5","usage":{"totalTokens":10,"cost":{"total":0.01}},"stopReason":"toolUse","timestamp":1778576401000}}`,
		`{"type":"message","id":"5ec00003","parentId":"5ec00002","timestamp":"2026-05-12T09:00:02.000Z","message":{"role":"toolResult","toolCallId":"call_x1","toolName":"bash","content":[{"type":"text","text":"env: KEY=`+plantedKey+`\n<script>alert('pwned')</script>"}],"isError":false,"timestamp":1778576402000}}`,
	)
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
	return "5ec00003"
}

func TestExportJSONL(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()
	for _, base := range []string{"/api/sessions/", "/s/"} {
		rec := get(t, srv, base+mainID+"/export?leaf=09b043aa&format=jsonl")
		if rec.Code != 200 {
			t.Fatalf("%s: status %d\n%s", base, rec.Code, rec.Body)
		}
		if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename=fix-stale-forecast-cache-09b043aa.jsonl` {
			t.Errorf("Content-Disposition %q", cd)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/x-ndjson") {
			t.Errorf("Content-Type %q", ct)
		}
		s, err := readtest.Parse(t, rec.Body.Bytes(), "export.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := inspect.Write(&out, s, ""); err != nil {
			t.Fatal(err)
		}
		var got inspection
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		src := inspectOf(t, lib, mainID, "09b043aa")
		// The branch as pi's /export file.jsonl writes it: the path, labels in
		// place, under the session's own id (pi's /import keeps it).
		if !slices.Equal(got.Path, src.Path) {
			t.Errorf("exported path %v\nwant %v", got.Path, src.Path)
		}
		if got.ParentSession != nil || got.SessionID != mainID {
			t.Errorf("header: parentSession %v, id %s: want the session's own id and no local file", got.ParentSession, got.SessionID)
		}
	}
}

func TestExportHTML(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()
	leaf := plantSecrets(t, lib, mainID)
	rec := get(t, srv, "/api/sessions/"+mainID+"/export?format=html&leaf="+leaf)
	if rec.Code != 200 {
		t.Fatalf("status %d\n%s", rec.Code, rec.Body)
	}
	if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename=fix-stale-forecast-cache-5ec00003.html` {
		t.Errorf("Content-Disposition %q", cd)
	}
	page := rec.Body.String()
	checkOffline(t, page)
	for _, want := range []string{
		`<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; img-src data:; style-src &#39;unsafe-inline&#39;`,
		"&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;",              // the tool output, as text
		`<img src="data:image/png;base64,`,                                 // the demo's screenshot, inline
		"Fix stale forecast cache", "/home/dev/weather", "claude-opus-4-5", // name, folder, models
		`<details class="thinking">`, // thinking folded
		"Branch summary", "Compaction",
		plantedKey, // not redacted unless asked
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The tool result is shown with its call, once.
	if n := strings.Count(page, "alert(&#39;pwned&#39;)"); n != 1 {
		t.Errorf("the tool output appears %d times", n)
	}
}

// checkOffline fails when an exported page could run code other than
// piweb's own script (once, allowed by its hash and nothing else), or
// load anything.
func checkOffline(t *testing.T, page string) {
	t.Helper()
	checkShareCSP(t, page)
	own := "<script>" + views.ShareScript() + "</script>"
	if n := strings.Count(page, own); n != 1 {
		t.Errorf("the page holds piweb's script %d times, want once", n)
	}
	page = strings.Replace(page, own, "", 1) // the rest may hold no script at all
	lower := strings.ToLower(page)
	for _, bad := range []string{"<script", "<link", "<iframe", "url(", "@import", "src=\"http", "src=\"//", " srcset=", " on"} {
		if bad == " on" {
			continue // handlers are checked on the parsed page below
		}
		if strings.Contains(lower, bad) {
			t.Errorf("exported page contains %q", bad)
		}
	}
	var problems []string
	for _, p := range unsafeMarkup(t, page) {
		if p != "element <style>" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		t.Errorf("exported page: %v", problems)
	}
	if n := strings.Count(lower, "<style"); n != 1 {
		t.Errorf("%d style elements, want the one in <head>", n)
	}
	// Every in-page link lands on an element of the page (there is no tree in an export).
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(` id="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		ids[m[1]] = true
	}
	links := regexp.MustCompile(` href="#([^"]*)"`).FindAllStringSubmatch(page, -1)
	for _, m := range links {
		if !ids[m[1]] {
			t.Errorf("link to #%s, which the page does not hold", m[1])
		}
	}
	if len(links) == 0 {
		t.Error("no entry links in the export")
	}
}

func TestExportRedaction(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()
	leaf := plantSecrets(t, lib, mainID)
	api := "/api/sessions/" + mainID + "/export?leaf=" + leaf
	tests := []struct {
		query   string
		name    string
		gone    []string
		kept    []string
		noCwdIn bool
	}{
		{"&format=jsonl&redact=secrets", "fix-stale-forecast-cache-5ec00003-redacted.jsonl",
			[]string{plantedKey, "sk-ant-"}, []string{share.Redacted, "do not echo it", "cat .env"}, false},
		{"&format=html&redact=secrets", "fix-stale-forecast-cache-5ec00003-redacted.html",
			[]string{plantedKey, "sk-ant-", "/home/dev/weather<"}, []string{share.Redacted, "do not echo it", "Redacted before export: secrets."}, true},
		{"&format=html&redact=thinking,tools", "",
			[]string{"do not echo it", "alert(", "env: KEY"}, []string{share.RedactedThinking, share.RedactedToolOutput, "cat .env", "Deploy with"}, false},
		{"&format=jsonl&redact=thinking&redact=tools&redact=secrets", "",
			[]string{plantedKey, "do not echo it", "alert("}, []string{share.RedactedThinking, share.RedactedToolOutput, "Deploy with"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			rec := get(t, srv, api+tt.query)
			if rec.Code != 200 {
				t.Fatalf("status %d\n%s", rec.Code, rec.Body)
			}
			body := rec.Body.String()
			for _, g := range tt.gone {
				if strings.Contains(body, g) {
					t.Errorf("export still holds %q", g)
				}
			}
			for _, k := range tt.kept {
				if !strings.Contains(body, k) {
					t.Errorf("export lacks %q", k)
				}
			}
			if tt.name != "" && rec.Header().Get("Content-Disposition") != "attachment; filename="+tt.name {
				t.Errorf("Content-Disposition %q", rec.Header().Get("Content-Disposition"))
			}
			if strings.Contains(tt.query, "html") {
				checkOffline(t, body)
			} else if _, err := readtest.Parse(t, []byte(body), "x.jsonl"); err != nil {
				t.Errorf("the redacted JSONL is not a session: %v", err)
			}
		})
	}
}

func TestExportSave(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	ev := published(t, lib)
	srv := newServer(t, lib, ev.fakeEvents).Handler()
	dir := filepath.Dir(sessionFile(t, lib, mainID))
	api := "/api/sessions/" + mainID + "/export"

	download := get(t, srv, api+"?format=html&leaf=09b043aa").Body.String()
	var paths []string
	for range 2 {
		rec := postJSON(t, srv, api, `{"leaf":"09b043aa","format":"html"}`)
		if rec.Code != http.StatusCreated {
			t.Fatalf("status %d\n%s", rec.Code, rec.Body)
		}
		var r struct{ File string }
		decode(t, rec, &r)
		paths = append(paths, r.File)
	}
	want := []string{filepath.Join(dir, "fix-stale-forecast-cache-09b043aa.html"), filepath.Join(dir, "fix-stale-forecast-cache-09b043aa-2.html")}
	if !slices.Equal(paths, want) {
		t.Errorf("saved as %v, want %v (never over an existing file)", paths, want)
	}
	if b, err := os.ReadFile(paths[0]); err != nil || string(b) != download {
		t.Errorf("the saved page differs from the download (%v)", err)
	}
	if evs := ev.take(); len(evs) != 0 {
		t.Errorf("an HTML export published %+v", evs)
	}

	// A saved JSONL is listed at once: a copy of the session (pi's export
	// keeps the session's id), with a key of its own.
	rec := postJSON(t, srv, api, `{"format":"jsonl","redact":["secrets"]}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("status %d\n%s", rec.Code, rec.Body)
	}
	var r struct{ File string }
	decode(t, rec, &r)
	if r.File != filepath.Join(dir, "fix-stale-forecast-cache-4638afcc-redacted.jsonl") {
		t.Errorf("saved as %s", r.File)
	}
	s, err := sessions.Load(r.File)
	if err != nil {
		t.Fatal(err)
	}
	key, ok := lib.Key(r.File)
	if !ok || !strings.HasPrefix(key, s.Header.ID+"~") {
		t.Errorf("the saved session is in the library as %q (%v), want a copy's key", key, ok)
	}
	if m, err := lib.Meta(key); err != nil || m.CopyOf != mainID {
		t.Errorf("the saved session is not listed as a copy of %s: %+v, %v", mainID, m, err)
	}
	if evs := ev.take(); len(evs) != 1 || evs[0].Key != key || evs[0].Kind != library.KindNew {
		t.Errorf("published %+v", evs)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".piweb-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestExportGolden compares the HTML export of the demo's main branch with
// testdata/export.golden.html; run with -update to rewrite it.
func TestExportGolden(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	rec := get(t, srv, "/api/sessions/"+mainID+"/export?format=html")
	if rec.Code != 200 {
		t.Fatalf("status %d\n%s", rec.Code, rec.Body)
	}
	// The stylesheet is static/css/export.css; the golden file holds the markup.
	page := regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAllString(rec.Body.String(), "<style>/* css/export.css */</style>")
	checkGolden(t, "export.golden.html", lines(page))
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Fix stale forecast cache":      "fix-stale-forecast-cache",
		"  Über   café: naïve/../x  ":   "ber-caf-na-ve-x",
		"":                              "session",
		"日本語":                           "session",
		strings.Repeat("abcdefghij", 9): "abcdefghijabcdefghijabcdefghijabcdefghij",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestExportOddLeafID saves the export of a branch whose leaf id holds path
// characters: the file name must stay a plain name beside the session.
func TestExportOddLeafID(t *testing.T) {
	root := t.TempDir()
	file := writeSession(t, root, "--w--", "2026-01-01T00-00-00-000Z_odd.jsonl",
		`{"type":"session","version":3,"id":"odd","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`+"\n"+
			`{"type":"message","id":"/../../x","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`+"\n")
	lib := openLib(t, root)
	srv := newServer(t, lib, nil).Handler()
	rec := postJSON(t, srv, "/api/sessions/odd/export", `{"format":"jsonl"}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("status %d\n%s", rec.Code, rec.Body)
	}
	var r struct{ File string }
	decode(t, rec, &r)
	if filepath.Dir(r.File) != filepath.Dir(file) || strings.Contains(filepath.Base(r.File), "..") {
		t.Errorf("saved as %s, want a plain name in %s", r.File, filepath.Dir(file))
	}
	d := get(t, srv, "/api/sessions/odd/export?format=jsonl").Header().Get("Content-Disposition")
	if strings.Contains(d, "/") {
		t.Errorf("download named %q", d)
	}
}

// TestExportAtLabelLeaf exports a branch whose leaf is a label entry (every
// session right after a label): both formats answer, and the JSONL file is
// named after an entry the file holds.
func TestExportAtLabelLeaf(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()
	rec := postJSON(t, srv, "/api/sessions/"+mainID+"/label", `{"entryId":"09b043aa","label":"mark"}`)
	if rec.Code != 200 {
		t.Fatalf("label: %d %s", rec.Code, rec.Body)
	}
	var r struct{ ID string }
	decode(t, rec, &r)
	for _, leaf := range []string{"", r.ID} {
		html := get(t, srv, "/api/sessions/"+mainID+"/export?format=html&leaf="+leaf)
		if html.Code != 200 || !strings.Contains(html.Body.String(), "<html") {
			t.Errorf("HTML export at the label leaf %q: status %d", leaf, html.Code)
		}
		jl := get(t, srv, "/api/sessions/"+mainID+"/export?leaf="+leaf)
		if jl.Code != 200 {
			t.Fatalf("JSONL export at %q: status %d", leaf, jl.Code)
		}
		_, params, _ := mime.ParseMediaType(jl.Header().Get("Content-Disposition"))
		name := strings.TrimSuffix(params["filename"], ".jsonl")
		tail := name[strings.LastIndexByte(name, '-')+1:]
		if tail == "" || !strings.Contains(jl.Body.String(), `"id":"`+tail) {
			t.Errorf("JSONL export at %q is named %q: %q names no entry of the file", leaf, params["filename"], tail)
		}
	}
}

// TestExportWholeSession: the whole-session page holds every branch's
// entries (the abandoned ones too), pi's tree beside them with each row
// linking to an entry on the page, and loads nothing.
func TestExportWholeSession(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()
	rec := get(t, srv, "/s/"+mainID+"/export?format=html-session")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
	page := rec.Body.String()
	if cd := rec.Header().Get("Content-Disposition"); !strings.Contains(cd, "-session.html") {
		t.Errorf("file name: %s", cd)
	}
	for _, want := range []string{
		"Alternatively, could we just drop the cache entirely?", // an abandoned branch
		"Both callers use the default cache",                    // pi's leaf
		`class="export-tree"`, "↳ a branch from", "pi resumes at",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	checkOffline(t, page)
	ids := regexp.MustCompile(` id="(m[0-9.]+)"`).FindAllStringSubmatch(page, -1)
	have := map[string]bool{}
	for _, m := range ids {
		have[m[1]] = true
	}
	links := regexp.MustCompile(`class="trow[^"]*" href="#(m[0-9]+)"`).FindAllStringSubmatch(page, -1)
	if len(links) < 20 {
		t.Fatalf("the tree has %d rows", len(links))
	}
	for _, l := range links {
		if !have[l[1]] {
			t.Errorf("tree row links to #%s, which the page lacks", l[1])
		}
	}
	// Every message entry of the file is on the page.
	ss, err := sessions.Load(sessionFile(t, lib, mainID))
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range ss.Entries {
		if e.Type == sessions.TypeMessage && !have["m"+strconv.Itoa(i)] {
			t.Errorf("entry %s (%d) is not on the page", e.ID, i)
		}
	}
}

// checkShareCSP: an exported page's CSP loads nothing and runs one script,
// by its hash, and that hash is the one of the script the page holds.
func checkShareCSP(t *testing.T, page string) {
	t.Helper()
	m := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSP")
	}
	dirs := map[string]string{}
	for _, d := range strings.Split(html.UnescapeString(m[1]), ";") {
		if f := strings.Fields(d); len(f) > 0 {
			dirs[f[0]] = strings.Join(f[1:], " ")
		}
	}
	scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(page, -1)
	if len(scripts) != 1 || strings.Contains(strings.ToLower(page[strings.Index(page, "</script>")+1:]), "<script") {
		t.Fatalf("%d script elements, want one", len(scripts))
	}
	sum := sha256.Sum256([]byte(scripts[0][1]))
	want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if dirs["script-src"] != want || dirs["default-src"] != "'none'" || dirs["img-src"] != "data:" || len(dirs) != 6 {
		t.Errorf("the CSP is %q; want default-src 'none', img-src data:, script-src %s only", m[1], want)
	}
}
