package web

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// sessionKey returns the :key path parameter (a session file's key), unescaped.
func sessionKey(c echo.Context) string {
	key := c.Param("key")
	if c.Request().URL.RawPath != "" {
		if u, err := url.PathUnescape(key); err == nil {
			return u
		}
	}
	return key
}

// view runs fn on the session with key, with an open reader, under the library's read lock.
func (s *Server) view(key string, fn func(ss *sessions.Session, r *sessions.Reader) error) error {
	return s.lib.View(key, func(ss *sessions.Session) error {
		r, err := ss.Open()
		if err != nil {
			return err
		}
		defer r.Close()
		return fn(ss, r)
	})
}

// session renders the session page: the tree around the selected entry and its conversation.
func (s *Server) session(c echo.Context) error {
	id := sessionKey(c)
	st, err := treeState(c)
	if err != nil {
		return err
	}
	tab := c.QueryParam("view")
	var v views.SessionView
	err = s.view(id, func(ss *sessions.Session, r *sessions.Reader) error {
		t, err := s.layout(ss, r, st)
		if err != nil {
			return err
		}
		hl := ""
		if t, st, hl, err = s.searchKeeping(ss, r, t, st); err != nil {
			return err
		}
		v = s.sessionHeader(id, ss)
		v.Highlight = hl
		if err := s.statsHeader(&v.Stats, ss, r); err != nil {
			return err
		}
		v.State, v.Note = t.state(st), t.note
		if hl != "" && v.Note == "" {
			v.Note = "pi's tree search does not find “" + hl + "” in the selected entry (it reads only the start of each entry), so the tree shows every row; the words are marked in the conversation."
		}
		v.ShowMap = tab == "map"
		if i, ok := resolve(ss, st.Target); ok && v.Note == "" && st.Target != "" {
			v.Note = targetNote(ss, i) // the entry asked for, not the visible row standing for it
		}
		v.Pane = "tree" // a phone opens on the tree, or on the conversation when the address names an entry
		if st.Target != "" || tab != "" && tab != "map" {
			v.Pane = "conv"
		}
		if v.Tree, err = t.around(r, id); err != nil {
			return err
		}
		if t.target >= 0 {
			pv, err := s.pathView(id, ss, r, st, t.target, tab, lastPage)
			if err != nil {
				return err
			}
			v.Conversation = &pv
		}
		v.Version = version(ss)
		return nil
	})
	if err != nil {
		return err
	}
	s.family(&v, id)
	return respond(c, views.SessionPage(v))
}

// searchKeeping lays the tree out again without its search when the
// search hides the entry the address selects (a hit of the full-text search
// in text pi's tree search does not read: tool output, the end of a long
// message), so the page opens at that entry. It returns the words to
// highlight in the conversation instead ("" when the search stays).
func (s *Server) searchKeeping(ss *sessions.Session, r *sessions.Reader, t *tree, st views.TreeState) (*tree, views.TreeState, string, error) {
	i, ok := resolve(ss, st.Target)
	if st.Search == "" || st.Target == "" || !ok || t.lay.RowOf(i) >= 0 {
		return t, st, "", nil
	}
	bare := st
	bare.Search = ""
	all, err := s.layout(ss, r, bare)
	if err != nil || all.lay.RowOf(i) < 0 {
		return t, st, "", err // hidden by the filter or a fold too: pi's nearest row, as always
	}
	return all, bare, st.Search, nil
}

// family fills in what the library knows of the session with key beside
// its own file: the file it is a copy of, the session it was forked from and
// the entry it left from, and the sessions forked from it. Called outside
// View: the library's lock is not taken twice.
func (s *Server) family(v *views.SessionView, key string) {
	m, err := s.lib.Meta(key)
	if err != nil {
		return
	}
	v.CopyOf = m.CopyOf
	if m.ParentKey != "" {
		if pm, err := s.lib.Meta(m.ParentKey); err == nil {
			v.ParentKey, v.ParentTitle, v.ParentFile = pm.Key, titleOf(pm.Name, pm.FirstMessage, 80), ""
			v.ParentAt = s.forkPoint(key, m.ParentKey)
		}
	}
	for _, c := range s.lib.List() {
		if c.ParentKey == key && c.Key != key {
			v.ChildForks = append(v.ChildForks, views.ForkLink{Key: c.Key, Title: titleOf(c.Name, c.FirstMessage, 60),
				At: s.forkPoint(c.Key, key)})
		}
	}
}

