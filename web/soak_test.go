package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/suite"
	"github.com/piweb/piweb/library"

	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/watcher"
)

// The soak test runs piweb for real (library, watcher, HTTP server on
// loopback) while a pi-like writer appends thousands of entries to a session,
// readers fetch its pages and the JSON API, and a client writes labels
// through the API. Afterwards the file must hold every line exactly once,
// piweb's index must equal a fresh read, no request may have failed with a
// 5xx, and memory and goroutines must be back within bounds.
//
// PIWEB_SOAK=long runs it for longer, with more and larger entries.

// soakConfig sizes a soak run.
type soakConfig struct {
	entries   int           // entries the writer appends
	bigEvery  int           // one tool output in about this many is large
	bigMax    int           // the largest tool output, in bytes
	span      time.Duration // how long the writer takes: it paces itself
	labelGap  time.Duration // between two labels
	minLabels int           // labels that must have been written
}

func soakSize(t *testing.T) soakConfig {
	switch {
	case os.Getenv("PIWEB_SOAK") == "long":
		return soakConfig{entries: 40000, bigEvery: 200, bigMax: 1 << 20, span: 60 * time.Second, labelGap: 20 * time.Millisecond, minLabels: 30}
	case testing.Short():
		return soakConfig{entries: 600, bigEvery: 60, bigMax: 256 << 10, span: time.Second, labelGap: 20 * time.Millisecond, minLabels: 5}
	case raceEnabled:
		return soakConfig{entries: 1500, bigEvery: 100, bigMax: 256 << 10, span: 3 * time.Second, labelGap: 40 * time.Millisecond, minLabels: 3}
	}
	return soakConfig{entries: 3000, bigEvery: 100, bigMax: 512 << 10, span: 2 * time.Second, labelGap: 25 * time.Millisecond, minLabels: 10}
}

// soakWriter appends entries as pi does: one whole line per append, opened
// with O_APPEND each time (appendFileSync), parentId = its own leaf, which
// never sees the labels piweb appends.
type soakWriter struct {
	file string
	rnd  *rand.Rand
	now  time.Time

	mu     sync.Mutex
	ids    []string          // every id written, in order (shared with the labeller)
	lines  map[string][]byte // id -> the line written (without newline)
	parent map[string]string
	leaf   string
}

func (w *soakWriter) newID() string {
	for {
		id := fmt.Sprintf("%08x", w.rnd.Uint32())
		if _, dup := w.lines[id]; !dup {
			return id
		}
	}
}

// stamp returns the next entry timestamp and message time.
func (w *soakWriter) stamp() (string, int64) {
	w.now = w.now.Add(time.Duration(1+w.rnd.IntN(900)) * time.Millisecond)
	return w.now.UTC().Format("2006-01-02T15:04:05.000Z"), w.now.UnixMilli()
}

// appendLine writes one entry line and records it.
func (w *soakWriter) appendLine(id, parent string, line []byte) error {
	f, err := os.OpenFile(w.file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	w.mu.Lock()
	w.ids = append(w.ids, id)
	w.lines[id] = line
	w.parent[id] = parent
	w.leaf = id
	w.mu.Unlock()
	return nil
}

// entry builds and appends one entry of the given type with the given fields.
func (w *soakWriter) entry(typ, parent string, fields map[string]any) error {
	id := w.newID()
	ts, _ := w.stamp()
	m := map[string]any{"type": typ, "id": id, "timestamp": ts, "parentId": nil}
	if parent != "" {
		m["parentId"] = parent
	}
	for k, v := range fields {
		m[k] = v
	}
	line, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return w.appendLine(id, parent, line)
}

// output returns tool output text of about n bytes: log lines with quotes,
// backslashes, tabs and non-ASCII text, as JSON will escape them.
func (w *soakWriter) output(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%05d\tok  \"pkg/%d\"\t%d.%03ds\tC:\\tmp\\x — naïve ✓ <script>alert(%d)</script>\n", i, i%17, i%9, i%1000, i)
	}
	return b.String()
}

