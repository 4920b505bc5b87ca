package sessions

import (
	"bytes"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
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
		m := objOf(mustGet(o, "message"))
		role := mustGet(m, "role")
		rs, isStr := jsonString(role)
		if isStr {
			rs = e.Role // as migrated: v2's hookMessage is custom
		}
		switch {
		case isStr && rs == "user":
			t = "user: " + normalize(extractContent(mustGet(m, "content")))
		case isStr && rs == "assistant":
			text := normalize(extractContent(mustGet(m, "content")))
			stop, _ := jsonString(mustGet(m, "stopReason"))
			errMsg := mustGet(m, "errorMessage")
			switch {
			case text != "":
				t = "assistant: " + text
			case stop == "aborted":
				t = "assistant: (aborted)"
			case truthy(errMsg):
				t = "assistant: " + utf16Prefix(normalize(jsStr(errMsg)), 80)
			default:
				t = "assistant: (no content)"
			}
		case isStr && rs == "toolResult":
			t, err = l.toolResult(r, pos, m)
			if err != nil {
				return "", err
			}
		case isStr && rs == "bashExecution":
			cmd := mustGet(m, "command")
			c := ""
			if len(cmd) > 0 && !isNull(cmd) {
				c = jsStr(cmd)
			}
			t = "[bash]: " + normalize(c)
		case isStr:
			t = "[" + rs + "]"
		default:
			t = "[" + jsStr(role) + "]"
		}
	case TypeCustomMessage:
		content := mustGet(o, "content")
		var c string
		if s, ok := jsonString(content); ok {
			c = s
		} else {
			var b strings.Builder
			fastElems(content, func(el []byte) bool {
				blk := objOf(el)
				if ty, _ := jsonString(mustGet(blk, "type")); ty == "text" {
					b.WriteString(jsJoin(mustGet(blk, "text")))
				}
				return true
			})
			c = b.String()
		}
		t = "[" + jsStr(mustGet(o, "customType")) + "]: " + normalize(c)
	case TypeCompaction:
		t = "[compaction: " + jsNum(jsRound(jsNumber(mustGet(o, "tokensBefore"))/1000)) + "k tokens]"
	case TypeBranchSummary:
		t = "[branch summary]: " + normalize(jsJoin(mustGet(o, "summary")))
	case TypeModelChange:
		t = "[model: " + jsStr(mustGet(o, "modelId")) + "]"
	case TypeThinking:
		t = "[thinking: " + jsStr(mustGet(o, "thinkingLevel")) + "]"
	case TypeCustom:
		t = "[custom: " + jsStr(mustGet(o, "customType")) + "]"
	case TypeContextEdit:
		rep := "replace"
		if isNull(mustGet(o, "replacement")) {
			rep = "omit"
		}
		t = "[context " + rep + ": " + jsStr(mustGet(o, "targetId")) + "]"
	case TypeLabel:
		lb := mustGet(o, "label")
		if len(lb) == 0 || isNull(lb) {
			t = "[label: (cleared)]"
		} else {
			t = "[label: " + jsStr(lb) + "]"
		}
	case TypeSessionInfo:
		if name := mustGet(o, "name"); truthy(name) {
			t = "[title: " + jsStr(name) + "]"
		} else {
			t = "[title: empty]"
		}
	}
	return capRunes(t, maxPreview), nil
}

