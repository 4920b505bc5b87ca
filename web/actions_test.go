package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
)

// postForm posts a form as htmx does from the session page.
func postForm(t testing.TB, h http.Handler, target string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	return send(t, h, http.MethodPost, target, "application/x-www-form-urlencoded", form.Encode(),
		"HX-Request", "true", "Origin", "http://localhost:8377", "Sec-Fetch-Site", "same-origin")
}

func TestActionsPanel(t *testing.T) {
	root := demoRoot(t)
	writeSession(t, root, "--home-dev-old--", "2024-03-01T09-00-00-000Z_sess-v2.jsonl", v2Session)
	srv := newServer(t, openLib(t, root), nil).Handler()
	tests := []struct {
		name    string
		target  string
		want    []string
		notWant []string
	}{
		{"session page", "/s/" + mainID + "?target=09b043aa", []string{
			`id="entry-actions"`, `data-ref="09b043aa"`, `data-leaf="4638afcc"`,
			`hx-post="/s/` + mainID + `/actions/label"`, `name="label" value="rejected idea"`,
			`name="expectLeaf" value="4638afcc"`, "Rewind here", "Fork from here", "Share…",
			`action="/s/` + mainID + `/export"`, `<span id="conv-label" class="lbl">[rejected idea]</span>`,
		}, []string{"Upgrade (keeps a backup)"}},
		{"conversation fragment", "/s/" + mainID + "/entry?e=a9522c9f", []string{`id="entry-actions"`, `data-ref="a9522c9f"`, `name="label" value=""`}, nil},
		{"earlier page", "/s/" + mainID + "/entry?e=4638afcc&before=30", nil, []string{`id="entry-actions"`}},
		{"read-only session", "/s/sess-v2", []string{
			"Old format (version 2), read-only", "Read-only (old format)", "Upgrade (keeps a backup)", `hx-post="/s/sess-v2/actions/upgrade"`, "Fork from here", "Share…",
		}, []string{`/actions/label"`, `/actions/rewind"`, "problem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, srv, tt.target)
			if rec.Code != 200 {
				t.Fatalf("status %d\n%s", rec.Code, rec.Body)
			}
			body := rec.Body.String()
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(body, w) {
					t.Errorf("page has %q", w)
				}
			}
		})
	}
}

