package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"

	"github.com/piweb/piweb/catalog"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/push"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/team"
	"github.com/piweb/piweb/usage"
	"github.com/piweb/piweb/web"
)

// teamSite opens a team server: the sessions every machine pushed to
// cfg.from, mirrored in a folder of the cache (--cache-dir), read-only,
// indexed and searched in that store; the mirror is brought up to date
// first, then kept current as pushes arrive. It returns the func that
// closes the store.
func teamSite(ctx context.Context, out io.Writer, log *slog.Logger, cfg config) (*site, func(), error) {
	st, err := store.Open(ctx, cfg.from, store.Options{Logger: log})
	if err != nil {
		return nil, nil, err
	}
	dir, err := mirrorDir(cfg)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	lib := library.NewLibrary(dir)
	var live atomic.Bool // once the catalog has every file: the library follows the mirror's writes
	mr, err := team.Open(push.Table{DB: st}, dir, team.Options{Logger: log, Changed: func(p string) {
		if live.Load() {
			lib.Refresh(p)
		}
	}})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	lib.SetReadOnly(mr.Machine)
	fmt.Fprintf(out, "piweb: team server: the sessions pushed to %s, mirrored in %s\n", st, dir)
	if err := mr.Sync(ctx); err != nil {
		if !errors.Is(err, store.ErrUnavailable) {
			st.Close()
			return nil, nil, err
		}
		fmt.Fprintf(out, "piweb: the store cannot be reached: serving the mirror as it is, catching up when it can (%v)\n", err)
	}
	index := team.Index{DB: st, Machine: "team:" + dir}
	cat := catalog.New(lib, catalog.Options{Store: index, Logger: log})
	return &site{
		root:   dir,
		lib:    lib,
		cat:    cat,
		tokens: st,
		web: web.Options{Machine: mr.Machine,
			Usage: team.Usage{Files: usage.NewFiles(lib, ""), Lib: lib, Machine: mr.Machine}},
		live: func(ctx context.Context) error {
			live.Store(true)
			return mr.Run(ctx)
		},
	}, func() { st.Close() }, nil
}

// mirrorDir is where a team server mirrors the store it serves: a folder
// per store (by a hash of its name) in the cache folder, or --cache-dir.
func mirrorDir(cfg config) (string, error) {
	base := cfg.cacheDir
	if base == "" {
		dsn, err := store.DefaultDSN()
		if err != nil {
			return "", err
		}
		_, p, _ := store.ParseDSN(dsn)
		base = filepath.Dir(p)
	}
	h := sha256.Sum256([]byte(store.RedactDSN(cfg.from)))
	return filepath.Join(base, "team-"+hex.EncodeToString(h[:6])), nil
}