// toolResult previews a tool result as its tool call, as pi does. pi keeps
// a session-wide map of tool call ids; piweb looks for the call among the
// nearest assistant ancestors, where pi writes it.
func (l *Layout) toolResult(r *Reader, pos int, m obj) (string, error) {
	if id, ok := jsonString(mustGet(m, "toolCallId")); ok && id != "" {
		seen := 0
		for a := l.s.parent[pos]; a >= 0 && seen < maxCallSearch; a = l.s.parent[a] {
			e := &l.s.Entries[a]
			if e.Type != TypeMessage || e.Role != "assistant" {
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
	name := mustGet(m, "toolName")
	if len(name) == 0 || isNull(name) {
		return "[tool]", nil
	}
	return "[" + jsStr(name) + "]", nil
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
	content := mustGet(objOf(mustGet(o, "message")), "content")
	fastElems(content, func(el []byte) bool {
		blk := objOf(el)
		if ty, _ := jsonString(mustGet(blk, "type")); ty != "toolCall" {
			return true
		}
		if id, ok := jsonString(mustGet(blk, "id")); ok && id != "" {
			calls[id] = formatToolCall(mustGet(blk, "name"), mustGet(blk, "arguments"), l.opt.Home)
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
	args := objOf(argsRaw)
	or := func(def string, keys ...string) string {
		for _, k := range keys {
			if v := mustGet(args, k); truthy(v) {
				return jsStr(v)
			}
		}
		return def
	}
	name, _ := jsonString(nameRaw)
	switch name {
	case "read":
		p := shortenHome(or("", "path", "file_path"), home)
		return "[read: " + p + readLineRange(mustGet(args, "offset"), mustGet(args, "limit")) + "]"
	case "write", "edit":
		return "[" + name + ": " + shortenHome(or("", "path", "file_path"), home) + "]"
	case "bash":
		raw := or("", "command")
		cmd := utf16Prefix(trimJS(replaceNT(raw)), 50)
		if utf16Len(raw) > 50 {
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
	js := "{}"
	if len(argsRaw) > 0 {
		js = jsStringify(argsRaw)
	}
	t := "[" + jsStr(nameRaw) + ": " + utf16Prefix(js, 40)
	if utf16Len(js) > 40 {
		t += "..."
	}
	return t + "]"
}

// readLineRange is pi's formatReadLineRange: ":start-end" from a read's offset and limit.
func readLineRange(offset, limit []byte) string {
	nullish := func(v []byte) bool { return len(v) == 0 || isNull(v) }
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
		return ":" + jsNum(start)
	}
	count, ok := lineNumber(limit)
	if !ok {
		return ""
	}
	end := start + count - 1
	if end == 0 || math.IsNaN(end) {
		return ":" + jsNum(start)
	}
	return ":" + jsNum(start) + "-" + jsNum(end)
}

// lineNumber is pi's parseLineNumber: a finite number or numeric string.
func lineNumber(v []byte) (float64, bool) {
	var f float64
	if s, ok := jsonString(v); ok {
		if trimJS(s) == "" {
			return 0, false
		}
		f = jsNumberString(s)
	} else if len(v) > 0 && (v[0] == '-' || isDigit(v[0])) {
		f = jsNumber(v)
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
	get := func(k string) []byte { return mustGet(o, k) }
	switch e.Type {
	case TypeMessage:
		m := objOf(get("message"))
		role := mustGet(m, "role")
		if _, ok := jsonString(role); ok {
			parts = append(parts, e.Role) // as migrated
		} else {
			parts = append(parts, jsJoin(role))
		}
		if c := mustGet(m, "content"); truthy(c) {
			parts = append(parts, extractContent(c))
		}
		if e.Role == "bashExecution" {
			if c := mustGet(m, "command"); truthy(c) {
				parts = append(parts, jsJoin(c))
			}
		}
	case TypeCustomMessage:
		parts = append(parts, jsJoin(get("customType")))
		if c, ok := jsonString(get("content")); ok {
			parts = append(parts, c)
		} else {
			parts = append(parts, extractContent(get("content")))
		}
	case TypeBranchSummary:
		parts = append(parts, "branch summary", jsJoin(get("summary")))
	case TypeSessionInfo:
		parts = append(parts, "title")
		if n := get("name"); truthy(n) {
			parts = append(parts, jsJoin(n))
		}
	case TypeModelChange:
		parts = append(parts, "model", jsJoin(get("modelId")))
	case TypeThinking:
		parts = append(parts, "thinking", jsJoin(get("thinkingLevel")))
	case TypeCustom:
		parts = append(parts, "custom", jsJoin(get("customType")))
	case TypeContextEdit:
		rep := "replace"
		if isNull(get("replacement")) {
			rep = "omit"
		}
		parts = append(parts, "context edit", rep, jsJoin(get("targetId")))
	case TypeLabel:
		parts = append(parts, "label", jsJoin(get("label")))
	}
	return parts, nil
}

// entryObj reads entry i's line as an object (empty for a non-object line).
func (r *Reader) entryObj(i int) (obj, error) {
	b, err := r.Raw(i)
	if err != nil {
		return nil, err
	}
	return objOf(b), nil
}

// objOf splits a raw JSON object into members without validating it again
// (lines were validated when indexed, and Raw checks they did not change); a
// repeated key keeps its first position and its last value, as JSON.parse
// does. Anything but an object gives an empty object.
func objOf(raw []byte) obj {
	var o obj
	fastMembers(raw, func(k, v []byte) { o.set(keyName(k), v) })
	return o
}

// extractContent is pi's extractContent: the text of string or block
// content, cut to 200 UTF-16 units. Only that much of the text is decoded.
func extractContent(raw []byte) string {
	const n = 200
	if len(raw) > 0 && raw[0] == '"' {
		return utf16Prefix(jsonPrefix(raw, n), n)
	}
	var b strings.Builder
	units := 0
	fastElems(raw, func(el []byte) bool {
		blk := objOf(el)
		if ty, _ := jsonString(mustGet(blk, "type")); ty == "text" {
			var t string
			if text := mustGet(blk, "text"); len(text) > 0 && text[0] == '"' {
				t = jsonPrefix(text, n-units)
			} else {
				t = jsStr(text)
			}
			b.WriteString(t)
			units += utf16Len(t)
		}
		return units < n // the rest would be cut anyway
	})
	return utf16Prefix(b.String(), n)
}

// jsonPrefix decodes a raw JSON string until it holds at least n UTF-16
// units (or ends). A lone surrogate escape becomes U+FFFD.
func jsonPrefix(raw []byte, n int) string {
	if len(raw) < 2 || raw[0] != '"' || n <= 0 {
		return ""
	}
	in := raw[1:]
	// The common case: no escape soon. 3n bytes of UTF-8 hold at least n units.
	lim := min(len(in), 3*n)
	switch k := bytes.IndexAny(in[:lim], "\\\""); {
	case k >= 0 && in[k] == '"':
		return string(in[:k])
	case k < 0 && lim == 3*n:
		p := in[:lim]
		j := len(p) - 1 // drop a rune cut in half
		for j > 0 && len(p)-j < utf8.UTFMax && !utf8.RuneStart(p[j]) {
			j--
		}
		if !utf8.FullRune(p[j:]) {
			p = p[:j]
		}
		return string(p)
	}
	var b strings.Builder
	units := 0
	for i := 0; i < len(in) && units < n; {
		c := in[i]
		if c == '"' {
			break
		}
		if c != '\\' {
			r, size := utf8.DecodeRune(in[i:])
			b.WriteRune(r)
			units += runeUnits(r)
			i += size
			continue
		}
		if i+1 >= len(in) {
			break
		}
		var r rune
		switch e := in[i+1]; e {
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			v, ok := hex4(in, i+2)
			if !ok {
				return b.String()
			}
			r = rune(v)
			i += 6
			if utf16.IsSurrogate(r) {
				lo, ok := hex4(in, i+2)
				if r < 0xDC00 && ok && in[i] == '\\' && in[i+1] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
					r = utf16.DecodeRune(r, rune(lo))
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
			units += runeUnits(r)
			continue
		default:
			r = rune(e)
		}
		b.WriteRune(r)
		units++
		i += 2
	}
	return b.String()
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (uint64, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(unsafeString(b[i:i+4]), 16, 32)
	return v, err == nil
}

func runeUnits(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// hasText is pi's hasTextContent: string or block content with a text that is not blank.
func hasText(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		return !blankString(raw)
	}
	if raw[0] != '[' {
		return false
	}
	found := false
	fastElems(raw, func(el []byte) bool {
		if len(el) == 0 || el[0] != '{' {
			return true
		}
		var typ, text []byte
		fastMembers(el, func(k, v []byte) {
			switch {
			case keyIs(k, "type"):
				typ = v
			case keyIs(k, "text"):
				text = v
			}
		})
		if string(typ) == `"text"` || (hasBackslash(typ) && str(typ) == "text") {
			if len(text) > 0 && text[0] == '"' && !blankString(text) {
				found = true
			}
		}
		return !found
	})
	return found
}

// blankString reports whether a raw JSON string holds only JavaScript whitespace.
func blankString(raw []byte) bool {
	if len(raw) < 2 {
		return true
	}
	in := raw[1 : len(raw)-1]
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '\\':
			if i+1 >= len(in) {
				return false
			}
			switch in[i+1] {
			case 'n', 't', 'r', 'f':
				i += 2
			case 'u':
				if i+6 > len(in) {
					return false
				}
				v, err := strconv.ParseUint(string(in[i+2:i+6]), 16, 32)
				if err != nil || !isJSSpace(rune(v)) {
					return false
				}
				i += 6
			default:
				return false
			}
		case c < utf8.RuneSelf:
			if !isJSSpace(rune(c)) {
				return false
			}
			i++
		default:
			r, n := utf8.DecodeRune(in[i:])
			if !isJSSpace(r) {
				return false
			}
			i += n
		}
	}
	return true
}

// isJSSpace reports whether r is whitespace to JavaScript (\s, trim).
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// fastElems calls fn with each element of a raw JSON array until fn
// returns false; anything else calls nothing. It does not validate: strings
// are skipped with bytes.IndexByte. On invalid input it stops early rather
// than failing.
func fastElems(raw []byte, fn func(el []byte) bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return
	}
	i := skipWS(raw, 1)
	for i < len(raw) && raw[i] != ']' {
		end := skipFast(raw, i)
		if end <= i || !fn(raw[i:end]) {
			return
		}
		i = skipWS(raw, end)
		if i >= len(raw) || raw[i] != ',' {
			return
		}
		i = skipWS(raw, i+1)
	}
}

// fastMembers calls fn with each raw key (quoted) and value of a raw JSON
// object, as fastElems does for arrays.
func fastMembers(raw []byte, fn func(k, v []byte)) {
	if len(raw) == 0 || raw[0] != '{' {
		return
	}
	i := skipWS(raw, 1)
	for i < len(raw) && raw[i] == '"' {
		ke := skipString(raw, i)
		if ke-i < 2 || raw[ke-1] != '"' {
			return
		}
		j := skipWS(raw, ke)
		if j >= len(raw) || raw[j] != ':' {
			return
		}
		vs := skipWS(raw, j+1)
		ve := skipFast(raw, vs)
		if ve <= vs {
			return
		}
		fn(raw[i:ke], raw[vs:ve])
		i = skipWS(raw, ve)
		if i >= len(raw) || raw[i] != ',' {
			return
		}
		i = skipWS(raw, i+1)
	}
}

// skipFast returns the index just past the valid JSON value at b[i].
func skipFast(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i].
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// normalize is pi's: newlines and tabs become spaces, then trim.
func normalize(s string) string { return trimJS(replaceNT(s)) }

func replaceNT(s string) string {
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
	}
	return s
}

// utf16Len is JavaScript's String length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// utf16Prefix is JavaScript's s.slice(0, n). A surrogate pair cut in half
// leaves a lone surrogate, which Node prints as U+FFFD.
func utf16Prefix(s string, n int) string {
	units := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			if units < n {
				return s[:i] + "\uFFFD"
			}
			return s[:i]
		}
		units += w
	}
	return s
}

// capRunes cuts s to at most n runes.
func capRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	k := 0
	for i := range s {
		if k == n {
			return s[:i]
		}
		k++
	}
	return s
}

// jsStr converts a raw JSON value as JavaScript's String() and template
// literals do; an absent value (nil) is "undefined".
func jsStr(raw []byte) string {
	if len(raw) == 0 {
		return "undefined"
	}
	switch raw[0] {
	case '"':
		s, _ := jsonString(raw)
		return s
	case '{':
		return "[object Object]"
	case '[':
		return jsArray(raw)
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	return jsNum(jsNumber(raw))
}

// jsJoin converts a value as Array.prototype.join does: null and undefined are "".
func jsJoin(raw []byte) string {
	if len(raw) == 0 || isNull(raw) {
		return ""
	}
	return jsStr(raw)
}

// jsArray is Array.prototype.toString: elements (nested arrays flattened)
// joined by commas, null as "".
func jsArray(raw []byte) string {
	var b strings.Builder
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '[' || c == ']' || isWS(c):
			i++
		case c == ',':
			b.WriteByte(',')
			i++
		default:
			end := max(skipFast(raw, i), i+1)
			if v := raw[i:end]; !isNull(v) {
				b.WriteString(jsStr(v))
			}
			i = end
		}
	}
	return b.String()
}

// jsNumber is JavaScript's Number() of a raw JSON value; absent is NaN.
func jsNumber(raw []byte) float64 {
	if len(raw) == 0 {
		return math.NaN()
	}
	switch raw[0] {
	case 'n', 'f':
		return 0
	case 't':
		return 1
	case '{':
		return math.NaN()
	case '"', '[':
		return jsNumberString(jsStr(raw))
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}

// jsNumberString is JavaScript's Number() of a string.
func jsNumberString(s string) float64 {
	s = trimJS(s)
	if s == "" {
		return 0
	}
	switch s {
	case "Infinity", "+Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			v, err := strconv.ParseUint(s[2:], base, 64)
			if err != nil || strings.Contains(s, "_") {
				return math.NaN()
			}
			return float64(v)
		}
	}
	// A decimal literal: digits, one dot, an exponent; nothing Go-specific.
	digits, dot, exp := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			digits = true
		case c == '.' && !dot && !exp:
			dot = true
		case (c == 'e' || c == 'E') && digits && !exp:
			exp = true
			digits = false
			if i+1 < len(s) && (s[i+1] == '+' || s[i+1] == '-') {
				i++
			}
		case (c == '+' || c == '-') && i == 0:
		default:
			return math.NaN()
		}
	}
	if !digits {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}

// jsRound is Math.round: halves round up.
func jsRound(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	f := math.Floor(x)
	if x-f >= 0.5 {
		return f + 1
	}
	return f
}

// jsNum formats a number as JavaScript's String(number) does.
func jsNum(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. 1.5e-07
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + string(sign) + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// jsStringify re-serialises a valid raw JSON value as JSON.stringify would
// print it after JSON.parse: no whitespace, JavaScript's string escapes and
// number formatting.
func jsStringify(raw []byte) string {
	var b strings.Builder
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case isWS(c):
			i++
		case c == '"':
			end := skipString(raw, i)
			s, _ := jsonString(raw[i:end])
			jsQuote(&b, s)
			i = end
		case c == '-' || isDigit(c):
			end := max(skipFast(raw, i), i+1)
			f := jsNumber(raw[i:end])
			if math.IsInf(f, 0) {
				b.WriteString("null")
			} else {
				b.WriteString(jsNum(f))
			}
			i = end
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// jsQuote writes s quoted as JSON.stringify does.
func jsQuote(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&15])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
