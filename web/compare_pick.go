package web

import (
	"net/url"
	"slices"

	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// pickTips is how many branch tips the compare picker lists, newest first.
const pickTips = 60

// comparePick builds the page /s/KEY/compare shows without both a and b:
// the session's branch tips, each with the first user message of its own
// branch, what its path cost and its length, to pick A and B from. The
// entry named by a, when there is one, is A.
func (srv *Server) comparePick(key string, ss *sessions.Session, r *sessions.Reader, a string) (views.ComparePickView, error) {
	v := views.ComparePickView{Key: key, Title: titleOf(ss.Meta().Name, ss.Meta().FirstMessage, 120),
		SessionURL: views.SessionURL(key), Demo: srv.opt.Demo, Action: views.SessionURL(key) + "/compare"}
	l, err := srv.ledger(ss, r)
	if err != nil {
		return v, err
	}
	// Tips: entries without children, read as the entry a reader would
	// name (a label or a setting at a branch's end stands for the message
	// before it), newest first.
	seen := map[int]bool{}
	var tips []int
	for i := len(ss.Entries) - 1; i >= 0; i-- {
		if len(ss.Children(i)) > 0 {
			continue
		}
		t := tipOf(ss, i)
		if t >= 0 && !seen[t] {
			seen[t] = true
			tips = append(tips, t)
		}
	}
	v.More = max(0, len(tips)-pickTips)
	tips = tips[:min(len(tips), pickTips)]
	resume := -1
	if pl := ss.Leaf(); pl >= 0 {
		resume = tipOf(ss, pl)
	}
	if i, ok := resolve(ss, a); ok && a != "" {
		if !seen[i] {
			tips = append([]int{i}, tips...) // the entry asked for, wherever it is
		}
		v.A = ref(ss, i)
	}
	for _, t := range tips {
		path := ss.Path(t)
		tip := views.PickTip{Ref: ref(ss, t), Depth: len(path), Resume: t == resume, Time: entryTime(&ss.Entries[t]),
			URL: views.SessionURL(key) + "?target=" + url.QueryEscape(ref(ss, t))}
		tip.Cost = l.Sum(ss, path).Cost
		if first := branchFirst(ss, path); first >= 0 {
			if b, err := r.Body(first); err == nil {
				tip.First = oneLine(plainPreview(entryPreview(b)), 140)
			}
		}
		if b, err := r.Body(t); err == nil {
			tip.Text = oneLine(plainPreview(entryPreview(b)), 100)
		}
		tip.Kind = entryKind(&ss.Entries[t])
		v.Tips = append(v.Tips, tip)
	}
	// A: the entry asked for, else where pi resumes; B: the newest other tip.
	if v.A == "" && len(v.Tips) > 0 {
		v.A = v.Tips[0].Ref
		for _, t := range v.Tips {
			if t.Resume {
				v.A = t.Ref
			}
		}
	}
	for _, t := range v.Tips {
		if t.Ref != v.A {
			v.B = t.Ref
			break
		}
	}
	return v, nil
}

// tipOf is the entry that stands for the branch ending at leaf i: the
// nearest message, compaction or summary at or above it (-1 for none).
func tipOf(ss *sessions.Session, i int) int {
	for ; i >= 0; i = ss.Parent(i) {
		switch ss.Entries[i].Type {
		case sessions.TypeMessage, sessions.TypeCustomMessage, sessions.TypeCompaction, sessions.TypeBranchSummary:
			return i
		}
	}
	return -1
}

// branchFirst is the first user message of a path's own branch: after its
// last branch point, else the path's last user message; -1 for none.
func branchFirst(ss *sessions.Session, path []int) int {
	start := 0
	for k := len(path) - 2; k >= 0; k-- {
		if len(ss.Children(path[k])) > 1 {
			start = k + 1
			break
		}
	}
	isUser := func(i int) bool {
		e := &ss.Entries[i]
		return e.Type == sessions.TypeMessage && e.Role == sessions.RoleUser
	}
	if k := slices.IndexFunc(path[start:], isUser); k >= 0 {
		return path[start+k]
	}
	for k := start - 1; k >= 0; k-- {
		if isUser(path[k]) {
			return path[k]
		}
	}
	return -1
}