// forkPoint is the entry of session parent that session child was forked
// from: pi's fork copies the path to it with the ids kept, so it is the last
// of the child's first entries that the parent holds too ("" when none is).
func (s *Server) forkPoint(child, parent string) string {
	var ids []string
	_ = s.lib.View(child, func(cs *sessions.Session) error {
		for i := range cs.Entries {
			if cs.Entries[i].Type != sessions.TypeLabel { // labels are recreated with new ids
				ids = append(ids, cs.Entries[i].ID)
			}
		}
		return nil
	})
	at := ""
	_ = s.lib.View(parent, func(ps *sessions.Session) error {
		for _, id := range ids {
			if _, ok := ps.Lookup(id); !ok || id == "" {
				break
			}
			at = id
		}
		return nil
	})
	return at
}

// sessionHeader fills the page header from the session's summary.
func (s *Server) sessionHeader(key string, ss *sessions.Session) views.SessionView {
	m := ss.Meta()
	v := views.SessionView{ID: m.ID, Key: key, Name: m.Name, Title: titleOf(m.Name, m.FirstMessage, 120), Cwd: m.Cwd,
		File: m.File, Created: m.Created, ParentFile: m.ParentSession, Demo: s.opt.Demo,
		Stats: views.SessionStats{Entries: m.Entries, Messages: m.Messages, Leaves: m.Leaves, Tokens: m.Tokens,
			Cost: m.Cost, Models: m.Models}}
	for _, d := range ss.Diags {
		if d.Kind == sessions.DiagOldVersion {
			continue // said once, neutrally, as the file's format
		}
		if len(v.Diagnostics) == 50 {
			v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("… and %d more", ss.Problems()-50))
			break
		}
		v.Diagnostics = append(v.Diagnostics, d.String())
	}
	if ver := ss.Header.Version; ver != 3 {
		v.Format = ver
	}
	return v
}

// version identifies the state of a session's index (its generation); a
// live stream compares it with the page's.
func version(ss *sessions.Session) string {
	return strconv.FormatUint(ss.Gen(), 10)
}

// rows renders a page of tree rows after or before a row, or around an entry.
func (s *Server) rows(c echo.Context) error {
	id := sessionKey(c)
	st, err := treeState(c)
	if err != nil {
		return err
	}
	var w views.TreeWindow
	var ver, note string
	var open []string
	err = s.view(id, func(ss *sessions.Session, r *sessions.Reader) error {
		t, err := s.layout(ss, r, st)
		if err != nil {
			return err
		}
		ver, note, open = version(ss), t.note, t.state(st).Open
		w = views.TreeWindow{Key: id, Total: t.lay.Len(), Selected: -1}
		var start, end int
		switch {
		case c.QueryParam("row") != "": // a row anywhere (the minimap): the page around it
			k, err := strconv.Atoi(c.QueryParam("row"))
			if err != nil || k < 0 {
				return errBadRequest("Bad row.", err)
			}
			if w.Total == 0 {
				return nil
			}
			k = t.drawn(min(k, w.Total-1))
			start = t.spanBack(k, pageRows/2)
			end = t.span(start, pageRows)
			w.Before, w.After, w.Selected = start > 0, end < w.Total, t.lay.Pos(k)
		case c.QueryParam("after") != "":
			k, err := anchorRow(t, c.QueryParam("after"))
			if err != nil {
				return err
			}
			start = t.next(k) // past a closed run, whose other rows the page does not hold
			end = t.span(start, pageRows)
			w.After = end < w.Total
		case c.QueryParam("before") != "":
			k, err := anchorRow(t, c.QueryParam("before"))
			if err != nil {
				return err
			}
			end = t.drawn(k)
			start = t.spanBack(end, pageRows)
			w.Before = start > 0
		default:
			w, err = t.around(r, id)
			return err
		}
		w.First = start
		w.Rows, err = t.window(r, start, end)
		return err
	})
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("X-Tree-Total", strconv.Itoa(w.Total))
	h.Set("X-Tree-Selected", strconv.Itoa(w.Selected))
	h.Set("X-Tree-Version", ver)
	h.Set("X-Tree-First", strconv.Itoa(w.First))
	if note != "" {
		h.Set("X-Tree-Note", url.PathEscape(note)) // the entry named is gone: the rows are around the leaf
	}
	h.Set("X-Tree-Open", url.PathEscape(strings.Join(open, ","))) // with a run opened for the selected entry
	return respond(c, views.TreeRows(w))
}

// anchorRow finds the row of the entry at position p (a number from the page).
func anchorRow(t *tree, p string) (int, error) {
	pos, err := strconv.Atoi(p)
	if err != nil || pos < 0 || pos >= len(t.s.Entries) {
		return 0, errBadRequest("Bad row position.", err)
	}
	k := t.lay.RowOf(pos)
	if k < 0 {
		return 0, errStale()
	}
	return k, nil
}
