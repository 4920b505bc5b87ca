// Package static embeds piweb's browser assets (CSS, JS, vendored htmx) and
// the demo sessions.
package static

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
)

//go:embed css js vendor img
var assets embed.FS

//go:embed demo/*/*.jsonl
var demo embed.FS

// Prefix is the URL path the assets are served under.
const Prefix = "/static/"

// sums returns each asset's content hash (its first 12 hex digits),
// computed on first use rather than when a program starts.
var sums = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	err := fs.WalkDir(assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		m[p] = hex.EncodeToString(h[:])[:12]
		return nil
	})
	if err != nil {
		panic(err) // embedded files are always readable
	}
	return m
})

// Assets returns the files served under Prefix.
func Assets() fs.FS { return assets }

// URL returns the URL of asset name with its content hash, e.g. "/static/css/app.css?v=1a2b3c4d5e6f".
func URL(name string) string {
	u := Prefix + path.Clean(name)
	if v, ok := sums()[name]; ok {
		return u + "?v=" + v
	}
	return u
}

// Sum returns the content hash of asset name, and whether it exists.
func Sum(name string) (string, bool) {
	v, ok := sums()[name]
	return v, ok
}

// Demo returns the demo sessions, laid out as a pi sessions root (one folder per project).
func Demo() fs.FS {
	sub, err := fs.Sub(demo, "demo")
	if err != nil {
		panic(err)
	}
	return sub
}

// WriteDemo copies the demo sessions into root, an existing empty folder.
// Their relative parentSession paths become paths under root.
func WriteDemo(root string) error {
	d := Demo()
	return fs.WalkDir(d, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		dst := filepath.Join(root, filepath.FromSlash(p))
		if e.IsDir() {
			return os.Mkdir(dst, 0o755)
		}
		b, err := fs.ReadFile(d, p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, absParent(b, root), 0o644)
	})
}

// absParent rewrites a relative parentSession in a file's header line to a path under root.
func absParent(b []byte, root string) []byte {
	head, rest, _ := bytes.Cut(b, []byte("\n"))
	var h struct {
		ParentSession string `json:"parentSession"`
	}
	if json.Unmarshal(head, &h) != nil || h.ParentSession == "" || filepath.IsAbs(h.ParentSession) {
		return b
	}
	oldQ, _ := json.Marshal(h.ParentSession)
	newQ, _ := json.Marshal(filepath.Join(root, filepath.FromSlash(h.ParentSession)))
	head = bytes.Replace(head, oldQ, newQ, 1)
	return append(append(head, '\n'), rest...)
}
