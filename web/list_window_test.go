package web

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestListWindows: the sessions page sends the first 200 sessions and a
// button for the rest, which come 200 at a time, without repeats, in the
// page's order; a search windows its own matches.
func TestListWindows(t *testing.T) {
	root := t.TempDir()
	for i := range 450 {
		proj := fmt.Sprintf("--p%d--", i%3)
		id := fmt.Sprintf("0199%04d-0000-7000-8000-000000000000", i)
		content := fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p%d"}`+"\n"+
			`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T%02d:%02d:00.000Z","message":{"role":"user","content":"task %d %s","timestamp":1}}`+"\n",
			id, i%3, i/60, i%60, i, map[bool]string{true: "needle", false: "hay"}[i%10 == 0])
		writeSession(t, root, proj, fmt.Sprintf("2026-01-01T00-00-00-000Z_%s.jsonl", id), content)
	}
	h := newServer(t, openLib(t, root), nil).Handler()
	rows := regexp.MustCompile(`<tr id="(s[^"]+)" class="session-row"`)
	more := regexp.MustCompile(`class="more-sessions" hx-get="([^"]+)"`)
	seen := map[string]bool{}
	page := get(t, h, "/").Body.String()
	var windows []int
	for {
		ids := rows.FindAllStringSubmatch(page, -1)
		windows = append(windows, len(ids))
		for _, m := range ids {
			if seen[m[1]] {
				t.Fatalf("session %s sent twice", m[1])
			}
			seen[m[1]] = true
		}
		next := more.FindStringSubmatch(page)
		if next == nil {
			break
		}
		page = get(t, h, strings.ReplaceAll(next[1], "&amp;", "&")).Body.String()
		if strings.Contains(page, "<html") {
			t.Fatal("a window came as a whole page")
		}
	}
	if fmt.Sprint(windows) != "[200 200 50]" || len(seen) != 450 {
		t.Errorf("windows %v, %d sessions in all", windows, len(seen))
	}
	if !strings.Contains(get(t, h, "/?offset=200").Body.String(), "(continued)") {
		t.Error("a window that starts inside a project does not say it continues")
	}
	found := get(t, h, "/?q=needle").Body.String()
	if n := len(rows.FindAllString(found, -1)); n != 45 || more.MatchString(found) {
		t.Errorf("a search shows %d rows (more button: %v), want its 45 matches in one window", n, more.MatchString(found))
	}
}

// TestListDrawnOnceFresh: the sessions page is drawn once per state of the
// library, and a change to any session draws it again.
func TestListDrawnOnceFresh(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil)
	h := srv.Handler()
	first := get(t, h, "/").Body.String()
	if again := get(t, h, "/").Body.String(); again != first {
		t.Fatal("the same state drew another page")
	}
	file := sessionFile(t, lib, mainID)
	appendLines(t, file, `{"type":"session_info","id":"feed0009","parentId":"4638afcc","timestamp":"2026-05-12T09:00:00.000Z","name":"Renamed while cached"}`)
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
	if page := get(t, h, "/").Body.String(); !strings.Contains(page, "Renamed while cached") {
		t.Error("the page drawn before the change was served after it")
	}
}

// TestListFamilies: sorted as families, a fork comes right under the
// session it was forked from, indented, with its project named.
func TestListFamilies(t *testing.T) {
	h := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	page := get(t, h, "/?sort=families").Body.String()
	rows := regexp.MustCompile(`<a class="title" href="/s/([^"]+)"`).FindAllStringSubmatch(page, -1)
	var order []string
	for _, r := range rows {
		order = append(order, r[1])
	}
	joined := strings.Join(order, " ")
	parent, fork := strings.Index(joined, mainID), strings.Index(joined, forkID)
	if parent < 0 || fork < 0 || fork < parent {
		t.Fatalf("order %v: the fork does not follow its parent", order)
	}
	next := strings.TrimSpace(joined[parent+len(mainID):])
	if !strings.HasPrefix(next, forkID) {
		t.Errorf("the fork is not right under its parent: %v", order)
	}
	if !strings.Contains(page, `class="fork-connector"`) || !strings.Contains(page, "/home/dev/weather-api") {
		t.Error("the fork is not indented or its project not named")
	}
}
