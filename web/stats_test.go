package web

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/oracle"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/patch"
)

// TestAPIStats checks the stats API's shape, that path and abandoned part
// the file, and that the file's totals are what pi's own getSessionStats gives.
func TestAPIStats(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil)
	h := srv.Handler()
	rec := get(t, h, "/api/sessions/"+mainID+"/stats")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, " ") != "abandoned byModel file path" {
		t.Fatalf("keys %v", keys)
	}
	for _, k := range strings.Fields("input output cacheRead cacheWrite total cost userMessages assistantMessages toolCalls toolResults") {
		if _, ok := raw["file"][k]; !ok {
			t.Errorf("file has no %q", k)
		}
	}
	var st struct {
		File, Path, Abandoned map[string]float64
		ByModel               map[string]map[string]float64
	}
	json.Unmarshal(rec.Body.Bytes(), &st)
	if st.Path["entries"]+st.Abandoned["entries"] != st.File["entries"] || st.Abandoned["entries"] == 0 {
		t.Errorf("path %v + abandoned %v entries != file %v", st.Path["entries"], st.Abandoned["entries"], st.File["entries"])
	}
	if st.ByModel["anthropic/claude-sonnet-4-5"]["assistantMessages"] == 0 || st.ByModel["Tools/summaries"]["cost"] == 0 {
		t.Errorf("by model: %v", st.ByModel)
	}
	// At another leaf the path changes and the file does not.
	rec = get(t, h, "/api/sessions/"+mainID+"/stats?leaf=4ee5d1f8")
	var st2 struct{ File, Path map[string]float64 }
	json.Unmarshal(rec.Body.Bytes(), &st2)
	if st2.File["cost"] != st.File["cost"] || st2.Path["entries"] >= st.Path["entries"] || st2.Path["userMessages"] != 2 {
		t.Errorf("at 4ee5d1f8: file %v path %v", st2.File, st2.Path)
	}
	if rec := get(t, h, "/api/sessions/"+mainID+"/stats?leaf=nope"); rec.Code != 404 {
		t.Errorf("unknown leaf: %d", rec.Code)
	}

	// pi's own arithmetic on the same file.
	dir := oracle.Dir(t)
	file, _ := lib.File(mainID)
	out, err := exec.Command("node", filepath.Join(dir, "stats.mjs"), file).Output()
	if err != nil {
		t.Fatalf("stats.mjs: %v %s", err, oracle.Stderr(err))
	}
	var pi struct {
		Stats struct {
			UserMessages, AssistantMessages, ToolCalls, ToolResults float64
			Tokens                                                  map[string]float64
			Cost                                                    float64
		}
	}
	json.Unmarshal(out, &pi)
	want := map[string]float64{"userMessages": pi.Stats.UserMessages, "assistantMessages": pi.Stats.AssistantMessages,
		"toolCalls": pi.Stats.ToolCalls, "toolResults": pi.Stats.ToolResults, "cost": pi.Stats.Cost,
		"input": pi.Stats.Tokens["input"], "output": pi.Stats.Tokens["output"], "cacheRead": pi.Stats.Tokens["cacheRead"],
		"cacheWrite": pi.Stats.Tokens["cacheWrite"], "total": pi.Stats.Tokens["total"]}
	for k, v := range want {
		if st.File[k] != v {
			t.Errorf("file %s = %v, pi's /session says %v", k, st.File[k], v)
		}
	}
}

