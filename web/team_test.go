package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/team"
	"github.com/piweb/piweb/usage"
)

// teamServer serves the demo as a team server would its mirror: every
// session a copy (the library read-only), the main session on "laptop",
// the two others (one in its project, the fork in another) on "desk".

func teamServer(t *testing.T) (*Server, *library.Library) {
	t.Helper()
	root := demoRoot(t)
	lib := openLib(t, root)
	mainFile, _ := lib.File(mainID)
	machine := func(file string) string {
		if file == mainFile {
			return "laptop"
		}
		return "desk"
	}
	lib.SetReadOnly(machine)
	s := newServer(t, lib, nil)
	s.opt.Machine = machine
	s.usage = team.Usage{Files: usage.NewFiles(lib, ""), Lib: lib, Machine: machine}
	return s, lib
}

// TestTeamReadOnly: every write to a team server's copy answers 409
// naming the machine the session lives on, in the API and in the page's
// forms; the buttons say so; downloads work; the files stay as they were.
func TestTeamReadOnly(t *testing.T) {
	s, lib := teamServer(t)
	h := s.Handler()
	file, _ := lib.File(mainID)
	before, _ := os.ReadFile(file)
	api := "/api/sessions/" + mainID
	for _, w := range []struct{ target, body string }{
		{api + "/label", `{"entryId": "09b043aa", "label": "x"}`},
		{api + "/rewind", `{"entryId": "09b043aa"}`},
		{api + "/fork", `{"entryId": "09b043aa"}`},
		{api + "/export", `{"leaf": "09b043aa", "format": "jsonl"}`},
		{api + "/upgrade", `{"confirm": true}`},
	} {
		r := postJSON(t, h, w.target, w.body)
		var e apiError
		if r.Code != http.StatusConflict || json.Unmarshal(r.Body.Bytes(), &e) != nil || !strings.Contains(e.Error, "lives on laptop") {
			t.Errorf("%s: %d %s", w.target, r.Code, r.Body)
		}
	}
	ui := "/s/" + mainID + "/actions/"
	for _, a := range []string{"label", "rewind", "fork", "share"} {
		r := postForm(t, h, ui+a, url.Values{"entry": {"09b043aa"}, "leaf": {"09b043aa"}, "label": {"x"}, "format": {"jsonl"}})
		if r.Code != http.StatusOK || !strings.Contains(r.Body.String(), `class="outcome err"`) || !strings.Contains(r.Body.String(), "This session lives on laptop") {
			t.Errorf("%s form: %d %s", a, r.Code, r.Body)
		}
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Error("the copy changed")
	}
	if files, _ := library.SessionFiles(lib.Root); len(files) != 3 {
		t.Errorf("files now: %v", files)
	}
	// The buttons say where to write; the share downloads, and offers no save beside.
	r := get(t, h, "/s/"+mainID+"?target=09b043aa")
	body := r.Body.String()
	for _, want := range []string{`data-act="label"`, `data-act="rewind"`, `data-act="fork"`, "on laptop", "Label, rewind or fork it on laptop", "Download"} {
		if !strings.Contains(body, want) {
			t.Errorf("the actions panel lacks %q", want)
		}
	}
	for _, not := range []string{"Save next to the session", `/actions/label"`, `/actions/rewind"`, `/actions/fork"`} {
		if strings.Contains(body, not) {
			t.Errorf("the actions panel offers %q", not)
		}
	}
	if r := get(t, h, "/s/"+mainID+"/export?leaf=09b043aa&format=jsonl"); r.Code != http.StatusOK || !strings.Contains(r.Body.String(), `"type":"session"`) {
		t.Errorf("download: %d", r.Code)
	}
	if r := get(t, h, "/s/"+mainID+"/export?format=html-session"); r.Code != http.StatusOK {
		t.Errorf("HTML share: %d", r.Code)
	}
}

// TestTeamList: rows of /api/sessions carry their machine; the sessions
// page groups by machine and project and filters by machine.
func TestTeamList(t *testing.T) {
	s, _ := teamServer(t)
	h := s.Handler()
	var rows []map[string]any
	decode(t, get(t, h, "/api/sessions"), &rows)
	machines := map[string]string{}
	for _, r := range rows {
		machines[r["id"].(string)] = r["machine"].(string)
	}
	if len(rows) != 3 || machines[forkID] != "desk" || machines[mainID] != "laptop" || machines[darkID] != "desk" {
		t.Errorf("machines %v", machines)
	}
	body := get(t, h, "/").Body.String()
	for _, want := range []string{`<select id="machine" name="machine">`, `<option value="desk">desk</option>`, `<span class="machine" title="the machine these sessions were pushed from">laptop</span>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the sessions page lacks %q", want)
		}
	}
	if n := strings.Count(body, `<section class="project"`); n != 3 {
		t.Errorf("%d groups, want 3 (one project on laptop, two on desk)", n)
	}
	body = get(t, h, "/?machine=desk").Body.String()
	if strings.Count(body, `class="session-row"`) != 2 || !strings.Contains(body, "/s/"+forkID) || !strings.Contains(body, "/s/"+darkID) || !strings.Contains(body, `data-machine="desk"`) ||
		!strings.Contains(body, `<option value="desk" selected>`) {
		t.Errorf("filtered by desk:\n%s", body)
	}
	// Usage, by machine.
	for m, want := range map[string]bool{"laptop": true, "desk": true, "": false} {
		var rep struct {
			Daily []struct{ Machines []string }
		}
		decode(t, get(t, h, "/api/usage?range=all&machine="+m), &rep)
		got := map[string]bool{}
		for _, d := range rep.Daily {
			for _, x := range d.Machines {
				got[x] = true
			}
		}
		if want && (len(got) != 1 || !got[m]) || !want && (!got["laptop"] || !got["desk"]) {
			t.Errorf("usage of %q: machines %v", m, got)
		}
	}
	// Locally, none of it.
	local := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	body = get(t, local, "/").Body.String()
	if strings.Contains(body, `id="machine"`) || strings.Contains(get(t, local, "/api/sessions").Body.String(), `"machine"`) {
		t.Error("a local piweb shows machines")
	}
}
