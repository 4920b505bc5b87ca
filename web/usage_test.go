package web

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/usage"
	"github.com/piweb/piweb/usage/storesource"
)

func TestUsagePage(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil)
	h := srv.Handler()
	// The demo's sessions are from May 2026; the tests' now is June 1.
	res := get(t, h, "/usage")
	if res.Code != http.StatusOK {
		t.Fatalf("GET /usage: %d\n%s", res.Code, res.Body)
	}
	page := res.Body.String()
	for _, want := range []string{
		`id="usage-body"`, `May 3 – Jun 1, 2026`, // the last 30 days
		`class="u-chart u-bars"`, `aria-label="Cost per day by model"`, `aria-label="Tokens per day by kind"`, `aria-label="Cost on abandoned branches"`,
		`class="u-chart u-heat"`, `href="/s/` + mainID + `"`, // the top sessions link to their pages
		`id="table-cost"`, `<th scope="row">Tue May 12</th>`, // a table under the charts
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if list := get(t, h, "/").Body.String(); !strings.Contains(list, `<a class="usage-link" href="/usage"`) {
		t.Error("the sessions page does not link to /usage")
	}
	if n := strings.Count(page, "<details class=\"usage-table\""); n != 4 {
		t.Errorf("%d tables, want one under each of the 4 charts", n)
	}
	// By project: the cost is stacked by the projects' folders (their cwd's last name).
	res = get(t, h, "/usage?range=all&tz=UTC&by=project", "HX-Request", "true")
	frag := res.Body.String()
	if res.Code != http.StatusOK || strings.Contains(frag, "<html") || !strings.Contains(frag, `aria-label="Cost per day by project"`) ||
		!strings.Contains(frag, "weather-api") || !strings.Contains(frag, `id="by-project" aria-current="true"`) {
		t.Errorf("by project, for htmx: %d\n%s", res.Code, frag)
	}
	// A range without usage says so.
	if res := get(t, h, "/usage?range=custom&since=2020-01-01&until=2020-01-31"); !strings.Contains(res.Body.String(), "No usage in this range") {
		t.Errorf("an empty range:\n%s", res.Body)
	}
	for _, bad := range []string{"/usage?tz=Mars/Olympus", "/usage?tz=../../etc/passwd", "/usage?range=1y", "/usage?since=yesterday", "/api/usage?group=hourly", "/api/usage?since=2026-05-02&until=2026-05-01"} {
		if res := get(t, h, bad); res.Code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", bad, res.Code)
		}
	}
}

