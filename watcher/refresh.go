package watcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
)

// work runs every library update, one at a time: the first scan, debounced
// paths as they come due, and the periodic rescan.
func (w *Watcher) work(ctx context.Context) {
	w.sync(ctx)
	close(w.ready)
	var tick <-chan time.Time
	if w.rescan > 0 {
		t := time.NewTicker(w.rescan)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
			w.drain(ctx)
		case <-tick:
			w.sync(ctx)
		case <-w.rescanCh:
			w.sync(ctx)
		}
	}
}

// drain re-reads the paths that are due, in the order they came due.
func (w *Watcher) drain(ctx context.Context) {
	for ctx.Err() == nil {
		w.mu.Lock()
		batch := w.due
		w.due = nil
		clear(w.isDue)
		w.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		for _, p := range batch {
			if ctx.Err() != nil {
				return
			}
			w.refresh(p)
		}
	}
}

// sync is the full rescan: it (re)watches the tree, then re-reads every
// session file the library is not current with, and every file it knew
// that is no longer listed.
func (w *Watcher) sync(ctx context.Context) {
	w.watchTree()
	files, err := library.SessionFiles(w.root)
	if err != nil {
		w.fail(w.root, fmt.Errorf("rescan: %w", err))
		return
	}
	listed := make(map[string]bool, len(files))
	for _, f := range files {
		if ctx.Err() != nil {
			return
		}
		listed[f] = true
		if fi, err := os.Stat(f); err == nil && w.lib.Current(f, fi) {
			continue
		}
		w.refresh(f)
	}
	for _, f := range w.lib.Known() {
		if ctx.Err() != nil {
			return
		}
		if !listed[f] && w.inTree(f) {
			w.refresh(f)
		}
	}
}

// inTree reports whether p sits where SessionFiles looks: in the root or a project folder.
func (w *Watcher) inTree(p string) bool {
	d := filepath.Dir(filepath.Clean(p))
	return d == w.root || filepath.Dir(d) == w.root
}

// refresh brings the library up to date with one file; the library publishes what changed.
func (w *Watcher) refresh(p string) {
	if w.afterRefresh != nil {
		defer w.afterRefresh(p)
	}
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		// A folder or a link with a session file name: SessionFiles leaves those out.
		w.lib.Remove(p)
		return
	}
	c, err := w.lib.RefreshSettled(p)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, sessions.ErrOutsideRoot):
		if c.Key != "" {
			w.log.Warn("watcher: a session file now leads out of the sessions root; it is no longer served", "file", p, "err", err)
		}
	case errors.Is(err, sessions.ErrNotSession):
		w.log.Debug("watcher: not a session file", "file", p)
	case c.Key != "":
		w.log.Warn("watcher: a session file can no longer be read", "file", p, "err", err)
	default:
		w.fail(p, err)
	}
}
