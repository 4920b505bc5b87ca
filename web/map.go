package web

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/pitree"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/shape"
	"github.com/piweb/piweb/views"
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
		leaf, err := leafParam(key, ss, c.QueryParam("leaf"))
		if err != nil {
			return err
		}
		sel := -1
		if ref := c.QueryParam("select"); ref != "" {
			if sel, err = leafParam(key, ss, ref); err != nil {
				return err
			}
		}
		focus := -1
		if ref := c.QueryParam("focus"); ref != "" {
			if focus, err = leafParam(key, ss, ref); err != nil {
				return err
			}
		}
		var hits []int
		if st, err := treeState(c); err != nil {
			return err
		} else if st.Search != "" {
			x := srv.layouts.searchIndex(ss.File)
			l, err := pitree.New(ss, r, pitree.Options{Leaf: leaf, Filter: pitree.Filter(st.Filter), Search: st.Search, Index: x})
			if err != nil {
				return err
			}
			srv.layouts.searched(ss.File, x)
			for k := range min(l.Len(), mapHits) {
				hits = append(hits, l.Pos(k))
			}
		}
		seq := r.Sequential()
		defer seq.Close()
		_, err = shape.New(ss).Render(&out, shape.Options{Leaf: leaf, Select: sel, Focus: focus, Hits: hits, Text: func(pos int) string {
			if b, err := seq.Body(pos); err == nil {
				return mapText(b)
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

// mapText says in words what a run of the map begins with (its first user
// message, else its first entry), for the text shown on hovering it: a
// message's words, or what a setting, summary or tool did; never an
// entry's JSON.
func mapText(b *sessions.Body) string {
	e := b.Entry
	if e.Flags.Has(sessions.FlagNotObject) {
		return fmt.Sprintf("line %d is not a JSON object", e.Line)
	}
	switch e.Type {
	case sessions.TypeMessage:
		return messageText(b.Msg)
	case sessions.TypeCustomMessage:
		return "message from an extension (" + b.CustomType + "): " + b.Msg.Content.Prefix(300)
	case sessions.TypeCompaction:
		return "compaction of " + views.Tokens(int64(b.TokensBefore)) + " tokens: " + b.Summary
	case sessions.TypeBranchSummary:
		return "summary of an abandoned branch: " + b.Summary
	case sessions.TypeModelChange:
		return "model changed to " + strings.Trim(b.Provider+"/"+b.ModelID, "/")
	case sessions.TypeThinking:
		return "thinking level set to " + b.Level
	case sessions.TypeLabel:
		if e.Flags.Has(sessions.FlagLabelSet) {
			return "label “" + e.Text + "” set on " + e.Target
		}
		return "label cleared on " + e.Target
	case sessions.TypeSessionInfo:
		return "session named “" + b.Name + "”"
	case sessions.TypeCustom:
		return "data kept by an extension (" + b.CustomType + ")"
	case sessions.TypeContextEdit:
		if e.Flags.Has(sessions.FlagEditDrop) {
			return "context edit: " + e.Target + " left out of the model's context"
		}
		return "context edit: " + e.Target + " replaced in the model's context"
	case sessions.TypeUsage:
		return "usage of " + views.Tokens(e.Tokens) + " tokens, " + views.Cost(e.Cost)
	}
	return "an entry of a type piweb does not know (" + e.Type + ")"
}

// messageText is mapText for a message.
func messageText(m *sessions.Message) string {
	switch m.Role {
	case sessions.RoleUser:
		return "user: " + m.Content.Prefix(300)
	case sessions.RoleAssistant:
		if t := m.Content.Prefix(300); strings.TrimSpace(t) != "" {
			return "assistant: " + t
		}
		var tools []string
		for _, bl := range m.Content.Blocks() {
			if bl.Type == sessions.BlockToolCall && len(tools) < 4 {
				tools = append(tools, bl.Name)
			}
		}
		switch {
		case len(tools) > 0:
			return "assistant ran " + strings.Join(tools, ", ")
		case m.ErrorMessage != "":
			return "assistant stopped: " + m.ErrorMessage
		}
		return "assistant (no text)"
	case sessions.RoleToolResult:
		return "output of " + m.ToolName + ": " + m.Content.Prefix(300)
	case sessions.RoleBash:
		return "$ " + m.Command
	case sessions.RoleBranchSummary, sessions.RoleCompactionSummary:
		return "summary: " + m.Summary
	}
	return m.Role + " message: " + m.Content.Prefix(300)
}
