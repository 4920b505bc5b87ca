package web

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// BenchmarkOpenDeepHit opens a search hit far up a long path: the page of
// the 100,000-entry chain with an entry near its root selected
// (/s/KEY?target=ENTRY), as a click on the hit does.
func BenchmarkOpenDeepHit(b *testing.B) {
	chain, _ := sessiontest.ChainFile(b)
	root := b.TempDir()
	dir := filepath.Join(root, "--home-dev-chain--")
	os.MkdirAll(dir, 0o755)
	dst := filepath.Join(dir, filepath.Base(chain))
	in, err := os.Open(chain)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := os.Create(dst)
	io.Copy(out, in)
	in.Close()
	out.Close()
	lib := openLib(b, root)
	metas := lib.List()
	key := metas[0].Key
	var target string
	lib.View(key, func(s *sessions.Session) error {
		for i := 3; i < len(s.Entries); i++ {
			if s.Entries[i].Type == sessions.TypeMessage && s.Entries[i].Role == sessions.RoleUser {
				target = s.Entries[i].ID
				break
			}
		}
		return nil
	})
	url := "/s/" + key + "?target=" + target
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		srv := newServer(b, lib, nil).Handler() // no layout cached: the first open
		b.StartTimer()
		if rec := get(b, srv, url); rec.Code != 200 {
			b.Fatalf("%d", rec.Code)
		}
	}
}
