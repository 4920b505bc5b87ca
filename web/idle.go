package web

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"
)

// idleWriter writes a long response (an export, a live stream) giving each
// write Options.WriteIdle to go through: a client that reads nothing for
// that long fails the write, and the handler lets go of what it holds (an
// export slot, a stream). The deadline is set again before each write, so
// a slow client that keeps reading is never cut off, and the time spent
// building between writes does not count.
type idleWriter struct {
	w    io.Writer
	rc   *http.ResponseController
	idle time.Duration
	err  error // the first write that failed
}

// newIdleWriter writes to res with idle time per write.
func newIdleWriter(res http.ResponseWriter, idle time.Duration) *idleWriter {
	under := res
	if r, ok := res.(*echo.Response); ok {
		under = r.Writer // echo's Flush drops the error, which tells a client that reads nothing
	}
	return &idleWriter{w: res, rc: http.NewResponseController(under), idle: idle}
}

// arm gives the next write idle time to go through (a writer without
// deadlines, a test's recorder, gets none).
func (w *idleWriter) arm() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.idle)) }

func (w *idleWriter) Write(p []byte) (int, error) {
	w.arm()
	n, err := w.w.Write(p)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}

// Flush sends what is buffered, within idle time.
func (w *idleWriter) Flush() error {
	w.arm()
	err := w.rc.Flush()
	if err != nil && !errors.Is(err, http.ErrNotSupported) && w.err == nil {
		w.err = err
	}
	return w.err
}

// done sends the rest of the response within idle time, then lifts the
// deadline for the connection's next request.
func (w *idleWriter) done() {
	if w.Flush() == nil {
		_ = w.rc.SetWriteDeadline(time.Time{})
	}
}

// dropped reports whether a write failed because the client read nothing
// for idle time.
func (w *idleWriter) dropped() bool { return errors.Is(w.err, os.ErrDeadlineExceeded) }
