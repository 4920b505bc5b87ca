package sessions

import (
	"github.com/piweb/piweb/internal/js"
)

// CopyText returns what pi's /tree copies for entry i (its ctrl+x): a
// message's text (a bash command for a bashExecution; an assistant's error
// message when it has no text), a custom message's text, or a compaction's
// or branch summary's summary. ok is false when pi has nothing to copy.
func (r *Reader) CopyText(i int) (text string, ok bool, err error) {
	switch r.s.Entries[i].Type {
	case TypeMessage, TypeCustomMessage, TypeCompaction, TypeBranchSummary:
	default:
		return "", false, nil
	}
	b, err := r.Body(i)
	if err != nil {
		return "", false, err
	}
	if text = b.CopyText(); js.Trim(text) == "" {
		return "", false, nil
	}
	return text, true, nil
}

// CopyText is what pi's /tree copies for the entry, before pi checks it is not blank.
func (b *Body) CopyText() string {
	var raw []byte // a value pi copies as it is (pi would fail on one that is not a string)
	switch b.Entry.Type {
	case TypeMessage:
		m := b.Msg
		if m.Role == RoleBash {
			raw = m.Obj.Val("command")
			break
		}
		if m.Content.Raw() == nil {
			return ""
		}
		if text := m.Content.FullText(); text != "" || m.Role != RoleAssistant {
			return text
		}
		raw = m.Obj.Val("errorMessage")
	case TypeCustomMessage:
		return b.Msg.Content.FullText()
	case TypeCompaction, TypeBranchSummary:
		raw = b.Obj.Val("summary")
	}
	s, _ := js.String(raw)
	return s
}
