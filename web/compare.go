package web

import (
	"bytes"
	"cmp"
	"hash/fnv"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// turnsPerPage is how many turns of each side the comparison page shows at once.
const turnsPerPage = 20

// comparePage renders GET /s/:key/compare?a=ID&b=ID[&from=K]: where two
// entries' paths part, what each side did from there, and the two sides'
// turns side by side. Without both entries it helps pick them.
func (srv *Server) comparePage(c echo.Context) error {
	key := sessionKey(c)
	from, _ := strconv.Atoi(c.QueryParam("from"))
	from = max(from, 0)
	a, b := c.QueryParam("a"), c.QueryParam("b")
	if a == "" || b == "" {
		var v views.ComparePickView
		err := srv.view(key, func(ss *sessions.Session, r *sessions.Reader) error {
			var err error
			v, err = srv.comparePick(key, ss, r, cmp.Or(a, b))
			return err
		})
		if err != nil {
			return err
		}
		return respond(c, views.ComparePickPage(v))
	}
	var v views.CompareView
	err := srv.view(key, func(ss *sessions.Session, r *sessions.Reader) error {
		cm, err := srv.compare(key, ss, r, c.QueryParam("a"), c.QueryParam("b"))
		if err != nil {
			return err
		}
		v, err = srv.compareView(key, ss, r, cm, from)
		return err
	})
	if err != nil {
		return err
	}
	return respond(c, views.ComparePage(v))
}

// compareView builds the comparison page.
func (srv *Server) compareView(key string, ss *sessions.Session, r *sessions.Reader, cm *comparison, from int) (views.CompareView, error) {
	m := ss.Meta()
	b := &builder{md: srv.md, s: ss, key: key, home: srv.opt.Home, clip: true}
	v := views.CompareView{Key: key, Title: titleOf(m.Name, m.FirstMessage, 120), SessionURL: views.SessionURL(key),
		From: from, Demo: srv.opt.Demo}
	ra, rb := ref(ss, cm.a), ref(ss, cm.b)
	v.SwapURL = views.SessionURL(key) + "/compare?a=" + url.QueryEscape(rb) + "&b=" + url.QueryEscape(ra)
	sides := [2][]int{cm.fork.A, cm.fork.B}
	for k, pos := range [2]int{cm.a, cm.b} {
		side := views.CompareSide{Ref: ref(ss, pos), URL: views.SessionURL(key) + "?target=" + url.QueryEscape(ref(ss, pos)),
			Totals: totalsView(cm.totals[k]), Turns: cm.totals[k].UserMessages, Files: len(cm.changes[k].Files)}
		if body, err := r.Body(pos); err == nil {
			side.Text = oneLine(entryPreview(body), 100)
		}
		side.Duration = span(ss, sides[k])
		if k == 0 {
			v.A = side
		} else {
			v.B = side
		}
	}
	if anc := cm.fork.Ancestor; anc >= 0 {
		info := b.info(anc)
		v.Ancestor = &info
		v.AncestorURL = views.SessionURL(key) + "?target=" + url.QueryEscape(info.Ref)
		if body, err := r.Body(anc); err == nil {
			v.AncestorText = oneLine(entryPreview(body), 100)
		}
	}
	switch {
	case len(cm.fork.A) == 0 && len(cm.fork.B) == 0:
		v.Relation = "same"
	case len(cm.fork.A) == 0:
		v.Relation = "a-ancestor"
	case len(cm.fork.B) == 0:
		v.Relation = "b-ancestor"
	}
	// Files: only in A, only in B, both.
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, f := range cm.changes[0].Files {
		inA[f.Path] = true
	}
	for _, f := range cm.changes[1].Files {
		inB[f.Path] = true
	}
	sideOf := func(p string, own string) string {
		if inA[p] && inB[p] {
			return "both"
		}
		return own
	}
	for _, f := range cm.changes[0].Files {
		if inB[f.Path] {
			v.FilesBoth = append(v.FilesBoth, f.Path)
		} else {
			v.FilesOnlyA = append(v.FilesOnlyA, f.Path)
		}
		v.FilesA = append(v.FilesA, fileView(key, ss, f, sideOf(f.Path, "a")))
	}
	for _, f := range cm.changes[1].Files {
		if !inA[f.Path] {
			v.FilesOnlyB = append(v.FilesOnlyB, f.Path)
		}
		v.FilesB = append(v.FilesB, fileView(key, ss, f, sideOf(f.Path, "b")))
	}
	// Turns, aligned by their number from the fork.
	ta, tb := turns(ss, cm.fork.A), turns(ss, cm.fork.B)
	v.TotalTurns = max(len(ta), len(tb))
	end := min(from+turnsPerPage, v.TotalTurns)
	for k := from; k < end; k++ {
		if k == 0 && len(ta[0]) == 0 && len(tb[0]) == 0 {
			continue
		}
		pair := views.TurnPair{K: k}
		var sa, sb uint64
		var err error
		if k < len(ta) {
			if pair.A, err = b.pathItems(r, ta[k]); err != nil {
				return v, err
			}
			if sa, err = turnSig(r, ta[k]); err != nil {
				return v, err
			}
		}
		if k < len(tb) {
			if pair.B, err = b.pathItems(r, tb[k]); err != nil {
				return v, err
			}
			if sb, err = turnSig(r, tb[k]); err != nil {
				return v, err
			}
		}
		pair.Same = k < len(ta) && k < len(tb) && sa == sb
		v.Turns = append(v.Turns, pair)
	}
	if end < v.TotalTurns {
		v.MoreURL = views.SessionURL(key) + "/compare?a=" + url.QueryEscape(ra) + "&b=" + url.QueryEscape(rb) + "&from=" + strconv.Itoa(end)
	}
	return v, nil
}

// turns splits a side's entries into turns: turn 0 holds what comes before
// the first user message (often nothing), and each user message starts the
// next, so the two sides' turns line up by number.
func turns(ss *sessions.Session, pos []int) [][]int {
	out := [][]int{nil}
	for _, p := range pos {
		e := &ss.Entries[p]
		if e.Type == sessions.TypeMessage && e.Role == sessions.RoleUser {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], p)
	}
	return out
}

