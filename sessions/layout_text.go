package sessions

import (
	"math"
	"path/filepath"
	"strings"

	"github.com/piweb/piweb/internal/js"
)

// The text half of the tree layout: pi's one-line entry previews
// (getEntryDisplayText, formatToolCall), its searchable text
// (getSearchableText) and the JavaScript conversions they rely on. Values
// that pi would crash on (a message without a message object, tool call
// arguments that are not an object) get a sensible text instead.

// maxPreview caps a preview, in runes; pi cuts rows at the terminal width.
const maxPreview = 400

// maxCallSearch bounds how many assistant ancestors of a tool result are
// read to find its tool call.
const maxCallSearch = 64

// preview computes pi's display text for entry pos; l.mu is held.
func (l *Layout) preview(r *Reader, pos int) (string, error) {
	e := &l.s.Entries[pos]
	switch e.Type {
	case TypeMessage, TypeCustomMessage, TypeCompaction, TypeBranchSummary, TypeModelChange,
		TypeThinking, TypeCustom, TypeContextEdit, TypeLabel, TypeSessionInfo:
	default:
		return "", nil // pi shows nothing for other types
	}
	o, err := r.entryObj(pos)
	if err != nil {
		return "", err
	}
	var t string
	switch e.Type {
	case TypeMessage:
		m := js.ObjectOf(o.Val("message"))
		role := m.Val("role")
		rs, isStr := js.String(role)
		if isStr {
			rs = e.Role // as migrated: v2's hookMessage is custom
		}
		switch {
		case isStr && rs == RoleUser:
			t = "user: " + normalize(extractContent(m.Val("content")))
		case isStr && rs == RoleAssistant:
			text := normalize(extractContent(m.Val("content")))
			stop, _ := js.String(m.Val("stopReason"))
			errMsg := m.Val("errorMessage")
			switch {
			case text != "":
				t = "assistant: " + text
			case stop == "aborted":
				t = "assistant: (aborted)"
			case js.Truthy(errMsg):
				t = "assistant: " + js.UTF16Prefix(normalize(js.ToString(errMsg)), 80)
			default:
				t = "assistant: (no content)"
			}
		case isStr && rs == RoleToolResult:
			t, err = l.toolResult(r, pos, m)
			if err != nil {
				return "", err
			}
		case isStr && rs == RoleBash:
			cmd := m.Val("command")
			c := ""
			if len(cmd) > 0 && !js.IsNull(cmd) {
				c = js.ToString(cmd)
			}
			t = "[bash]: " + normalize(c)
		case isStr:
			t = "[" + rs + "]"
		default:
			t = "[" + js.ToString(role) + "]"
		}
	case TypeCustomMessage:
		content := o.Val("content")
		var c string
		if s, ok := js.String(content); ok {
			c = s
		} else {
			var b strings.Builder
			js.Elems(content, func(el []byte) bool {
				blk := js.ObjectOf(el)
				if ty, _ := js.String(blk.Val("type")); ty == "text" {
					b.WriteString(js.Join(blk.Val("text")))
				}
				return true
			})
			c = b.String()
		}
		t = "[" + js.ToString(o.Val("customType")) + "]: " + normalize(c)
	case TypeCompaction:
		t = "[compaction: " + js.FormatNumber(js.Round(js.ToNumber(o.Val("tokensBefore"))/1000)) + "k tokens]"
	case TypeBranchSummary:
		t = "[branch summary]: " + normalize(js.Join(o.Val("summary")))
	case TypeModelChange:
		t = "[model: " + js.ToString(o.Val("modelId")) + "]"
	case TypeThinking:
		t = "[thinking: " + js.ToString(o.Val("thinkingLevel")) + "]"
	case TypeCustom:
		t = "[custom: " + js.ToString(o.Val("customType")) + "]"
	case TypeContextEdit:
		rep := "replace"
		if js.IsNull(o.Val("replacement")) {
			rep = "omit"
		}
		t = "[context " + rep + ": " + js.ToString(o.Val("targetId")) + "]"
	case TypeLabel:
		lb := o.Val("label")
		if len(lb) == 0 || js.IsNull(lb) {
			t = "[label: (cleared)]"
		} else {
			t = "[label: " + js.ToString(lb) + "]"
		}
	case TypeSessionInfo:
		if name := o.Val("name"); js.Truthy(name) {
			t = "[title: " + js.ToString(name) + "]"
		} else {
			t = "[title: empty]"
		}
	}
	return js.CapRunes(t, maxPreview), nil
}

