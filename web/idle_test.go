package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
)

// smallSends is a listener whose connections have small send buffers, so
// that a client that reads nothing stops the server's writes after a few
// kilobytes, not megabytes.
type smallSends struct{ net.Listener }

func (l smallSends) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// logged is a slog handler that hands each record's message to a channel.
type logged chan string

func (l logged) Enabled(context.Context, slog.Level) bool { return true }
func (l logged) Handle(_ context.Context, r slog.Record) error {
	select {
	case l <- r.Message:
	default: // the test reads far fewer than the channel holds
	}
	return nil
}
func (l logged) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logged) WithGroup(string) slog.Handler      { return l }

// slowServer serves a session whose whole-session page is a few megabytes
// with the options given, on connections with small send buffers; it
// returns the server, its address and its log.
func slowServer(t *testing.T, opt Options) (*Server, string, logged) {
	t.Helper()
	root := t.TempDir()
	lines := []string{sessiontest.Header}
	parent := ""
	words := strings.Repeat("the forecast cache keeps yesterday ", 100)
	for i := range 600 {
		id := fmt.Sprintf("u%04d", i)
		lines = append(lines, sessiontest.User(id, parent, i, words))
		parent = id
	}
	writeSession(t, root, "--w--", "big.jsonl", sessiontest.Lines(lines...))
	log := make(logged, 100)
	opt.Logger = slog.New(log)
	srv := New(openLib(t, root), opt)
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.Listener = smallSends{ts.Listener}
	ts.Start()
	t.Cleanup(func() { srv.Close(); ts.Close() })
	return srv, ts.Listener.Addr().String(), log
}

// askAndHold sends GET path on a connection with a small receive buffer
// and never reads the answer; the connection closes with the test.
func askAndHold(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).SetReadBuffer(4096)
	t.Cleanup(func() { c.Close() })
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitFor waits until cond holds (30 s at most, then fails).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(guard); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
	}
}

// waitLog waits for a log message holding want.
func waitLog(t *testing.T, log logged, want string) {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case m := <-log:
			if strings.Contains(m, want) {
				return
			}
		case <-timeout:
			t.Fatalf("the server never logged %q", want)
		}
	}
}

const wholeExport = "/s/s1/export?format=html-session"

// TestSlowReadersHoldExports shows what WriteIdle is for: two clients
// that ask for a whole-session export and read nothing hold both export
// slots, and every other export gets 503 for as long as they wait.
func TestSlowReadersHoldExports(t *testing.T) {
	srv, addr, _ := slowServer(t, Options{Exports: 2, WriteIdle: time.Hour})
	askAndHold(t, addr, wholeExport)
	askAndHold(t, addr, wholeExport)
	waitFor(t, "both exports under way", func() bool { return len(srv.exports) == 2 })
	res, err := http.Get("http://" + addr + wholeExport)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a third export while two clients read nothing: %d, want 503", res.StatusCode)
	}
}

// TestSlowReadersDropped: with a short WriteIdle, the two clients that
// read nothing are dropped and let go of the export slots: a third export
// is taken on. A live stream whose client reads nothing is dropped too.
func TestSlowReadersDropped(t *testing.T) {
	srv, addr, log := slowServer(t, Options{Exports: 2, WriteIdle: 20 * time.Millisecond, Heartbeat: 100 * time.Microsecond})
	askAndHold(t, addr, wholeExport)
	askAndHold(t, addr, wholeExport)
	waitLog(t, log, "read nothing of an export")
	waitLog(t, log, "read nothing of an export")
	waitFor(t, "the slots let go", func() bool { return len(srv.exports) == 0 })
	// The answer's first bytes are in the socket before any write could
	// wait: its status says the export was taken on.
	res, err := http.Get("http://" + addr + wholeExport)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 15)
	_, err = io.ReadFull(res.Body, head)
	res.Body.Close()
	if res.StatusCode != 200 || err != nil || !strings.EqualFold(string(head), "<!DOCTYPE html>") {
		t.Fatalf("the export after the slow clients: %d, %q, %v", res.StatusCode, head, err)
	}

	// A live stream: pings until the buffers are full, then dropped.
	askAndHold(t, addr, "/s/s1/events")
	waitFor(t, "the stream to start", func() bool { return srv.streams.Load() == 1 })
	waitLog(t, log, "read nothing of a live stream")
	waitFor(t, "the stream to end", func() bool { return srv.streams.Load() == 0 })
}
