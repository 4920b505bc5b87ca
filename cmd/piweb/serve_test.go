package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var urlRE = regexp.MustCompile(`open (http://\S+/)`)

// start runs listenAndServe until the test ends and returns its URL and output.
func start(t *testing.T, cfg config) (string, *syncBuffer) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the index store: never the user's
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- listenAndServe(ctx, out, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("listenAndServe: %v", err)
			}
		case <-time.After(guard):
			t.Error("the server did not stop")
		}
	})
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		if m := urlRE.FindStringSubmatch(out.String()); m != nil {
			return m[1], out
		}
		select {
		case err := <-done:
			t.Fatalf("listenAndServe: %v\n%s", err, out)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no URL printed:\n%s", out)
	return "", nil
}

// waitListed waits until the server's output says every session is listed.
func waitListed(t *testing.T, out *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !strings.Contains(out.String(), "piweb: indexed ") {
		if time.Now().After(deadline) {
			t.Fatalf("the sessions were not all listed:\n%s", out)
		}
		time.Sleep(10 * time.Millisecond) // polling the output for a line, not timing
	}
}

func TestServeDemoWhenNoSessions(t *testing.T) {
	url, out := start(t, config{addr: "127.0.0.1:0", root: t.TempDir()})
	waitListed(t, out) // the fork's link needs its parent listed
	if !strings.Contains(out.String(), "no sessions under") || !strings.Contains(out.String(), "DEMO data: 3 built-in sessions") {
		t.Errorf("output:\n%s", out)
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "Fix stale forecast cache") || !strings.Contains(string(body), "demo data") {
		t.Errorf("status %d\n%s", res.StatusCode, body)
	}
	// The fork's parentSession now points into the temporary root, so the lineage resolves.
	if !strings.Contains(string(body), "forked from <a") {
		t.Error("the forked demo session does not link to its parent")
	}
}

func TestServeSessionDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "--home-u-p--")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	session := `{"type":"session","version":3,"id":"mine","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/p"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"my own session","timestamp":1767225601000}}
`
	if err := os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00-000Z_mine.jsonl"), []byte(session), 0o644); err != nil {
		t.Fatal(err)
	}
	url, out := start(t, config{addr: "127.0.0.1:0", root: root})
	if !strings.Contains(out.String(), "serving 1 session from "+root) {
		t.Errorf("output:\n%s", out)
	}
	waitOutput(t, out, "indexed 1 session")
	if o := out.String(); strings.Index(o, "open http://") > strings.Index(o, "indexed 1 session") {
		t.Errorf("the address after the indexing's end (scripts and tests read it first):\n%s", o)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "piweb", "index.db")); err != nil {
		t.Errorf("no index store in $XDG_CACHE_HOME/piweb: %v", err)
	}
	res, err := http.Get(url + "s/mine")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "my own session") || strings.Contains(string(body), "demo data") {
		t.Errorf("status %d\n%s", res.StatusCode, body)
	}
}

func TestServePortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = listenAndServe(t.Context(), io.Discard, config{addr: ln.Addr().String(), demo: true})
	if err == nil || !strings.Contains(err.Error(), "is already in use") || !strings.Contains(err.Error(), "--addr") {
		t.Errorf("err = %v", err)
	}
}

func TestServeFlags(t *testing.T) {
	if err := serve(t.Context(), []string{"--bogus"}); err == nil {
		t.Error("unknown flag accepted")
	}
	if err := serve(t.Context(), []string{"extra"}); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Errorf("err = %v", err)
	}
}

// TestServeLoginOffLoopback: a piweb reachable from other machines
// requires a login (it used to warn only); on loopback it does not.
func TestServeLoginOffLoopback(t *testing.T) {
	for _, tt := range []struct {
		addr string
		warn bool
	}{
		{"127.0.0.1:0", false},
		{"[::1]:0", false},
		{"0.0.0.0:0", true},
	} {
		t.Run(tt.addr, func(t *testing.T) {
			if strings.HasPrefix(tt.addr, "[::1]") {
				if ln, err := net.Listen("tcp", tt.addr); err != nil {
					t.Skip("no IPv6 loopback here")
				} else {
					ln.Close()
				}
			}
			u, out := start(t, config{addr: tt.addr, root: t.TempDir()})
			got := strings.Contains(out.String(), "login required (reachable from other machines), and there is no token yet")
			if got != tt.warn {
				t.Errorf("login required: %v, want %v; output:\n%s", got, tt.warn, out)
			}
			res, err := noRedirect.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if want := map[bool]int{true: http.StatusSeeOther, false: http.StatusOK}[tt.warn]; res.StatusCode != want {
				t.Errorf("GET /: %d, want %d", res.StatusCode, want)
			}
		})
	}
	for _, tt := range []struct {
		bound string
		want  bool
	}{
		{"127.0.0.1:8377", true}, {"127.1.2.3:80", true}, {"[::1]:8377", true},
		{"0.0.0.0:8377", false}, {"[::]:8377", false}, {"192.168.1.10:8377", false}, {"localhost:8377", false}, {"junk", false},
	} {
		if got := loopback(tt.bound); got != tt.want {
			t.Errorf("loopback(%q) = %v, want %v", tt.bound, got, tt.want)
		}
	}
}

// TestServeMissingSessionDir refuses a --session-dir that does not exist
// instead of serving the demo as if nothing were wrong.
func TestServeMissingSessionDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "typo")
	err := listenAndServe(t.Context(), io.Discard, config{addr: "127.0.0.1:0", root: missing})
	if err == nil || !strings.Contains(err.Error(), "no such folder") || exitCode(err) != 2 {
		t.Fatalf("listenAndServe with a missing --session-dir: %v (exit %d); want a usage error", err, exitCode(err))
	}
}

// noRedirect is a client that shows redirects rather than following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// waitOutput waits until the server's output holds want.
func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output:\n%s", want, out)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
