package pitree

import (
	"math"
	"path/filepath"
	"strings"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// The text half of the tree layout: pi's one-line entry previews
// (getEntryDisplayText, formatToolCall), its searchable text
// (getSearchableText) and the JavaScript conversions they rely on. Values
// that pi would crash on (a message without a message object, tool call
// arguments that are not an object) get a sensible text instead.

// maxPreview caps a preview, in runes; pi cuts rows at the terminal width.
const maxPreview = 400

// contentPrefix is how much of a message's content pi reads for a row (extractContent).
const contentPrefix = 200

// maxCallSearch bounds how many assistant ancestors of a tool result are
// read to find its tool call.
const maxCallSearch = 64

// preview computes pi's display text for entry pos; l.mu is held.
func (l *Layout) preview(r *sessions.Reader, pos int) (string, error) {
	e := &l.s.Entries[pos]
	switch e.Type {
	case sessions.TypeMessage, sessions.TypeCustomMessage, sessions.TypeCompaction, sessions.TypeBranchSummary, sessions.TypeModelChange,
		sessions.TypeThinking, sessions.TypeCustom, sessions.TypeContextEdit, sessions.TypeLabel, sessions.TypeSessionInfo:
	default:
		return "", nil // pi shows nothing for other types
	}
	b, err := r.Body(pos)
	if err != nil {
		return "", err
	}
	o := b.Obj
	var t string
	switch e.Type {
	case sessions.TypeMessage:
		msg := b.Msg
		m := msg.Obj // pi's text conversions need the values as written
		role := m.Val("role")
		rs, isStr := js.String(role)
		if isStr {
			rs = e.Role // as migrated: v2's hookMessage is custom
		}
		switch {
		case isStr && rs == sessions.RoleUser:
			t = "user: " + normalize(msg.Content.Prefix(contentPrefix))
		case isStr && rs == sessions.RoleAssistant:
			text := normalize(msg.Content.Prefix(contentPrefix))
			errMsg := m.Val("errorMessage")
			switch {
			case text != "":
				t = "assistant: " + text
			case msg.StopReason == "aborted":
				t = "assistant: (aborted)"
			case js.Truthy(errMsg):
				t = "assistant: " + js.UTF16Prefix(normalize(js.ToString(errMsg)), 80)
			default:
				t = "assistant: (no content)"
			}
		case isStr && rs == sessions.RoleToolResult:
			t, err = l.toolResult(r, pos, msg)
			if err != nil {
				return "", err
			}
		case isStr && rs == sessions.RoleBash:
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
	case sessions.TypeCustomMessage:
		content := b.Msg.Content.Raw()
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
	case sessions.TypeCompaction:
		t = "[compaction: " + js.FormatNumber(js.Round(js.ToNumber(o.Val("tokensBefore"))/1000)) + "k tokens]"
	case sessions.TypeBranchSummary:
		t = "[branch summary]: " + normalize(js.Join(o.Val("summary")))
	case sessions.TypeModelChange:
		t = "[model: " + js.ToString(o.Val("modelId")) + "]"
	case sessions.TypeThinking:
		t = "[thinking: " + js.ToString(o.Val("thinkingLevel")) + "]"
	case sessions.TypeCustom:
		t = "[custom: " + js.ToString(o.Val("customType")) + "]"
	case sessions.TypeContextEdit:
		rep := "replace"
		if js.IsNull(o.Val("replacement")) {
			rep = "omit"
		}
		t = "[context " + rep + ": " + js.ToString(o.Val("targetId")) + "]"
	case sessions.TypeLabel:
		lb := o.Val("label")
		if len(lb) == 0 || js.IsNull(lb) {
			t = "[label: (cleared)]"
		} else {
			t = "[label: " + js.ToString(lb) + "]"
		}
	case sessions.TypeSessionInfo:
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
func (l *Layout) toolResult(r *sessions.Reader, pos int, msg *sessions.Message) (string, error) {
	if id := msg.ToolCallID; id != "" {
		seen := 0
		for a := l.s.Parent(pos); a >= 0 && seen < maxCallSearch; a = l.s.Parent(a) {
			e := &l.s.Entries[a]
			if e.Type != sessions.TypeMessage || e.Role != sessions.RoleAssistant {
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
	if id := msg.ToolCallID; id != "" {
		// pi's map holds every call of the tree: a result whose call is on
		// another branch (or farther up) still shows it.
		all, err := l.allCalls(r)
		if err != nil {
			return "", err
		}
		if t, ok := all[id]; ok {
			return t, nil
		}
	}
	name := msg.Obj.Val("toolName")
	if len(name) == 0 || js.IsNull(name) {
		return "[tool]", nil
	}
	return "[" + js.ToString(name) + "]", nil
}

// allCalls returns every tool call of the session by id, read once per
// layout and only when a result's call is not among its ancestors (pi's
// toolCallMap, filled in tree order: a later call with the same id wins).
func (l *Layout) allCalls(r *sessions.Reader) (map[string]string, error) {
	if l.every != nil {
		return l.every, nil
	}
	every := map[string]string{}
	var err error
	l.s.Walk(func(a, _ int) bool {
		e := &l.s.Entries[a]
		if err != nil || e.Type != sessions.TypeMessage || e.Role != sessions.RoleAssistant {
			return err == nil
		}
		var calls map[string]string
		if calls, err = l.callsOf(r, a); err == nil {
			for id, t := range calls {
				every[id] = t
			}
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	l.every = every
	return every, nil
}

// callsOf returns the formatted tool calls of assistant entry a by call
// id; an entry the index says holds none (FlagToolCall) is not read.
func (l *Layout) callsOf(r *sessions.Reader, a int) (map[string]string, error) {
	if !l.s.Entries[a].Flags.Has(sessions.FlagToolCall) {
		return nil, nil
	}
	if c, ok := l.calls[a]; ok {
		return c, nil
	}
	line, err := r.RawQuick(a)
	if err != nil {
		return nil, err
	}
	calls := map[string]string{}
	for _, c := range sessions.ToolCallsOf(line) {
		if c.ID != "" {
			obj := js.ObjectOf(c.Raw) // pi's text conversions need the values as written
			calls[c.ID] = formatToolCall(obj.Val("name"), c.Args, l.opt.Home)
		}
	}
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
func searchText(r *sessions.Reader, i int) (string, error) {
	var parts []string
	if lb := r.Session().LabelOf(i); lb != "" {
		parts = append(parts, lb)
	}
	parts, err := searchParts(r, parts, i)
	if err != nil {
		return "", err
	}
	return strings.Join(parts, " "), nil
}

// searchParts appends to parts the parts of pi's getSearchableText that
// come from entry i itself: all but the label, which later label entries
// change. pi joins the parts with a space.
func searchParts(r *sessions.Reader, parts []string, i int) ([]string, error) {
	e := &r.Session().Entries[i]
	switch e.Type {
	case sessions.TypeMessage, sessions.TypeCustomMessage, sessions.TypeBranchSummary, sessions.TypeSessionInfo, sessions.TypeModelChange,
		sessions.TypeThinking, sessions.TypeCustom, sessions.TypeContextEdit, sessions.TypeLabel:
	case sessions.TypeCompaction:
		return append(parts, "compaction"), nil
	default:
		return parts, nil
	}
	b, err := r.Body(i)
	if err != nil {
		return nil, err
	}
	get := func(k string) []byte { return b.Obj.Val(k) }
	switch e.Type {
	case sessions.TypeMessage:
		m := b.Msg.Obj
		role := m.Val("role")
		if _, ok := js.String(role); ok {
			parts = append(parts, e.Role) // as migrated
		} else {
			parts = append(parts, js.Join(role))
		}
		if c := b.Msg.Content; js.Truthy(c.Raw()) {
			parts = append(parts, c.Prefix(contentPrefix))
		}
		if e.Role == sessions.RoleBash {
			if c := m.Val("command"); js.Truthy(c) {
				parts = append(parts, js.Join(c))
			}
		}
	case sessions.TypeCustomMessage:
		parts = append(parts, js.Join(get("customType")))
		if c, ok := js.String(get("content")); ok {
			parts = append(parts, c)
		} else {
			parts = append(parts, b.Msg.Content.Prefix(contentPrefix))
		}
	case sessions.TypeBranchSummary:
		parts = append(parts, "branch summary", js.Join(get("summary")))
	case sessions.TypeSessionInfo:
		parts = append(parts, "title")
		if n := get("name"); js.Truthy(n) {
			parts = append(parts, js.Join(n))
		}
	case sessions.TypeModelChange:
		parts = append(parts, "model", js.Join(get("modelId")))
	case sessions.TypeThinking:
		parts = append(parts, "thinking", js.Join(get("thinkingLevel")))
	case sessions.TypeCustom:
		parts = append(parts, "custom", js.Join(get("customType")))
	case sessions.TypeContextEdit:
		rep := "replace"
		if js.IsNull(get("replacement")) {
			rep = "omit"
		}
		parts = append(parts, "context edit", rep, js.Join(get("targetId")))
	case sessions.TypeLabel:
		parts = append(parts, "label", js.Join(get("label")))
	}
	return parts, nil
}

// normalize is pi's: newlines and tabs become spaces, then trim.
func normalize(s string) string { return js.Trim(replaceNT(s)) }

func replaceNT(s string) string {
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
	}
	return s
}
