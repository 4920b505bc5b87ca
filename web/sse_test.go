package web

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// parseSSE reads an event stream as the HTML standard says a browser does:
// lines end at CR, LF or CRLF; "field: value"; a blank line ends an event.
func parseSSE(stream string) []sseEvent {
	var out []sseEvent
	var ev sseEvent
	var data []string
	for _, line := range regexp.MustCompile("\r\n|\r|\n").Split(stream, -1) {
		if line == "" {
			if ev.Name != "" || data != nil {
				ev.Data = strings.Join(data, "\n")
				out = append(out, ev)
			}
			ev, data = sseEvent{}, nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Name = value
		case "data":
			data = append(data, value)
		case "":
		default:
			ev.Name += "!unexpected field " + field
		}
	}
	return out
}

// TestStreamCarriesAnyText sends session text holding CR, CRLF and what
// looks like event fields: the browser sees one event with that text (CR
// as LF), and no field can be added or the event ended early.
func TestStreamCarriesAnyText(t *testing.T) {
	for _, data := range []string{
		"A\revent: gone", "line1\r\nline2\rline3\nline4", "\r\r\n\n", "id: 7\rretry: 1\r\rdata: x", "<li>ok</li>",
	} {
		rec := httptest.NewRecorder()
		c := echo.New().NewContext(httptest.NewRequest("GET", "/events", nil), rec)
		if err := startStream(c, time.Minute).send("row", data); err != nil {
			t.Fatal(err)
		}
		got := parseSSE(rec.Body.String())
		want := strings.ReplaceAll(strings.ReplaceAll(data, "\r\n", "\n"), "\r", "\n")
		if len(got) != 1 || got[0].Name != "row" || got[0].Data != want {
			t.Errorf("send(%q): the browser reads %+v; want one row event of %q", data, got, want)
		}
	}
}
