package sessions

import "github.com/piweb/piweb/internal/js"

// CopyText returns what pi's /tree copies for entry i (its ctrl+x): a
// message's text (a bash command for a bashExecution; an assistant's error
// message when it has no text), a custom message's text, or a compaction's
// or branch summary's summary. ok is false when pi has nothing to copy.
func (r *Reader) CopyText(i int) (text string, ok bool, err error) {
	e := &r.s.Entries[i]
	var raw []byte // the value pi copies, before it checks it is not blank
	switch e.Type {
	case TypeMessage, TypeCustomMessage, TypeCompaction, TypeBranchSummary:
	default:
		return "", false, nil
	}
	o, err := r.entryObj(i)
	if err != nil {
		return "", false, err
	}
	switch e.Type {
	case TypeMessage:
		m := js.ObjectOf(o.Val("message"))
		if e.Role == "bashExecution" {
			raw = m.Val("command")
			break
		}
		content, has := m.Get("content")
		if !has {
			break
		}
		if text = fullContent(content); text == "" && e.Role == "assistant" {
			raw = m.Val("errorMessage")
		}
	case TypeCustomMessage:
		text = fullContent(o.Val("content"))
	case TypeCompaction, TypeBranchSummary:
		raw = o.Val("summary")
	}
	if raw != nil {
		text, _ = js.String(raw) // pi would fail on a value that is not a string
	}
	if js.Trim(text) == "" {
		return "", false, nil
	}
	return text, true, nil
}

// fullContent is pi's extractFullContent: string content as it is, or the
// text blocks of an array joined with nothing between them.
func fullContent(raw []byte) string {
	if s, ok := js.String(raw); ok {
		return s
	}
	if len(raw) == 0 || raw[0] != '[' {
		return ""
	}
	var b []byte
	js.Elems(raw, func(el []byte) bool {
		blk := js.ObjectOf(el)
		if ty, _ := js.String(blk.Val("type")); ty == "text" {
			b = append(b, js.ToString(blk.Val("text"))...)
		}
		return true
	})
	return string(b)
}
