package web

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
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
