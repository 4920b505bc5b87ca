package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// evilSession is a session whose every string tries to inject markup.
const evilSession = `{"type":"session","version":3,"id":"evil","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/<svg onload=alert(5)>"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"<script>alert(1)</script> and <img src=x onerror=alert(2)> and [link](javascript:alert(3)) and <a href=\"javascript:alert(7)\">a</a>","timestamp":1767225601000}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"<script>alert(8)</script>"},{"type":"text","text":"ok <iframe src=//evil></iframe>"},{"type":"toolCall","id":"c1","name":"<script>alert(9)</script>","arguments":{"path":"<script>alert(10)</script>"}}],"provider":"p","model":"<b>m</b>","usage":{"totalTokens":1,"cost":{"total":0}},"stopReason":"toolUse","timestamp":1767225602000}}
{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"<script>alert(4)</script>"},{"type":"image","mimeType":"image/svg+xml","data":"PHN2ZyBvbmxvYWQ9YWxlcnQoMTEpPg=="},{"type":"image","mimeType":"image/png","data":"x\" onerror=\"alert(6)"}],"isError":false,"timestamp":1767225603000}}
{"type":"label","id":"l1","parentId":"r1","timestamp":"2026-01-01T00:00:04.000Z","targetId":"u1","label":"<b onmouseover=alert(12)>x</b>"}
{"type":"custom_message","id":"cm","parentId":"l1","timestamp":"2026-01-01T00:00:05.000Z","customType":"<i>t</i>","content":"<script>alert(13)</script>","display":true}
{"type":"message","id":"b1","parentId":"cm","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"bashExecution","command":"<script>alert(14)</script>","output":"<script>alert(15)</script>","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1767225606000}}
{"type":"session_info","id":"n1","parentId":"b1","timestamp":"2026-01-01T00:00:07.000Z","name":"<script>alert('name')</script>"}
`

func TestSessionStringsStayText(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "--tmp-evil--")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00-000Z_evil.jsonl"), []byte(evilSession), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, openLib(t, root), nil).Handler()
	pages := []string{
		"/",
		"/?q=script",
		"/s/evil",
		"/s/evil?filter=all",
		"/s/evil?target=r1",
		"/s/evil/entry?e=n1",
		"/s/evil/entry?e=n1&view=context",
		"/s/evil/rows?filter=all&q=script",
	}
	for _, p := range pages {
		rec := get(t, srv, p)
		if rec.Code != 200 {
			t.Fatalf("%s: status %d", p, rec.Code)
		}
		for _, problem := range unsafeMarkup(t, rec.Body.String()) {
			t.Errorf("%s: %s", p, problem)
		}
	}
	// The tool output is shown, as text.
	body := get(t, srv, "/s/evil/entry?e=n1").Body.String()
	for _, want := range []string{"&lt;script&gt;alert(4)&lt;/script&gt;", "&lt;script&gt;alert(15)&lt;/script&gt;",
		"image of type &#34;image/svg+xml&#34; not shown", "image not shown: its data is not valid base64"} {
		if !strings.Contains(body, want) {
			t.Errorf("entry page lacks %q", want)
		}
	}
}

// unsafeMarkup parses a page and lists what could run code or load from
// elsewhere: elements other than piweb's own scripts, event-handler
// attributes, script URLs, images that are not piweb's or checked data: URLs.
func unsafeMarkup(t *testing.T, page string) []string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	stack := []*html.Node{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			stack = append(stack, c)
		}
		if n.Type != html.ElementNode {
			continue
		}
		attr := map[string]string{}
		for _, a := range n.Attr {
			attr[strings.ToLower(a.Key)] = a.Val
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				out = append(out, fmt.Sprintf("<%s> has handler %s=%q", n.Data, a.Key, a.Val))
			}
			if v := strings.ToLower(strings.TrimSpace(a.Val)); strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "vbscript:") {
				out = append(out, fmt.Sprintf("<%s %s=%q>", n.Data, a.Key, a.Val))
			}
		}
		switch n.Data {
		case "script":
			if !strings.HasPrefix(attr["src"], "/static/") {
				out = append(out, fmt.Sprintf("script %q", attr["src"]))
			}
		case "iframe", "object", "embed", "svg", "style", "base", "form", "math":
			// piweb's own forms: the sessions list's controls, the actions panel's, the search page's and the palette's.
			if n.Data != "form" || attr["id"] != "list-controls" && attr["class"] != "act-form" && attr["id"] != "search-form" && attr["class"] != "palette-form" {
				out = append(out, "element <"+n.Data+">")
			}
		case "img":
			src := attr["src"]
			ok := false
			for _, p := range []string{"data:image/png;base64,", "data:image/jpeg;base64,", "data:image/gif;base64,", "data:image/webp;base64,"} {
				ok = ok || strings.HasPrefix(src, p)
			}
			if !ok {
				out = append(out, fmt.Sprintf("img src=%q", src))
			}
		case "b", "i":
			out = append(out, "session markup <"+n.Data+">")
		}
	}
	return out
}
