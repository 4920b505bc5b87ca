package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
)

// TestFormBodyCap refuses form actions over the body cap with 413, the
// JSON API's cap, and writes nothing (a 9 MB label used to be taken).
func TestFormBodyCap(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()
	before := inspectOf(t, lib, mainID, "")
	for _, field := range []string{"label", "summary"} {
		form := url.Values{"entry": {"09b043aa"}, field: {strings.Repeat("x", 9<<20)}}
		for _, chunked := range []bool{false, true} {
			req, _ := http.NewRequest(http.MethodPost, "/s/"+mainID+"/actions/"+map[string]string{"label": "label", "summary": "rewind"}[field], strings.NewReader(form.Encode()))
			req.Host = "localhost:8377"
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("HX-Request", "true")
			if chunked {
				req.ContentLength = -1 // no length: the cap is met while reading
			}
			rec := doReq(srv, req)
			if rec.Code != http.StatusRequestEntityTooLarge {
				t.Errorf("%s of 9 MB (chunked %v): status %d, want 413", field, chunked, rec.Code)
			}
		}
	}
	if after := inspectOf(t, lib, mainID, ""); *after.LeafID != *before.LeafID {
		t.Errorf("a refused action wrote: leaf %s, was %s", *after.LeafID, *before.LeafID)
	}
}

// TestSlowBodyTimesOut sends a body one byte at a time: the server gives up
// on it as it does on slow headers, and a live stream still outlives the
// read timeout.
func TestSlowBodyTimesOut(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	s := New(lib, Options{Addr: "127.0.0.1:0", Logger: newServer(t, lib, nil).log, ReadTimeout: 300 * time.Millisecond,
		Heartbeat: 50 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer()
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /s/%s/actions/label HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n", mainID)
	closed := make(chan error, 1)
	go func() {
		// One byte every 50 ms: the whole body would take 50 s.
		for range 1000 {
			if _, err := conn.Write([]byte("x")); err != nil {
				closed <- err
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		closed <- nil
	}()
	resp := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(conn) // ends when the server closes the connection
		resp <- string(b)
	}()
	select {
	case r := <-resp:
		if !strings.HasPrefix(r, "HTTP/1.1 408 ") {
			t.Errorf("a trickled body: %.300s; want 408", r)
		}
	case err := <-closed:
		if err == nil {
			t.Fatal("the server read a body trickled over 50 s")
		}
	}

	// A live stream lives on past the read timeout: heartbeats keep coming.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ln.Addr().String()+"/s/"+mainID+"/events", nil)
	req.Host = "localhost"
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	start, pings := time.Now(), 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), ": ping") {
			pings++
		}
		if pings > 0 && time.Since(start) > 3*300*time.Millisecond {
			return // alive well past the read timeout
		}
	}
	t.Fatalf("the stream ended after %v and %d heartbeats: %v", time.Since(start), pings, sc.Err())
}

// TestDeepContent answers for content nested 100,000 levels deep (pi takes
// any depth; encoding/json stops at 10,000): the page, the entry, the full
// text and inspect.
func TestDeepContent(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "--w--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	content := sessiontest.Lines(strings.Replace(sessiontest.Header, `"s1"`, `"deep"`, 1), sessiontest.User("u1", "", 1, "hi"),
		sessiontest.Entry("message", "a1", "u1", 2, `,"message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"x","arguments":{"a":`+deep+`}}],"details":`+deep+`,"timestamp":2}`),
		sessiontest.Entry("message", "r1", "a1", 3, `,"message":{"role":"toolResult","toolCallId":"c","toolName":"x","content":[{"type":"text","text":"ok"}],"details":{"d":`+deep+`},"isError":false,"timestamp":3}`))
	if err := os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00-000Z_deep.jsonl"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, openLib(t, root), nil).Handler()
	for _, u := range []string{"/s/deep", "/s/deep?target=a1", "/s/deep/entry?e=a1", "/s/deep/entry?e=r1&view=context", "/s/deep/text?e=a1", "/api/sessions/deep"} {
		if rec := get(t, srv, u); rec.Code != 200 {
			t.Errorf("%s: status %d\n%.300s", u, rec.Code, rec.Body)
		}
	}
}
