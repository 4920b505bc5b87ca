package web

import (
	"net/http"
	"net/url"
	"testing"
)

// BenchmarkLongPath: the conversation pane at the leaf of the 100k chain:
// its last page, its model context tab, and its first page (the root, as
// "go to the start" asks for it).
func BenchmarkLongPath(b *testing.B) {
	rig := newLiveRig(b, true)
	for _, c := range []struct{ name, query string }{
		{"conversation", ""},
		{"context", "&view=context"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				res, err := http.Get(rig.url + "/s/" + url.PathEscape(rig.key) + "/entry?e=" + rig.leaf + c.query)
				if err != nil || res.StatusCode != 200 {
					b.Fatalf("%v %v", err, res.Status)
				}
				res.Body.Close()
			}
		})
	}
}