func TestActionForms(t *testing.T) {
	root := demoRoot(t)
	writeSession(t, root, "--home-dev-old--", "2024-03-01T09-00-00-000Z_sess-v2.jsonl", v2Session)
	lib := openLib(t, root)
	ev := published(t, lib)
	srv := newServer(t, lib, ev.fakeEvents).Handler()
	ui := "/s/" + mainID + "/actions/"
	file := sessionFile(t, lib, mainID)

	type step struct {
		name    string
		target  string
		form    url.Values
		want    []string
		notWant []string
		check   func(t *testing.T)
	}
	steps := []step{
		{"label", ui + "label", url.Values{"entry": {"a9522c9f"}, "label": {"first look"}},
			[]string{`class="outcome ok"`, "Label saved.", `name="label" value="first look"`, `<span class="lbl" id="lm4" hx-swap-oob="true">[first look]</span>`,
				`<span id="conv-label" class="lbl" hx-swap-oob="true">[first look]</span>`},
			[]string{"<html", `data-act="label" open`},
			func(t *testing.T) {
				if got := labelOf(inspectOf(t, lib, mainID, ""), "a9522c9f"); got != "first look" {
					t.Errorf("label %q", got)
				}
			}},
		{"label clear", ui + "label", url.Values{"entry": {"a9522c9f"}, "label": {"  "}},
			[]string{"Label cleared.", `<span id="conv-label" class="lbl" hx-swap-oob="true"></span>`}, nil,
			func(t *testing.T) {
				if got := labelOf(inspectOf(t, lib, mainID, ""), "a9522c9f"); got != "" {
					t.Errorf("label %q", got)
				}
			}},
		{"label of an unknown entry", ui + "label", url.Values{"entry": {"zzz"}, "label": {"x"}},
			nil, nil, nil}, // checked below: a 404 page, the entry is not there to re-render
		{"stale rewind keeps the summary", ui + "rewind", url.Values{"entry": {"09b043aa"}, "summary": {"Why we left"}, "expectLeaf": {"c8578d56"}},
			[]string{`class="outcome err"`, `role="alert"`, "changed since this page showed it", ">Why we left</textarea>",
				`data-act="rewind" open`, `name="expectLeaf" value="`, `<div id="act-outcomes" hx-swap-oob="afterbegin">`},
			[]string{`id="conv-label"`}, nil},
		{"rewind", ui + "rewind", url.Values{"entry": {"09b043aa"}, "summary": {""}},
			[]string{"Rewound: pi resumes from this entry"}, nil,
			func(t *testing.T) {
				in := inspectOf(t, lib, mainID, "")
				if in.Path[len(in.Path)-2] != "09b043aa" {
					t.Errorf("path %v does not end under 09b043aa", in.Path)
				}
			}},
		{"fork", ui + "fork", url.Values{"entry": {"09b043aa"}},
			[]string{"Forked into a new session.", "pi --session &#39;/", "/--home-dev-weather--/", `data-copy`, `data-action="Fork"`}, []string{`data-act="fork" open`}, nil},
		{"share", ui + "share", url.Values{"leaf": {"09b043aa"}, "format": {"html"}, "redact": {"secrets", "thinking"}},
			[]string{"Saved next to the session.", "fix-stale-forecast-cache-09b043aa-redacted.html"}, nil, nil},
		{"read-only label refused", "/s/sess-v2/actions/label", url.Values{"entry": {"b2000001"}, "label": {"x"}},
			[]string{`class="outcome err"`, "old version 2 format", "Upgrade (keeps a backup)"}, nil, nil},
		{"upgrade", "/s/sess-v2/actions/upgrade", url.Values{"entry": {"b2000001"}, "confirm": {"true"}},
			[]string{"Upgraded to version 3", ".v2.bak</code>", `/actions/label"`}, []string{"Upgrade (keeps a backup)"}, nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			rec := postForm(t, srv, st.target, st.form)
			body := rec.Body.String()
			if st.name == "label of an unknown entry" {
				// No panel to re-render: the error box, which actions.js puts into the panel.
				if rec.Code != 404 || !strings.Contains(body, `class="error-box"`) || !strings.Contains(body, "no entry “zzz”") {
					t.Errorf("status %d\n%s", rec.Code, body)
				}
				return
			}
			if rec.Code != 200 {
				t.Fatalf("status %d\n%s", rec.Code, body)
			}
			if !strings.HasPrefix(body, `<section id="entry-actions"`) {
				t.Errorf("not the panel fragment:\n%.300s", body)
			}
			for _, w := range st.want {
				if !strings.Contains(body, w) {
					t.Errorf("fragment lacks %q\n%s", w, body)
				}
			}
			for _, w := range st.notWant {
				if strings.Contains(body, w) {
					t.Errorf("fragment has %q", w)
				}
			}
			if st.check != nil {
				st.check(t)
			}
		})
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	// Without htmx (no script), a form post acts and goes back to the page.
	rec := send(t, srv, http.MethodPost, ui+"label", "application/x-www-form-urlencoded", "entry=a9522c9f&label=plain", "Sec-Fetch-Site", "same-origin")
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || loc != "/s/"+mainID+"?target=a9522c9f" {
		t.Errorf("plain form post: status %d, Location %q", rec.Code, loc)
	}
	if got := labelOf(inspectOf(t, lib, mainID, ""), "a9522c9f"); got != "plain" {
		t.Errorf("plain form post: label %q", got)
	}
	// An upgrade without its confirmation is refused.
	if rec := postForm(t, srv, "/s/sess-v2/actions/upgrade", url.Values{"entry": {"b2000001"}}); rec.Code != 400 {
		t.Errorf("unconfirmed upgrade: status %d", rec.Code)
	}
}
