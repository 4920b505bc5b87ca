package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/piweb/piweb/sessions"
)

// TestClassify checks what each failure tells the user: the status and the
// words, through the one mapper.
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		err    error
		status int
		words  string
	}{
		{&sessions.Error{Kind: sessions.ErrNoSpace, Err: syscall.ENOSPC}, http.StatusInsufficientStorage, "disk holding your sessions is full"},
		{&sessions.Error{Kind: sessions.ErrChanged}, http.StatusConflict, "rewritten or replaced"},
		{&sessions.Error{Kind: sessions.ErrNotUpgradable, Version: 3}, http.StatusConflict, "already in version 3"},
		{&sessions.Error{Kind: sessions.ErrReadOnly, Key: "k", Version: 4}, http.StatusLocked, "version 4, newer"},
		{&sessions.Error{Kind: sessions.ErrReadOnly, Key: "k", Version: 2}, http.StatusLocked, "old version 2 format"},
		{&sessions.Error{Kind: sessions.ErrNoEntry, Entry: "e1"}, http.StatusNotFound, "no entry “e1”"},
		{&sessions.Error{Kind: sessions.ErrNoSession, Key: "k1"}, http.StatusNotFound, "“k1”"},
		{fmt.Errorf("statat x: %w", fs.ErrNotExist), http.StatusNotFound, "no longer on disk"},
		{&http.MaxBytesError{Limit: maxBody}, http.StatusRequestEntityTooLarge, "larger than piweb accepts"},
		{os.ErrDeadlineExceeded, http.StatusRequestTimeout, "did not arrive in time"},
		{errors.New("boom"), http.StatusInternalServerError, "details are in its log"},
	} {
		pe := classify(tt.err)
		if pe.status != tt.status || !strings.Contains(pe.msg, tt.words) {
			t.Errorf("classify(%v) = %d %q; want %d and %q", tt.err, pe.status, pe.msg, tt.status, tt.words)
		}
	}
}

// panicking is a library whose sessions panic when read.
type panicking struct{ Library }

func (panicking) View(string, func(*sessions.Session) error) error { panic("a bug") }

// TestHandlerPanic: a handler that panics answers 500 and is logged with
// its stack; the server goes on serving.
func TestHandlerPanic(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	var logged bytes.Buffer
	var mu sync.Mutex
	srv := New(panicking{lib}, Options{Addr: "127.0.0.1:8377", Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil))})
	t.Cleanup(srv.Close)
	key := lib.List()[0].Key
	for _, target := range []string{"/s/" + key, "/api/sessions/" + key} {
		if w := do(t, srv.Handler(), "GET", target); w.Code != http.StatusInternalServerError {
			t.Errorf("GET %s: %d, want 500", target, w.Code)
		}
	}
	if w := do(t, srv.Handler(), "GET", "/"); w.Code != http.StatusOK {
		t.Errorf("GET / after the panics: %d", w.Code)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logged.String(), "a handler panicked"); n != 2 || !strings.Contains(logged.String(), "errors_test.go") {
		t.Errorf("logged %d panics (want 2, with the stack):\n%s", n, logged.String())
	}
}

// lockedWriter writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