// ancestor returns the entry n steps up from the leaf (or the root).
func (w *soakWriter) ancestor(n int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := w.leaf
	for ; n > 0 && w.parent[id] != ""; n-- {
		id = w.parent[id]
	}
	return id
}

// turn appends one step of a pi session: a user prompt, an assistant reply
// with a tool call, and the tool's result; now and then a model change, a
// compaction, a session name, or a branch (pi's /tree) with its summary.
func (w *soakWriter) turn(k int, cfg soakConfig) error {
	leaf := w.leaf
	_, ms := w.stamp()
	switch {
	case k%400 == 399:
		return w.entry("model_change", leaf, map[string]any{"provider": "anthropic", "modelId": fmt.Sprintf("claude-%d", k%3)})
	case k%250 == 249:
		return w.entry("thinking_level_change", leaf, map[string]any{"thinkingLevel": []string{"off", "low", "high"}[k%3]})
	case k%700 == 699:
		return w.entry("compaction", leaf, map[string]any{"summary": "## Goal\nsoak " + fmt.Sprint(k), "firstKeptEntryId": w.ancestor(12), "tokensBefore": 50000 + k})
	case k%900 == 450:
		return w.entry("session_info", leaf, map[string]any{"name": fmt.Sprintf("soak session %d", k)})
	case k%150 == 149:
		// Branch: go back to an earlier entry and continue from there.
		target := w.ancestor(5 + w.rnd.IntN(30))
		return w.entry("branch_summary", target, map[string]any{"fromId": leaf, "summary": "Tried another way " + fmt.Sprint(k)})
	}
	switch k % 3 {
	case 0:
		return w.entry("message", leaf, map[string]any{"message": map[string]any{
			"role": "user", "content": fmt.Sprintf("step %d: please fix the \"flaky\" test <b>now</b>", k), "timestamp": ms}})
	case 1:
		return w.entry("message", leaf, map[string]any{"message": map[string]any{
			"role": "assistant", "api": "anthropic-messages", "provider": "anthropic", "model": "claude",
			"content": []any{
				map[string]any{"type": "thinking", "thinking": "Let me look at the test output."},
				map[string]any{"type": "text", "text": fmt.Sprintf("Running the tests (step %d).", k)},
				map[string]any{"type": "toolCall", "id": fmt.Sprintf("call_%d", k), "name": "bash", "arguments": map[string]any{"command": "go test ./..."}},
			},
			"usage": map[string]any{"input": 1000 + k, "output": 200, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1200 + k,
				"cost": map[string]any{"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}},
			"stopReason": "toolUse", "timestamp": ms}})
	}
	n := 200 + w.rnd.IntN(2000)
	if w.rnd.IntN(cfg.bigEvery) == 0 {
		n = cfg.bigMax/4 + w.rnd.IntN(cfg.bigMax*3/4)
	}
	return w.entry("message", leaf, map[string]any{"message": map[string]any{
		"role": "toolResult", "toolCallId": fmt.Sprintf("call_%d", k-1), "toolName": "bash",
		"content": []any{map[string]any{"type": "text", "text": w.output(n)}}, "isError": k%7 == 0, "timestamp": ms}})
}

// soakLabel is a label written through the API.
type soakLabel struct{ id, target, label string }

func TestSoak(t *testing.T) {
	suite.Need(t, suite.Soak)
	cfg := soakSize(t)
	runtime.GC()
	baseline := runtime.NumGoroutine()
	var before runtime.MemStats // what the package's earlier tests left (lexers compiled, pages cached)
	runtime.ReadMemStats(&before)

	root := t.TempDir()
	file := filepath.Join(root, "--home-dev-soak--", "2026-01-01T00-00-00-000Z_soak.jsonl")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	w := &soakWriter{file: file, rnd: rand.New(rand.NewPCG(1, 2)), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		lines: map[string][]byte{}, parent: map[string]string{}}
	header := `{"type":"session","version":3,"id":"soak","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/soak"}`
	if err := os.WriteFile(file, []byte(header+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.turn(0, cfg); err != nil { // pi writes the file once it has a message
		t.Fatal(err)
	}

	// piweb, wired as piweb serve wires it.
	var logMu sync.Mutex
	var logged bytes.Buffer // every handler panic is a failure, also in a live stream already answered 200
	log := slog.New(slog.NewTextHandler(io.MultiWriter(testWriter{t}, lockedWriter{&logMu, &logged}), &slog.HandlerOptions{Level: slog.LevelWarn}))
	defer func() {
		logMu.Lock()
		defer logMu.Unlock()
		if n := strings.Count(logged.String(), "a handler panicked"); n > 0 {
			t.Errorf("%d handlers panicked (logged above)", n)
		}
	}()
	lib, err := library.OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	wat, err := watcher.New(lib, watcher.Options{Debounce: 20 * time.Millisecond, Rescan: 500 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watched := make(chan error, 1)
	go func() { watched <- wat.Run(ctx) }()
	ts := httptest.NewUnstartedServer(nil)
	srv := New(lib, Options{Addr: ts.Listener.Addr().String(), Root: root, Logger: log, Home: "/home/dev", Heartbeat: 100 * time.Millisecond})
	ts.Config.Handler = srv.Handler()
	ts.Start()
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("the server is not on loopback: %s", ts.URL)
	}
	tr := &http.Transport{}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	var (
		fivexx  atomic.Int64
		oks     atomic.Int64
		badMu   sync.Mutex
		bad     []string
		writing = make(chan struct{}) // closed when the writer is done
		wg      sync.WaitGroup
	)
	report := func(what string, code int, body []byte) {
		if code >= 500 {
			fivexx.Add(1)
		}
		badMu.Lock()
		defer badMu.Unlock()
		if len(bad) < 20 {
			bad = append(bad, fmt.Sprintf("%s: %d %.300s", what, code, body))
		}
	}
	get := func(path string, must200 bool) {
		resp, err := client.Get(ts.URL + path)
		if err != nil {
			report("GET "+path+": "+err.Error(), 0, nil)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			oks.Add(1)
		case resp.StatusCode >= 500 || must200:
			report("GET "+path, resp.StatusCode, body)
		}
	}
	pick := func(rnd *rand.Rand) (string, int) {
		w.mu.Lock()
		defer w.mu.Unlock()
		k := rnd.IntN(len(w.ids))
		return w.ids[k], k
	}

	// Readers: the page, tree windows, entries and the JSON API.
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(r), 7))
			for i := 0; ; i++ {
				select {
				case <-writing:
					if i >= 30 { // enough reads whatever the machine's load
						return
					}
				default:
				}
				id, pos := pick(rnd)
				switch i % 6 {
				case 0:
					get("/s/soak", true)
				case 1:
					get("/s/soak/rows", true)
				case 2:
					get(fmt.Sprintf("/s/soak/rows?after=%d", pos), false) // 4xx when the row is not indexed yet
				case 3:
					get(fmt.Sprintf("/s/soak/rows?filter=all&before=%d", pos), false)
				case 4:
					get("/api/sessions/soak", true)
				case 5:
					get("/s/soak/entry?e="+id+"&view=context", false)
				}
			}
		}()
	}

	// A live stream, as the open page keeps one.
	var streamed atomic.Int64
	var swg sync.WaitGroup
	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	swg.Add(1)
	go func() {
		defer swg.Done()
		req, _ := http.NewRequestWithContext(sctx, http.MethodGet, ts.URL+"/s/soak/events?v=x", nil)
		resp, err := (&http.Client{Transport: tr}).Do(req) // no timeout: it ends with the server
		if err != nil {
			report("stream: "+err.Error(), 0, nil)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			report("stream", resp.StatusCode, nil)
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "event:") {
				streamed.Add(1)
			}
		}
	}()

	// The labeller, through the JSON API.
	var labels []soakLabel
	var busy int
	wg.Add(1)
	go func() {
		defer wg.Done()
		rnd := rand.New(rand.NewPCG(3, 4))
		// Labels while pi writes, paced by labelGap; once the writer is done,
		// until minLabels are in: how many land during the writing depends on
		// the machine's load, how many land in all does not.
		done := false
		for n := 0; ; n++ {
			if !done {
				select {
				case <-writing:
					done = true
				case <-time.After(cfg.labelGap):
				}
			}
			if done && len(labels) >= cfg.minLabels {
				return
			}
			target, _ := pick(rnd)
			label := fmt.Sprintf("soak <%d> \"é\"", n)
			if n%5 == 4 {
				label = "" // a clear
			}
			body, _ := json.Marshal(map[string]string{"entryId": target, "label": label})
			resp, err := client.Post(ts.URL+"/api/sessions/soak/label", "application/json", bytes.NewReader(body))
			if err != nil {
				report("label: "+err.Error(), 0, nil)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusConflict && bytes.Contains(b, []byte("busy")) {
				busy++ // the file kept changing: nothing was written
				continue
			}
			var out struct{ ID string }
			if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || out.ID == "" {
				report("label", resp.StatusCode, b)
				continue
			}
			labels = append(labels, soakLabel{out.ID, target, label})
		}
	}()

	// The writer.
	start := time.Now()
	for k := 1; k < cfg.entries; k++ {
		if err := w.turn(k, cfg); err != nil {
			t.Fatal(err)
		}
		if ahead := time.Until(start.Add(cfg.span * time.Duration(k) / time.Duration(cfg.entries))); ahead > 0 {
			time.Sleep(ahead)
		}
	}
	close(writing)
	wg.Wait() // readers and labeller; the stream stays open
	// A last burst that only the watcher can bring into the library.
	for k := cfg.entries; k < cfg.entries+30; k++ {
		if err := w.turn(k, cfg); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %d entries in %v; %d labels (%d busy), %d OK reads, %d stream events",
		cfg.entries, time.Since(start).Round(time.Millisecond), len(labels), busy, oks.Load(), streamed.Load())

	// piweb catches up with the file.
	var fresh *sessions.Session
	deadline := time.Now().Add(2 * time.Minute) // a bound for a stuck watcher, not a pace: it catches up in milliseconds
	for {
		fresh, err = sessions.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := soakState(t, lib); reflect.DeepEqual(got, soakOf(fresh)) {
			break
		} else if time.Now().After(deadline) {
			want := soakOf(fresh)
			t.Fatalf("the library did not catch up with the file: %d entries, leaf %q; the file has %d, leaf %q",
				len(got.ids), got.leaf, len(want.ids), want.leaf)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Every line parses; the writer's lines and piweb's labels are each there once.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	soakCheckFile(t, data, header, w, labels)
	if len(labels) < cfg.minLabels {
		t.Errorf("only %d labels were written (%d busy); want at least %d", len(labels), busy, cfg.minLabels)
	}
	if oks.Load() < 20 {
		t.Errorf("only %d reads succeeded", oks.Load())
	}
	for end := time.Now().Add(2 * time.Minute); streamed.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) { // a bound for a stuck stream: the last burst's changes come in milliseconds
			t.Errorf("the live stream sent %d events; want the hello and changes", streamed.Load())
			break
		}
	}
	if n := fivexx.Load(); n > 0 {
		t.Errorf("%d responses were 5xx", n)
	}
	for _, b := range bad {
		t.Error(b)
	}
	// The labels in force are the ones the API set last.
	want := map[string]string{}
	for _, l := range labels {
		if l.label == "" {
			delete(want, l.target)
		} else {
			want[l.target] = l.label
		}
	}
	if got := fresh.Labels(); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("labels in force: %d, want %d", len(got), len(want))
	}

	// Memory: the index stays small next to the file (bodies are read
	// lazily). Measured from the heap the test began with: the package's
	// tests run before it in this process, and what they leave in global
	// caches varies with them.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	grown := int64(ms.HeapAlloc) - int64(before.HeapAlloc)
	limit := int64(24<<20) + 3*int64(len(data))
	t.Logf("file %.1f MiB, heap after GC %.1f MiB, %.1f MiB more than at the start (limit %.1f MiB)", float64(len(data))/(1<<20),
		float64(ms.HeapAlloc)/(1<<20), float64(grown)/(1<<20), float64(limit)/(1<<20))
	if grown > limit {
		t.Errorf("the heap after GC grew by %d bytes, above %d (24 MiB + 3 × the %d-byte file)", grown, limit, len(data))
	}

	// Shutdown: every goroutine piweb started ends.
	srv.Close()
	scancel()
	ts.Close()
	tr.CloseIdleConnections()
	cancel()
	select {
	case err := <-watched:
		if err != nil {
			t.Errorf("watcher: %v", err)
		}
	case <-time.After(guard):
		t.Fatal("the watcher did not stop")
	}
	swg.Wait()
	for end := time.Now().Add(guard); runtime.NumGoroutine() > baseline; {
		if time.Now().After(end) {
			var b strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
			t.Fatalf("%d goroutines after shutdown, %d before:\n%s", runtime.NumGoroutine(), baseline, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// soakView is what must agree between the library and a fresh read.
type soakView struct {
	ids     []string
	parents []string
	leaf    string
	labels  map[string]string
	name    string
	size    int64
}

func soakOf(s *sessions.Session) soakView {
	v := soakView{labels: s.Labels(), name: s.Name(), size: s.Size}
	for i := range s.Entries {
		v.ids = append(v.ids, s.Entries[i].ID)
		p := ""
		if j := s.Parent(i); j >= 0 {
			p = s.Entries[j].ID
		}
		v.parents = append(v.parents, p)
	}
	if l := s.Leaf(); l >= 0 {
		v.leaf = s.Entries[l].ID
	}
	return v
}

func soakState(t *testing.T, lib *library.Library) soakView {
	var v soakView
	if err := lib.View("soak", func(s *sessions.Session) error { v = soakOf(s); return nil }); err != nil {
		t.Fatal(err)
	}
	return v
}

// soakCheckFile checks the file line by line against what was written.
func soakCheckFile(t *testing.T, data []byte, header string, w *soakWriter, labels []soakLabel) {
	t.Helper()
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("the file does not end with a newline")
	}
	lines := bytes.Split(data[:len(data)-1], []byte("\n"))
	if string(lines[0]) != header {
		t.Errorf("line 1 is not the header: %.200s", lines[0])
	}
	byID := map[string]soakLabel{}
	for _, l := range labels {
		byID[l.id] = l
	}
	seen := map[string]int{}
	for n, line := range lines[1:] {
		var e struct {
			Type     string  `json:"type"`
			ID       string  `json:"id"`
			ParentID *string `json:"parentId"`
			TargetID string  `json:"targetId"`
			Label    *string `json:"label"`
		}
		if !json.Valid(line) || json.Unmarshal(line, &e) != nil {
			t.Errorf("line %d does not parse: %.200s", n+2, line)
			continue
		}
		seen[e.ID]++
		if want, ok := w.lines[e.ID]; ok {
			if !bytes.Equal(line, want) {
				t.Errorf("line %d (%s) differs from what the writer wrote", n+2, e.ID)
			}
			continue
		}
		l, ok := byID[e.ID]
		switch {
		case !ok:
			t.Errorf("line %d (%s) was written by neither the writer nor a label request: %.200s", n+2, e.ID, line)
		case e.Type != "label" || e.TargetID != l.target || e.ParentID == nil:
			t.Errorf("line %d: label %s is not the label entry asked for (%+v): %.200s", n+2, e.ID, l, line)
		case l.label == "" && e.Label != nil, l.label != "" && (e.Label == nil || *e.Label != l.label):
			t.Errorf("line %d: label %s holds %v, want %q", n+2, e.ID, e.Label, l.label)
		}
	}
	for id := range w.lines {
		if seen[id] != 1 {
			t.Errorf("the writer's entry %s is in the file %d times", id, seen[id])
		}
	}
	for _, l := range labels {
		if seen[l.id] != 1 {
			t.Errorf("label entry %s is in the file %d times", l.id, seen[l.id])
		}
	}
	if want := 1 + len(w.lines) + len(labels); len(lines) != want {
		t.Errorf("the file has %d lines, want %d (header, %d written, %d labels)", len(lines), want, len(w.lines), len(labels))
	}
}
