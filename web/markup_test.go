package web

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
)

// TestMarkdownReadsAsWritten: a message's markdown shows as a reader
// expects: task lists as read-only checkboxes, HTML typed in a message as
// the text it is (escaped, its words kept), and link texts without
// markdown syntax.
func TestMarkdownReadsAsWritten(t *testing.T) {
	root := t.TempDir()
	writeSession(t, root, "--w--", "md.jsonl", sessiontest.Lines(sessiontest.Header,
		sessiontest.User("u1", "", 1, "Plan:\n\n- [ ] write the test\n- [x] read the code\n"),
		sessiontest.Asst("a1", "u1", 2, "Use <kbd>ctrl</kbd> and <b>bold</b> words here.\n\n<details>\nHidden words inside\n</details>\n\nAfter."),
	))
	h := newServer(t, openLib(t, root), nil).Handler()
	body := get(t, h, "/s/s1/entry?e=a1").Body.String()
	for _, c := range []struct{ name, want string }{
		{"an open task", `<input disabled="" type="checkbox"`},
		{"a done task", `<input checked="" disabled="" type="checkbox"`},
		{"the task's words", "write the test"},
		{"inline HTML as text", "Use &lt;kbd&gt;ctrl&lt;/kbd&gt; and &lt;b&gt;bold&lt;/b&gt; words here."},
		{"an HTML block as text, its words kept", "&lt;details&gt;\nHidden words inside\n&lt;/details&gt;"},
		{"the text after it", "After."},
	} {
		if !strings.Contains(body, c.want) {
			t.Errorf("%s: the page lacks %q", c.name, c.want)
		}
	}
	if strings.Contains(body, "raw HTML omitted") {
		t.Error("HTML in a message was dropped")
	}
	for _, problem := range unsafeMarkup(t, body) {
		t.Error(problem)
	}
	if strings.Contains(body, "<kbd>") || strings.Contains(body, "<details>") {
		t.Error("HTML from a message reached the page as markup")
	}
}

// TestLinkTextsWithoutMarkdown: search hits and the palette's links read
// "…shows yesterday's weather…", not with the markdown's asterisks, and a
// fork without a name is named by its first message the same way.
func TestLinkTextsWithoutMarkdown(t *testing.T) {
	root := demoRoot(t)
	// A fork with no name: the parent's page links it by its first message.
	parent := filepath.Join(root, "--home-dev-weather--", "2026-05-12T08-30-01-234Z_"+mainID+".jsonl")
	writeSession(t, root, "--home-dev-weather--", "2026-05-20T10-00-00-000Z_unnamedfork.jsonl", sessiontest.Lines(
		`{"type":"session","version":3,"id":"unnamedfork","timestamp":"2026-05-20T10:00:00.000Z","cwd":"/home/dev/weather","parentSession":`+strconv.Quote(parent)+`}`,
		sessiontest.User("512d5d6b", "", 1, "The **forecast** page, with `code` in it"),
	))
	h := newServer(t, openLib(t, root), nil).Handler()
	links := func(page, class string) []string {
		t.Helper()
		var out []string
		body := get(t, h, page).Body.String()
		for _, part := range strings.Split(body, `class="`+class+`"`)[1:] { // the text after the class, to the end of the link
			out = append(out, part[:strings.Index(part, "</a>")])
		}
		if len(out) == 0 {
			t.Fatalf("%s has no %s links", page, class)
		}
		return out
	}
	for _, c := range []struct{ page, class, want string }{
		{"/search?q=yesterday", "hit-link", "shows <mark>yesterday</mark>&#39;s weather"},
		{"/palette?q=yesterday", "palette-item", "shows <mark>yesterday</mark>&#39;s weather"},
		{"/s/" + mainID, "fork-link", "The forecast page, with code in it"},
	} {
		found := false
		for _, l := range links(c.page, c.class) {
			if strings.Contains(l, "**") || strings.Contains(l, "`") {
				t.Errorf("%s: a link shows markdown: %s", c.page, l)
			}
			found = found || strings.Contains(l, c.want)
		}
		if !found {
			t.Errorf("%s: no link reads %q: %q", c.page, c.want, links(c.page, c.class))
		}
	}
}

// TestPaletteNamesFolders: the palette names a session's project by its
// folder (the session's cwd), not by pi's encoded folder name.
func TestPaletteNamesFolders(t *testing.T) {
	h := newServer(t, openLib(t, demoRoot(t)), nil).Handler()
	body := get(t, h, "/palette?q=port+cache").Body.String()
	if !strings.Contains(body, "/home/dev/weather-api") || strings.Contains(body, "--home-dev-weather-api--") {
		t.Errorf("the palette's sessions:\n%s", body)
	}
}