// toolResult previews a tool result as its tool call, as pi does. pi keeps
// a session-wide map of tool call ids; piweb looks for the call among the
// nearest assistant ancestors, where pi writes it.
func (l *Layout) toolResult(r *Reader, pos int, m js.Object) (string, error) {
	if id, ok := js.String(m.Val("toolCallId")); ok && id != "" {
		seen := 0
		for a := l.s.parent[pos]; a >= 0 && seen < maxCallSearch; a = l.s.parent[a] {
			e := &l.s.Entries[a]
			if e.Type != TypeMessage || e.Role != RoleAssistant {
				continue
			}
			seen++
			calls, err := l.callsOf(r, a)
			if err != nil {
				return "", err
			}
			if t, ok := calls[id]; ok {
				return t, nil
			}
		}
	}
	name := m.Val("toolName")
	if len(name) == 0 || js.IsNull(name) {
		return "[tool]", nil
	}
	return "[" + js.ToString(name) + "]", nil
}

// callsOf returns the formatted tool calls of assistant entry a by call id.
func (l *Layout) callsOf(r *Reader, a int) (map[string]string, error) {
	if c, ok := l.calls[a]; ok {
		return c, nil
	}
	o, err := r.entryObj(a)
	if err != nil {
		return nil, err
	}
	calls := map[string]string{}
	content := js.ObjectOf(o.Val("message")).Val("content")
	js.Elems(content, func(el []byte) bool {
		blk := js.ObjectOf(el)
		if ty, _ := js.String(blk.Val("type")); ty != "toolCall" {
			return true
		}
		if id, ok := js.String(blk.Val("id")); ok && id != "" {
			calls[id] = formatToolCall(blk.Val("name"), blk.Val("arguments"), l.opt.Home)
		}
		return true
	})
	if l.calls == nil {
		l.calls = map[int]map[string]string{}
	}
	l.calls[a] = calls
	return calls, nil
}

// formatToolCall is pi's one-line form of a tool call.
func formatToolCall(nameRaw, argsRaw []byte, home string) string {
	args := js.ObjectOf(argsRaw)
	or := func(def string, keys ...string) string {
		for _, k := range keys {
			if v := args.Val(k); js.Truthy(v) {
				return js.ToString(v)
			}
		}
		return def
	}
	name, _ := js.String(nameRaw)
	switch name {
	case "read":
		p := shortenHome(or("", "path", "file_path"), home)
		return "[read: " + p + readLineRange(args.Val("offset"), args.Val("limit")) + "]"
	case "write", "edit":
		return "[" + name + ": " + shortenHome(or("", "path", "file_path"), home) + "]"
	case "bash":
		raw := or("", "command")
		cmd := js.UTF16Prefix(js.Trim(replaceNT(raw)), 50)
		if js.UTF16Len(raw) > 50 {
			cmd += "..."
		}
		return "[bash: " + cmd + "]"
	case "grep":
		return "[grep: /" + or("", "pattern") + "/ in " + shortenHome(or(".", "path"), home) + "]"
	case "find":
		return "[find: " + or("", "pattern") + " in " + shortenHome(or(".", "path"), home) + "]"
	case "ls":
		return "[ls: " + shortenHome(or(".", "path"), home) + "]"
	}
	a := "{}"
	if len(argsRaw) > 0 {
		a = js.Stringify(argsRaw)
	}
	t := "[" + js.ToString(nameRaw) + ": " + js.UTF16Prefix(a, 40)
	if js.UTF16Len(a) > 40 {
		t += "..."
	}
	return t + "]"
}

// readLineRange is pi's formatReadLineRange: ":start-end" from a read's offset and limit.
func readLineRange(offset, limit []byte) string {
	nullish := func(v []byte) bool { return len(v) == 0 || js.IsNull(v) }
	if nullish(offset) && nullish(limit) {
		return ""
	}
	start, ok := 1.0, true
	if !nullish(offset) {
		start, ok = lineNumber(offset)
	}
	if !ok {
		return ""
	}
	if nullish(limit) {
		return ":" + js.FormatNumber(start)
	}
	count, ok := lineNumber(limit)
	if !ok {
		return ""
	}
	end := start + count - 1
	if end == 0 || math.IsNaN(end) {
		return ":" + js.FormatNumber(start)
	}
	return ":" + js.FormatNumber(start) + "-" + js.FormatNumber(end)
}