// TestAPIUsage checks that /api/usage answers what `piweb usage --json` prints.
func TestAPIUsage(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	h := newServer(t, lib, nil).Handler()
	host, _ := os.Hostname()
	src := usage.NewFiles(lib, host)
	for _, c := range []struct {
		url string
		q   usage.Query
	}{
		{"/api/usage?tz=UTC", usage.Query{Group: usage.Daily, Loc: time.UTC}},
		{"/api/usage?group=month&tz=Asia/Kathmandu", usage.Query{Group: usage.Monthly, Loc: mustZone(t, "Asia/Kathmandu")}},
		{"/api/usage?group=week&tz=UTC&weekStart=monday&order=asc", usage.Query{Group: usage.Weekly, Loc: time.UTC, WeekStart: time.Monday, Asc: true}},
		{"/api/usage?group=session&since=2026-05-12&until=2026-05-12&tz=UTC", usage.Query{Group: usage.BySession, Loc: time.UTC, Since: "2026-05-12", Until: "2026-05-12"}},
		{"/api/usage?group=project&project=--home-dev-weather--", usage.Query{Group: usage.ByProject, Loc: time.UTC, Projects: []string{"--home-dev-weather--"}}},
	} {
		res := get(t, h, c.url)
		if res.Code != http.StatusOK || !strings.HasPrefix(res.Header().Get("Content-Type"), "application/json") {
			t.Fatalf("GET %s: %d %s\n%s", c.url, res.Code, res.Header().Get("Content-Type"), res.Body)
		}
		rep, err := usage.Make(context.Background(), src, c.q)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := rep.WriteJSON(&want); err != nil {
			t.Fatal(err)
		}
		if res.Body.String() != want.String() {
			t.Errorf("GET %s:\n%s\nthe CLI prints:\n%s", c.url, res.Body, want.String())
		}
		if rep.Totals.Cost <= 0 {
			t.Errorf("GET %s: no cost", c.url)
		}
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestUsageEscapes checks that names, messages and models from session
// files reach the page, its charts' tooltips and its tables escaped.
func TestUsageEscapes(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "--home-dev-x--")
	os.MkdirAll(dir, 0o755)
	evil := `<img src=x onerror=alert(1)>`
	lines := `{"type":"session","version":3,"id":"evil","timestamp":"2026-05-20T10:00:00.000Z","cwd":"/home/dev/<script>alert(2)</script>"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-05-20T10:00:01.000Z","message":{"role":"user","content":"<script>alert(3)</script>","timestamp":1}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-05-20T10:00:02.000Z","message":{"role":"assistant","content":[],"provider":"p\"><svg onload=alert(4)>","model":"` + strings.ReplaceAll(evil, `"`, `\"`) + `","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":1}},"stopReason":"stop","timestamp":2}}
`
	os.WriteFile(filepath.Join(dir, "2026-05-20T10-00-00-000Z_evil.jsonl"), []byte(lines), 0o644)
	h := newServer(t, openLib(t, root), nil).Handler()
	for _, u := range []string{"/usage?range=all&tz=UTC", "/usage?range=all&tz=UTC&by=project&heat=turns"} {
		page := get(t, h, u).Body.String()
		for _, raw := range []string{"<img src=x", "<script>alert", "<svg onload"} {
			if strings.Contains(page, raw) {
				t.Errorf("%s holds %q unescaped", u, raw)
			}
		}
		if !strings.Contains(page, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("%s does not show the model's name, escaped", u)
		}
	}
}

// TestUsageEvents checks that the page's stream says when a session changes.
func TestUsageEvents(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	testUsageEvents(t, lib, newServer(t, lib, nil))
}

// TestUsageEventsStore: with usage from the index store, the stream says
// a session changed once the store holds the change.
func TestUsageEventsStore(t *testing.T) {
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "index.db"), store.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lib := library.NewLibrary(demoRoot(t))
	cat := catalog.New(lib, catalog.Options{Store: st, Logger: log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cat.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if err := cat.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	srv := New(lib, Options{Addr: "127.0.0.1:8377", Root: "/sessions", Logger: log, Home: "/home/dev", Heartbeat: 50 * time.Millisecond,
		Catalog: cat, Usage: storesource.New(usage.Stored{DB: st}, host, storesource.Options{Settle: cat.Wait})})
	t.Cleanup(srv.Close)
	testUsageEvents(t, lib, srv)
}

func testUsageEvents(t *testing.T, lib *library.Library, srv *Server) {
	t.Helper()
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, res := openStream(t, ctx, ts.URL+"/usage/events")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	// Subscribed once the first heartbeat comes.
	for ev := range ch {
		if ev.Name == ":" {
			break
		}
	}
	file := sessionFile(t, lib, darkID)
	appendLines(t, file, `{"type":"message","id":"live0001","parentId":null,"timestamp":"2026-05-31T09:00:00.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"claude-opus-4-5","usage":{"input":5,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":10,"cost":{"total":2.5}},"stopReason":"stop","timestamp":1}}`)
	if _, err := lib.Refresh(file); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, ch); ev.Name != "changed" {
		t.Errorf("event %+v, want changed", ev)
	}
	// What the page draws then has the new cost.
	page := get(t, srv.Handler(), "/usage?range=7d&tz=UTC").Body.String()
	if !strings.Contains(page, "Sun May 31, 2026: $2.50") {
		t.Errorf("the appended reply's cost is not on the page")
	}
}

// TestUsageYearSize checks the charts' budget on a year of daily usage
// by eight models: each chart at most 60 KB of SVG.
func TestUsageYearSize(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "--home-dev-year--")
	os.MkdirAll(dir, 0o755)
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for d := range 365 {
		at := day.AddDate(0, 0, d)
		id := fmt.Sprintf("day%03d", d)
		var b strings.Builder
		fmt.Fprintf(&b, `{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":"/home/dev/year"}`+"\n", id, at.Format(time.RFC3339))
		parent := "null"
		for k := range 8 {
			ts := at.Add(time.Duration(8+k) * time.Hour).Format("2006-01-02T15:04:05.000Z")
			fmt.Fprintf(&b, `{"type":"message","id":"a%d","parentId":%s,"timestamp":%q,"message":{"role":"assistant","content":[],"provider":"provider-%d","model":"model-number-%d","usage":{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":%d,"totalTokens":1,"cost":{"total":%g}},"stopReason":"stop","timestamp":1}}`+"\n",
				k, parent, ts, k, k, 1000+d*k, 200+k, 30000+d, 500*k, float64(1+(d*7+k*13)%40)/10)
			parent = fmt.Sprintf(`"a%d"`, k)
		}
		os.WriteFile(filepath.Join(dir, at.Format("2006-01-02T15-04-05-000Z")+"_"+id+".jsonl"), []byte(b.String()), 0o644)
	}
	h := newServer(t, openLib(t, root), nil).Handler()
	page := get(t, h, "/usage?range=custom&since=2025-01-01&until=2025-12-31&tz=UTC").Body.String()
	total := 0
	for rest := page; ; {
		i := strings.Index(rest, "<svg")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], "</svg>") + len("</svg>")
		svg := rest[i : i+j]
		total += len(svg)
		if strings.Contains(svg, "u-bars") && len(svg) > 60<<10 {
			t.Errorf("a chart of a year takes %d bytes: %.60s…", len(svg), svg)
		}
		rest = rest[i+j:]
	}
	if n := strings.Count(page, `class="u-chart u-bars"`); n != 3 {
		t.Errorf("%d bar charts", n)
	}
	if !strings.Contains(page, "Wed Dec 31, 2025: $") {
		t.Error("the year's last day has no tooltip")
	}
	t.Logf("a year of daily usage by 8 models: %d bytes of SVG on the page", total)
}
