package web

import (
	"bytes"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/shape"
	"github.com/piweb/piweb/views"
)

// familySVG answers GET /s/:key/family.svg: the lineage of the session's
// family of forks (its first ancestor in the root and every fork below it).
func (srv *Server) familySVG(c echo.Context) error {
	key := sessionKey(c)
	m, err := srv.lib.Meta(key)
	if err != nil {
		return err
	}
	metas := srv.lib.List()
	byKey := map[string]int{}
	for i := range metas {
		byKey[metas[i].Key] = i
	}
	top := key
	for steps := 0; steps < len(metas); steps++ { // up to the first ancestor in the root (no loop on hand-made cycles)
		p := metas[byKey[top]].ParentKey
		if p == "" || p == top {
			break
		}
		if _, ok := byKey[p]; !ok {
			break
		}
		top = p
	}
	kids := map[string][]string{}
	for _, x := range metas {
		if x.ParentKey != "" && x.ParentKey != x.Key {
			kids[x.ParentKey] = append(kids[x.ParentKey], x.Key)
		}
	}
	var fam shape.Family
	index := map[string]int{}
	type item struct {
		key    string
		parent int
	}
	stack := []item{{top, -1}}
	for len(stack) > 0 && len(fam) < 500 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, seen := index[it.key]; seen {
			continue
		}
		x := metas[byKey[it.key]]
		mb := shape.Member{Key: x.Key, Title: titleOf(x.Name, x.FirstMessage, 200), Href: views.SessionURL(x.Key), Parent: it.parent, Current: x.Key == key}
		if it.parent >= 0 {
			parentKey := fam[it.parent].Key
			if at := srv.forkPoint(x.Key, parentKey); at != "" {
				mb.At, mb.AtHref = at, views.SessionURL(parentKey)+"?target="+url.QueryEscape(at)
			}
		}
		if it.parent < 0 && x.ParentSession != "" && x.ParentKey == "" {
			fam = append(fam, shape.Member{Title: x.ParentSession, Parent: -1, Gone: "forked from a file that is gone or outside the root"})
			mb.Parent = 0
		}
		index[x.Key] = len(fam)
		fam = append(fam, mb)
		ks := kids[x.Key]
		for j := len(ks) - 1; j >= 0; j-- {
			stack = append(stack, item{ks[j], index[x.Key]})
		}
	}
	_ = m
	var out bytes.Buffer
	if err := fam.Render(&out); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", out.Bytes())
}