// TestAPIFilesAndPatch checks the files changed along the demo's main path
// and that the downloaded patch turns the file the session read into the fixed one.
func TestAPIFilesAndPatch(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil)
	h := srv.Handler()
	rec := get(t, h, "/api/sessions/"+mainID+"/files?leaf=b82f83d6")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var files []struct {
		Path           string
		Added, Removed int
		Changes        []struct{ EntryID, Tool, Patch string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &files); err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != "src/forecast/cache.ts" || files[0].Added != 2 || files[0].Removed != 1 ||
		len(files[0].Changes) != 1 || files[0].Changes[0].EntryID != "593f9271" || files[0].Changes[0].Tool != "edit" {
		t.Fatalf("files: %+v", files)
	}
	// At the session's leaf the api.ts edit counts too; the failed edit never does.
	rec = get(t, h, "/api/sessions/"+mainID+"/files")
	json.Unmarshal(rec.Body.Bytes(), &files)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, " ") != "src/forecast/cache.ts src/forecast/api.ts" {
		t.Errorf("files at the leaf: %v", paths)
	}
	rec = get(t, h, "/s/"+mainID+"/patch?leaf=b82f83d6")
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/x-diff") {
		t.Errorf("content type %q", ct)
	}
	if cd := rec.Header().Get("Content-Disposition"); !strings.Contains(cd, "attachment") || !strings.Contains(cd, ".patch") {
		t.Errorf("disposition %q", cd)
	}
	read := "type Entry = { at: number; data: Forecast };\n\nconst cache = new Map<string, Entry>();\nconst TTL = 24 * 60 * 60 * 1000; // one day\n\nexport function store(city: string, data: Forecast) {\n  cache.set(city, { at: Date.now(), data });\n}\n\nexport function cached(city: string) {\n  const e = cache.get(city);\n  if (e && Date.now() - e.at < TTL) return e.data;\n}\n"
	got, err := patch.Apply(rec.Body.String(), read)
	if err != nil {
		t.Fatalf("the patch does not apply: %v\n%s", err, rec.Body)
	}
	if !strings.Contains(got, "const TTL = 30 * 60 * 1000; // 30 minutes\nconst key = ") || strings.Contains(got, "one day") {
		t.Errorf("patched:\n%s", got)
	}
}

// TestAPICompare checks the fork point and both sides of two branches,
// an entry against its ancestor, two roots, and bad requests.
func TestAPICompare(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil)
	h := srv.Handler()
	type side struct {
		Entries []string
		Stats   map[string]float64
		Files   []string
	}
	var c struct {
		Ancestor *string
		A, B     side
	}
	rec := get(t, h, "/api/sessions/"+mainID+"/compare?a=b82f83d6&b=4ee5d1f8")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	json.Unmarshal(rec.Body.Bytes(), &c)
	if c.Ancestor == nil || *c.Ancestor != "9a374789" {
		t.Fatalf("ancestor %v", c.Ancestor)
	}
	if c.A.Entries[len(c.A.Entries)-1] != "b82f83d6" || c.B.Entries[len(c.B.Entries)-1] != "4ee5d1f8" || len(c.B.Entries) != 3 {
		t.Errorf("sides: %v / %v", c.A.Entries, c.B.Entries)
	}
	if !slices.Equal(c.A.Files, []string{"src/forecast/cache.ts"}) || len(c.B.Files) != 0 {
		t.Errorf("files: %v / %v", c.A.Files, c.B.Files)
	}
	if c.A.Stats["toolCalls"] != 3 || c.B.Stats["assistantMessages"] != 1 || c.B.Stats["cost"] <= 0 {
		t.Errorf("stats: %v / %v", c.A.Stats, c.B.Stats)
	}
	// An entry and one of its ancestors: the ancestor is the entry itself.
	rec = get(t, h, "/api/sessions/"+mainID+"/compare?a=9a374789&b=b82f83d6")
	c.Ancestor = nil
	json.Unmarshal(rec.Body.Bytes(), &c)
	if c.Ancestor == nil || *c.Ancestor != "9a374789" || len(c.A.Entries) != 0 || len(c.B.Entries) == 0 {
		t.Errorf("ancestor case: %v %v %v", c.Ancestor, c.A.Entries, c.B.Entries)
	}
	for target, code := range map[string]int{
		"?a=b82f83d6":            400,
		"?a=b82f83d6&b=nope":     404,
		"?a=&b=":                 400,
		"?a=b82f83d6&b=b82f83d6": 200,
	} {
		if rec := get(t, h, "/api/sessions/"+mainID+"/compare"+target); rec.Code != code {
			t.Errorf("%s: %d, want %d: %s", target, rec.Code, code, rec.Body)
		}
	}
	// Two roots of one session share no ancestor.
	root := t.TempDir()
	content := sessiontest.Lines(sessiontest.Header,
		sessiontest.User("u1", "", 1, "first"), sessiontest.Asst("a1", "u1", 2, "one"),
		sessiontest.User("u2", "", 3, "second root"), sessiontest.Asst("a2", "u2", 4, "two"))
	writeSession(t, root, "--w--", "s1.jsonl", content)
	h2 := newServer(t, openLib(t, root), nil).Handler()
	rec = get(t, h2, "/api/sessions/s1/compare?a=a1&b=a2")
	var c2 struct {
		Ancestor *string
		A, B     side
	}
	json.Unmarshal(rec.Body.Bytes(), &c2)
	if rec.Code != 200 || c2.Ancestor != nil || len(c2.A.Entries) != 2 || len(c2.B.Entries) != 2 || c2.A.Stats["cost"] != 0.25 {
		t.Errorf("two roots: %d %s", rec.Code, rec.Body)
	}
	page := get(t, h2, "/s/s1/compare?a=a1&b=a2").Body.String()
	if !strings.Contains(page, "No common ancestor") {
		t.Errorf("the page does not say there is no common ancestor")
	}
}

