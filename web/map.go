package web

import (
	"bytes"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/pitree"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/shape"
)

// mapHits is how many of a search's hits the map marks at most.
const mapHits = 100

// sessionMap answers GET /s/:key/map[?leaf=ID&select=ID&focus=ID&q=TEXT&filter=F]:
// the shape of the session's tree as SVG (package shape), the path to leaf
// standing out; with focus, the subtree of that entry drawn first (the
// detail a zoom asks for when the tree exceeds what the map draws at
// once); with q, the entries the tree's search finds (under filter) marked.
func (srv *Server) sessionMap(c echo.Context) error {
	key := sessionKey(c)
	var out bytes.Buffer
	err := srv.view(key, func(ss *sessions.Session, r *sessions.Reader) error {
		leaf, err := leafParam(key, ss, "leaf", c.QueryParam("leaf"))
		if err != nil {
			return err
		}
		sel := -1
		if ref := c.QueryParam("select"); ref != "" {
			if sel, err = leafParam(key, ss, "select", ref); err != nil {
				return err
			}
		}
		focus := -1
		if ref := c.QueryParam("focus"); ref != "" {
			if focus, err = leafParam(key, ss, "focus", ref); err != nil {
				return err
			}
		}
		var hits []int
		if st, err := treeState(c); err != nil {
			return err
		} else if st.Search != "" {
			l, err := pitree.New(ss, r, pitree.Options{Leaf: leaf, Filter: pitree.Filter(st.Filter), Search: st.Search,
				Index: srv.layouts.searchIndex(ss.File)})
			if err != nil {
				return err
			}
			for k := range min(l.Len(), mapHits) {
				hits = append(hits, l.Pos(k))
			}
		}
		seq := r.Sequential()
		_, err = shape.New(ss).Render(&out, shape.Options{Leaf: leaf, Select: sel, Focus: focus, Hits: hits, Text: func(pos int) string {
			if b, err := seq.Body(pos); err == nil {
				return entryPreview(b)
			}
			return ""
		}})
		return err
	})
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", out.Bytes())
}
