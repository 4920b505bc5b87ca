package sessions

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
		m := objOf(mustGet(o, "message"))
		if e.Role == "bashExecution" {
			raw = mustGet(m, "command")
			break
		}
		content, has := m.get("content")
		if !has {
			break
		}
		if text = fullContent(content); text == "" && e.Role == "assistant" {
			raw = mustGet(m, "errorMessage")
		}
	case TypeCustomMessage:
		text = fullContent(mustGet(o, "content"))
	case TypeCompaction, TypeBranchSummary:
		raw = mustGet(o, "summary")
	}
	if raw != nil {
		text, _ = jsonString(raw) // pi would fail on a value that is not a string
	}
	if trimJS(text) == "" {
		return "", false, nil
	}
	return text, true, nil
}

// fullContent is pi's extractFullContent: string content as it is, or the
// text blocks of an array joined with nothing between them.
func fullContent(raw []byte) string {
	if s, ok := jsonString(raw); ok {
		return s
	}
	if len(raw) == 0 || raw[0] != '[' {
		return ""
	}
	var b []byte
	fastElems(raw, func(el []byte) bool {
		blk := objOf(el)
		if ty, _ := jsonString(mustGet(blk, "type")); ty == "text" {
			b = append(b, jsStr(mustGet(blk, "text"))...)
		}
		return true
	})
	return string(b)
}