// TestComparePage checks the page: the strip, both sides' turns side by
// side, files only in A, and that session text is escaped.
func TestComparePage(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil)
	rec := get(t, srv.Handler(), "/s/"+mainID+"/compare?a=b82f83d6&b=4ee5d1f8")
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{"Paths part after", "9a374789", "class=\"cmp-strip\"", "Do both: key by city and date",
		"Alternatively, could we just drop the cache entirely?", "only in A (1)", "src/forecast/cache.ts", "swap A and B",
		"/compare?a=4ee5d1f8&amp;b=b82f83d6"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Count(body, `class="cmp-turn"`) < 2 {
		t.Errorf("fewer than two turns side by side")
	}
}

// TestFilesTabAndHeader checks the files tab and the header's statistics on the session page.
func TestFilesTabAndHeader(t *testing.T) {
	srv := newServer(t, openLib(t, demoRoot(t)), nil)
	h := srv.Handler()
	body := get(t, h, "/s/"+mainID+"?target=b82f83d6&view=files").Body.String()
	for _, want := range []string{`class="files"`, "Download .patch", "/patch?leaf=b82f83d6", "src/forecast/cache.ts",
		"shell commands may have changed files", "Files (1)", "compare with…"} {
		if !strings.Contains(body, want) {
			t.Errorf("the files tab lacks %q", want)
		}
	}
	for _, want := range []string{"Tool calls", "Compactions", "Branch summaries", "Cache read", "Cache write", "on branches pi will not resume", "anthropic/claude-opus-4-5"} {
		if !strings.Contains(body, want) {
			t.Errorf("the header's statistics lack %q", want)
		}
	}
}

// TestForkLineage: a fork's page names the session and the entry it left
// from, and the session's page lists its forks with theirs.
func TestForkLineage(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	h := newServer(t, lib, nil).Handler()
	var fork string
	for _, m := range lib.List() {
		if m.ParentKey == mainID {
			fork = m.Key
		}
	}
	if fork == "" {
		t.Fatal("the demo has no fork of the main session")
	}
	at := regexp.MustCompile(`Forked from <a href="/s/` + mainID + `">[^<]*</a> at <a href="/s/` + mainID + `\?target=([0-9a-f]+)">`).FindStringSubmatch(get(t, h, "/s/"+fork).Body.String())
	if at == nil {
		t.Fatal("the fork's page does not say where it left from")
	}
	in := inspectOf(t, lib, mainID, "")
	if !slices.Contains(in.Path, at[1]) && !strings.Contains(fmt.Sprint(in.Tree), at[1]) {
		t.Errorf("the fork point %s is not an entry of the main session", at[1])
	}
	page := get(t, h, "/s/"+mainID).Body.String()
	if !strings.Contains(page, "1 fork:") || !strings.Contains(page, `href="/s/`+fork+`"`) || !strings.Contains(page, `?target=`+at[1]) {
		t.Error("the main session's page does not list its fork and where it left")
	}
}
