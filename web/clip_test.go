package web

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTrim(t *testing.T) {
	long := strings.Repeat("é", shownBytes) // 2 bytes each: cut inside a rune unless careful
	lines := strings.Repeat("a\n", shownLines+10)
	tests := []struct {
		name      string
		in        string
		limit     int
		wantLen   int // of the shown text before "…"; -1 for unchanged
		wantLines int
	}{
		{"short", "hello\nworld", shownBytes, -1, 0},
		{"at the limit", strings.Repeat("x", shownBytes), shownBytes, -1, 0},
		{"long, cut on a rune", long, shownBytes, shownBytes, 0},
		{"many lines", lines, shownBytes, 2 * shownLines, shownLines},
		{"markdown limit", strings.Repeat("y", shownMarkdown+1), shownMarkdown, shownMarkdown, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &builder{clip: true}
			got := b.trim(tt.in, tt.limit)
			if tt.wantLen < 0 {
				if got != tt.in || b.cut != 0 {
					t.Fatalf("changed: %d bytes, cut %d", len(got), b.cut)
				}
				return
			}
			head, ok := strings.CutSuffix(got, "…")
			if !ok || len(head) != tt.wantLen || !utf8.ValidString(head) || !strings.HasPrefix(tt.in, head) {
				t.Fatalf("shown %d bytes (valid %v, ellipsis %v), want %d", len(head), utf8.ValidString(head), ok, tt.wantLen)
			}
			if tt.wantLines > 0 && strings.Count(head, "\n") != tt.wantLines {
				t.Errorf("%d lines shown, want %d", strings.Count(head, "\n"), tt.wantLines)
			}
			if b.cut != len(tt.in)-len(head) {
				t.Errorf("cut %d, want %d", b.cut, len(tt.in)-len(head))
			}
			// Without clipping (exports), nothing is cut.
			if nb := (&builder{}); nb.trim(tt.in, tt.limit) != tt.in || nb.cut != 0 {
				t.Error("an export's builder cut the text")
			}
		})
	}
}

// TestLongTexts: a session holding a 5 MB tool output and a 1 MB markdown
// answer shows their heads with a note and a link to the full text, which
// serves them whole; an export keeps them whole.
func TestLongTexts(t *testing.T) {
	root := t.TempDir()
	out := strings.Repeat("line of output <b>not bold</b>\n", 170_000) // about 5 MB
	md := strings.Repeat("## part\n\nsome **bold** text\n\n", 40_000)  // about 1 MB
	lines := []any{
		map[string]any{"type": "session", "version": 3, "id": "long1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"},
		map[string]any{"type": "message", "id": "u1", "parentId": nil, "timestamp": "2026-01-01T00:00:01.000Z",
			"message": map[string]any{"role": "user", "content": "run it", "timestamp": 1}},
		map[string]any{"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-01T00:00:02.000Z",
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "toolCall", "id": "t1", "name": "bash", "arguments": map[string]any{"command": "cat big"}}},
				"provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 2}},
		map[string]any{"type": "message", "id": "r1", "parentId": "a1", "timestamp": "2026-01-01T00:00:03.000Z",
			"message": map[string]any{"role": "toolResult", "toolCallId": "t1", "toolName": "bash", "content": []any{map[string]any{"type": "text", "text": out}}, "isError": false, "timestamp": 3}},
		map[string]any{"type": "message", "id": "a2", "parentId": "r1", "timestamp": "2026-01-01T00:00:04.000Z",
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": md}}, "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 4}},
	}
	var file strings.Builder
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		file.Write(b)
		file.WriteByte('\n')
	}
	dir := filepath.Join(root, "--w--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "2026-01-01T00-00-00-000Z_long1.jsonl"), []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, openLib(t, root), nil).Handler()

	for _, target := range []string{"r1", "a2"} {
		rec := get(t, srv, "/s/long1/entry?e="+target)
		page := rec.Body.String()
		if rec.Code != 200 || len(page) > 400<<10 {
			t.Fatalf("%s: status %d, %d bytes (want the heads only)", target, rec.Code, len(page))
		}
		note := regexp.MustCompile(`Long text cut here \((\d+(\.\d)?) MB not shown\)\. <a href="/s/long1/text\?e=` + target + `"`)
		if !note.MatchString(page) {
			t.Errorf("%s: no note with a link to its full text", target)
		}
		if strings.Contains(page, "<b>not bold</b>") {
			t.Errorf("%s: tool output not escaped", target)
		}
	}
	rec := get(t, srv, "/s/long1/text?e=r1")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), out) || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Errorf("full text of r1: status %d, %d bytes, %s", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Type"))
	}
	rec = get(t, srv, "/s/long1/text?e=a2")
	if !strings.Contains(rec.Body.String(), md) {
		t.Errorf("full text of a2: %d bytes, want the whole markdown source", rec.Body.Len())
	}
	rec = get(t, srv, "/api/sessions/long1/export?format=html")
	if rec.Code != 200 || strings.Contains(rec.Body.String(), "Long text cut") || strings.Count(rec.Body.String(), "line of output") < 170_000 {
		t.Errorf("export: status %d, %d bytes; want everything", rec.Code, rec.Body.Len())
	}
}