// turnSig is a hash of what a turn says: each entry's type and its message
// without ids, times, usage or signatures, so a turn pi ran again with the
// same result reads as identical.
func turnSig(r *sessions.Reader, pos []int) (uint64, error) {
	h := fnv.New64a()
	for _, p := range pos {
		body, err := r.Body(p)
		if err != nil {
			return 0, err
		}
		e := body.Entry
		h.Write([]byte(e.Type))
		h.Write([]byte{0})
		var says [7][]byte
		if m := body.Msg; e.Type == sessions.TypeMessage {
			failed := ""
			if m.IsError {
				failed = "1"
			}
			content := bytes.Join(bytes.Fields(m.Content.Unsigned()), nil)
			says = [7][]byte{[]byte(m.Role), content, []byte(m.ToolName), []byte(failed), []byte(m.Command), []byte(m.Output), []byte(m.Summary)}
		}
		for _, v := range says {
			h.Write(v)
			h.Write([]byte{0})
		}
		if e.Type != sessions.TypeMessage {
			h.Write([]byte(e.Text))
		}
	}
	return h.Sum64(), nil
}

// span is how long a side ran: from its first entry to its last, as text.
func span(ss *sessions.Session, pos []int) string {
	if len(pos) == 0 {
		return ""
	}
	first, last := ss.Entries[pos[0]].Time, ss.Entries[pos[len(pos)-1]].Time
	if first == sessions.NoTime || last == sessions.NoTime || last < first {
		return ""
	}
	return views.Duration(time.Duration(last-first) * time.Millisecond)
}
