package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// TestServeRestartReadsNothing: a second start on an unchanged root lists
// every session from the index store without reading any session file,
// the file watcher's first scan included.
func TestServeRestartReadsNothing(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := t.TempDir()
	dir := filepath.Join(root, "--home-u-p--")
	os.MkdirAll(dir, 0o755)
	smallest := int64(1 << 62)
	for i := range 3 {
		f := filepath.Join(dir, fmt.Sprintf("2026-01-0%dT00-00-00-000Z_s%d.jsonl", i+1, i))
		n, err := sessiontest.WriteFile(f, int64(i+1), 150, sessiontest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		smallest = min(smallest, n)
	}
	serve := func() (string, func()) {
		ctx, cancel := context.WithCancel(context.Background())
		out := &syncBuffer{}
		done := make(chan error, 1)
		go func() { done <- listenAndServe(ctx, out, config{addr: "127.0.0.1:0", root: root}) }()
		waitOutput(t, out, "indexed 3 sessions")
		m := urlRE.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no address in:\n%s", out)
		}
		return m[1], func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}
	url, stop := serve()
	// The store is written after the library is filled: wait for it.
	for deadline := time.Now().Add(guard); ; {
		res, err := http.Get(url + "api/index")
		if err != nil {
			t.Fatal(err)
		}
		var p struct{ SearchIndexing bool }
		json.NewDecoder(res.Body).Decode(&p)
		res.Body.Close()
		if !p.SearchIndexing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the store was not written")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()

	before := sessions.BytesRead.Load()
	url, stop = serve()
	defer stop()
	// A session written now shows up once the watcher's first scan is done
	// (its events are handled after it).
	marker := filepath.Join(dir, "2026-02-01T00-00-00-000Z_marker.jsonl")
	os.WriteFile(marker, []byte(sessiontest.Lines(`{"type":"session","version":3,"id":"marker","timestamp":"2026-02-01T00:00:00.000Z","cwd":"/home/u/p"}`)), 0o644)
	for deadline := time.Now().Add(guard); ; {
		res, err := http.Get(url + "api/sessions")
		if err != nil {
			t.Fatal(err)
		}
		var list []sessions.Meta
		json.NewDecoder(res.Body).Decode(&list)
		res.Body.Close()
		if len(list) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions listed", len(list))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := sessions.BytesRead.Load() - before; got >= smallest {
		t.Fatalf("the restart read %d bytes: a session file (%d bytes or more) was read again", got, smallest)
	}
}
