package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// stream writes server-sent events; a client that reads nothing for
// idle time (Options.WriteIdle) fails the next write, which ends the stream.
type stream struct {
	res *echo.Response
	out *idleWriter
}

// startStream sends the event-stream headers.
func startStream(c echo.Context, idle time.Duration) *stream {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	// A stream outlives the read timeout: lift it (the request has no body).
	_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Time{})
	c.Response().WriteHeader(200)
	c.Response().Flush()
	return &stream{res: c.Response(), out: newIdleWriter(c.Response(), idle)}
}

// send writes one event; data may span lines. The event stream ends a
// line at CR, LF or CRLF, so every CR in data (a message pasted from
// Windows, or a name made to inject a field) becomes a line of its own
// data: the client gets the same text with LF for CR (which HTML shows
// alike), and nothing in data can end the event or add a field to it.
func (s *stream) send(event, data string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\n", event)
	data = strings.ReplaceAll(strings.ReplaceAll(data, "\r\n", "\n"), "\r", "\n")
	for _, line := range strings.Split(data, "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	if _, err := s.out.Write([]byte(b.String())); err != nil {
		return err
	}
	return s.out.Flush()
}

// comment writes a keep-alive comment.
func (s *stream) comment(text string) error {
	if _, err := fmt.Fprintf(s.out, ": %s\n\n", text); err != nil {
		return err
	}
	return s.out.Flush()
}

// htmlOf renders a component to a string.
func htmlOf(ctx context.Context, comp templ.Component) (string, error) {
	var b bytes.Buffer
	err := comp.Render(ctx, &b)
	return b.String(), err
}