// lineNumber is pi's parseLineNumber: a finite number or numeric string.
func lineNumber(v []byte) (float64, bool) {
	var f float64
	if s, ok := js.String(v); ok {
		if js.Trim(s) == "" {
			return 0, false
		}
		f = js.NumberOf(s)
	} else if len(v) > 0 && (v[0] == '-' || js.IsDigit(v[0])) {
		f = js.ToNumber(v)
	} else {
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// shortenHome is pi's shortenHomePath: an absolute path inside home becomes "~/…".
func shortenHome(p, home string) string {
	if home == "" || !strings.HasPrefix(p, "/") {
		return p
	}
	h, err := filepath.Abs(home)
	if err != nil {
		return p
	}
	c := filepath.Clean(p)
	if c == h {
		return "~"
	}
	prefix := h
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if !strings.HasPrefix(c, prefix) {
		return p
	}
	return "~/" + c[len(prefix):]
}

// searchText is pi's getSearchableText for entry i (label included).
func (r *Reader) searchText(i int) (string, error) {
	var parts []string
	if lb := r.s.LabelOf(i); lb != "" {
		parts = append(parts, lb)
	}
	parts, err := r.searchParts(parts, i)
	if err != nil {
		return "", err
	}
	return strings.Join(parts, " "), nil
}

// searchParts appends to parts the parts of pi's getSearchableText that
// come from entry i itself: all but the label, which later label entries
// change. pi joins the parts with a space.
func (r *Reader) searchParts(parts []string, i int) ([]string, error) {
	e := &r.s.Entries[i]
	switch e.Type {
	case TypeMessage, TypeCustomMessage, TypeBranchSummary, TypeSessionInfo, TypeModelChange,
		TypeThinking, TypeCustom, TypeContextEdit, TypeLabel:
	case TypeCompaction:
		return append(parts, "compaction"), nil
	default:
		return parts, nil
	}
	o, err := r.entryObj(i)
	if err != nil {
		return nil, err
	}
	get := func(k string) []byte { return o.Val(k) }
	switch e.Type {
	case TypeMessage:
		m := js.ObjectOf(get("message"))
		role := m.Val("role")
		if _, ok := js.String(role); ok {
			parts = append(parts, e.Role) // as migrated
		} else {
			parts = append(parts, js.Join(role))
		}
		if c := m.Val("content"); js.Truthy(c) {
			parts = append(parts, extractContent(c))
		}
		if e.Role == RoleBash {
			if c := m.Val("command"); js.Truthy(c) {
				parts = append(parts, js.Join(c))
			}
		}
	case TypeCustomMessage:
		parts = append(parts, js.Join(get("customType")))
		if c, ok := js.String(get("content")); ok {
			parts = append(parts, c)
		} else {
			parts = append(parts, extractContent(get("content")))
		}
	case TypeBranchSummary:
		parts = append(parts, "branch summary", js.Join(get("summary")))
	case TypeSessionInfo:
		parts = append(parts, "title")
		if n := get("name"); js.Truthy(n) {
			parts = append(parts, js.Join(n))
		}
	case TypeModelChange:
		parts = append(parts, "model", js.Join(get("modelId")))
	case TypeThinking:
		parts = append(parts, "thinking", js.Join(get("thinkingLevel")))
	case TypeCustom:
		parts = append(parts, "custom", js.Join(get("customType")))
	case TypeContextEdit:
		rep := "replace"
		if js.IsNull(get("replacement")) {
			rep = "omit"
		}
		parts = append(parts, "context edit", rep, js.Join(get("targetId")))
	case TypeLabel:
		parts = append(parts, "label", js.Join(get("label")))
	}
	return parts, nil
}

// entryObj reads entry i's line as an object (empty for a non-object line).
func (r *Reader) entryObj(i int) (js.Object, error) {
	b, err := r.Raw(i)
	if err != nil {
		return nil, err
	}
	return js.ObjectOf(b), nil
}

// extractContent is pi's extractContent: the text of string or block
// content, cut to 200 UTF-16 units. Only that much of the text is decoded.
func extractContent(raw []byte) string {
	const n = 200
	if len(raw) > 0 && raw[0] == '"' {
		return js.UTF16Prefix(js.Prefix(raw, n), n)
	}
	var b strings.Builder
	units := 0
	js.Elems(raw, func(el []byte) bool {
		blk := js.ObjectOf(el)
		if ty, _ := js.String(blk.Val("type")); ty == "text" {
			var t string
			if text := blk.Val("text"); len(text) > 0 && text[0] == '"' {
				t = js.Prefix(text, n-units)
			} else {
				t = js.ToString(text)
			}
			b.WriteString(t)
			units += js.UTF16Len(t)
		}
		return units < n // the rest would be cut anyway
	})
	return js.UTF16Prefix(b.String(), n)
}

// normalize is pi's: newlines and tabs become spaces, then trim.
func normalize(s string) string { return js.Trim(replaceNT(s)) }

func replaceNT(s string) string {
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
	}
	return s
}
