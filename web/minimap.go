package web

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/sessions"
)

// minimapBuckets is how many slices of the tree the minimap marks, at most:
// its size does not grow with the session.
const minimapBuckets = 400

// minimap answers GET /s/:key/minimap with the tree's state: a thin SVG
// strip the height of the tree pane, with a tick where the text tree has a
// branch point, a label, a compaction or summary, and pi's leaf, each kind
// in a column of its own (so they differ by place, not only colour).
func (srv *Server) minimap(c echo.Context) error {
	key := sessionKey(c)
	st, err := treeState(c)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	err = srv.view(key, func(ss *sessions.Session, r *sessions.Reader) error {
		t, err := srv.layout(ss, r, st)
		if err != nil {
			return err
		}
		n := t.lay.Len()
		const h = 1000.0
		fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" class="minimap-svg" viewBox="0 0 16 %d" preserveAspectRatio="none" data-rows="%d">`, int(h), n)
		if n == 0 {
			out.WriteString(`</svg>`)
			return nil
		}
		buckets := min(n, minimapBuckets)
		kinds := make([]uint8, buckets)
		for k := range n {
			pos := t.lay.Pos(k)
			e := &ss.Entries[pos]
			b := k * buckets / n
			if len(ss.Children(pos)) > 1 {
				kinds[b] |= 1
			}
			if ss.LabelOf(pos) != "" {
				kinds[b] |= 2
			}
			if e.Type == sessions.TypeCompaction || e.Type == sessions.TypeBranchSummary {
				kinds[b] |= 4
			}
		}
		bh := h / float64(buckets)
		for b, k := range kinds {
			y := float64(b) * bh
			for bit, x := range [3]int{0, 5, 11} {
				if k&(1<<bit) != 0 {
					cls := [3]string{"mm-fork", "mm-label", "mm-summary"}[bit]
					fmt.Fprintf(&out, `<rect class="%s" x="%d" y="%.1f" width="5" height="%.1f"/>`, cls, x, y, max(bh, 2))
				}
			}
		}
		if t.leafRow >= 0 {
			fmt.Fprintf(&out, `<rect class="mm-leaf" x="0" y="%.1f" width="16" height="3"/>`, float64(t.leafRow)*h/float64(n))
		}
		out.WriteString(`</svg>`)
		return nil
	})
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", out.Bytes())
}
