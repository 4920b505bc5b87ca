package watcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

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
// session file whose size or modification time differs from what the
// watcher last saw, and every file it knew that is no longer listed.
func (w *Watcher) sync(ctx context.Context) {
	if w.known == nil {
		w.seed()
	}
	w.watchTree()
	files, err := sessions.SessionFiles(w.root)
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
		if k, ok := w.known[f]; ok && k.current(f) {
			continue
		}
		w.refresh(f)
	}
	for f := range w.known {
		if ctx.Err() != nil {
			return
		}
		if !listed[f] {
			w.refresh(f)
		}
	}
}

// seed records what the library already holds under the root, so the first
// scan reports only what changed since it was loaded.
func (w *Watcher) seed() {
	w.known = map[string]fileState{}
	for _, m := range w.lib.List() {
		if !w.inTree(m.File) {
			continue // added with Library.Add from elsewhere (demo sessions): not ours to manage
		}
		k := fileState{id: m.ID, size: m.Size, mod: m.FileModified}
		_ = w.lib.View(m.ID, func(s *sessions.Session) error {
			if s.File == m.File {
				k.leaf = leafID(s)
			}
			return nil
		})
		w.known[m.File] = k
	}
}

// inTree reports whether p sits where SessionFiles looks: in the root or a project folder.
func (w *Watcher) inTree(p string) bool {
	d := filepath.Dir(filepath.Clean(p))
	return d == w.root || filepath.Dir(d) == w.root
}

// current reports whether file still has the size and modification time recorded.
func (k fileState) current(file string) bool {
	fi, err := os.Stat(file)
	return err == nil && fi.Size() == k.size && fi.ModTime().Equal(k.mod)
}

// refresh brings the library up to date with one file and publishes what changed.
func (w *Watcher) refresh(p string) {
	if w.afterRefresh != nil {
		defer w.afterRefresh(p)
	}
	prev := w.known[p]
	// Stat before reading: a write landing in between then shows up as a
	// difference at the next rescan instead of being recorded as seen.
	fi, lerr := os.Lstat(p)
	if lerr == nil && !fi.Mode().IsRegular() {
		// A folder or a link with a session file name: SessionFiles leaves those out.
		delete(w.known, p)
		if prev.id != "" {
			w.lib.Remove(p)
			w.removed(p, prev.id, prev.leaf, "")
		}
		return
	}
	id, d, err := w.lib.Refresh(p)
	if errors.Is(err, sessions.ErrOutsideRoot) {
		// The path now leads out of the sessions root (a folder or the file
		// was swapped for a link): forgotten, as SessionFiles leaves it out,
		// so rescans do not read it again.
		delete(w.known, p)
		if id == "" {
			id = prev.id
		}
		if id != "" {
			w.log.Warn("watcher: a session file now leads out of the sessions root; it is no longer served", "file", p, "err", err)
			w.removed(p, id, prev.leaf, err.Error())
		}
		return
	}
	if errors.Is(err, fs.ErrNotExist) {
		delete(w.known, p)
		if id == "" {
			id = prev.id
		}
		if id != "" {
			w.removed(p, id, prev.leaf, "")
		}
		return
	}
	var state fileState
	if lerr == nil {
		state.size, state.mod = fi.Size(), fi.ModTime()
	}
	if err != nil {
		// Remember the file, so rescans read it again only once it changes.
		w.known[p] = state
		if id == "" {
			id = prev.id
		}
		switch {
		case id != "":
			w.log.Warn("watcher: a session file can no longer be read", "file", p, "err", err)
			w.removed(p, id, prev.leaf, err.Error())
		case errors.Is(err, sessions.ErrNotSession):
			w.log.Debug("watcher: not a session file", "file", p)
		default:
			w.fail(p, err)
		}
		return
	}

	ev := Event{SessionID: id, File: p}
	served := false // whether the library serves this file for id (two files may share one id)
	oldLeaf := prev.leaf
	var newIDs []string
	idless := false
	_ = w.lib.View(id, func(s *sessions.Session) error {
		ev.Leaf = leafID(s)
		if s.File != p {
			return nil
		}
		served = true
		if !d.Reloaded {
			for _, i := range d.New {
				newIDs = append(newIDs, s.Entries[i].ID)
				idless = idless || s.Entries[i].ID == ""
			}
			if d.OldLeaf >= 0 && d.OldLeaf < len(s.Entries) {
				oldLeaf = s.Entries[d.OldLeaf].ID
			}
		}
		return nil
	})
	state.id = id
	if served {
		state.leaf = ev.Leaf
	}
	w.known[p] = state

	switch {
	case prev.id == "":
		ev.Kind = KindNew
	case prev.id != id:
		// Another session was renamed over this path.
		w.removed(p, prev.id, prev.leaf, "")
		ev.Kind = KindNew
	case d.Reloaded || (len(d.New) > 0 && (!served || idless)):
		// Entries without an id cannot be named in NewIDs: have the client re-read.
		ev.Kind, ev.OldLeaf = KindReload, oldLeaf
	case len(d.New) > 0:
		ev.Kind, ev.NewIDs, ev.OldLeaf = KindAppend, newIDs, oldLeaf
	default:
		return // nothing changed
	}
	w.publish(ev)
}

// removed publishes that session id left file p. When the library still
// holds the id in another file (a rename inside the tree, or a copy), the
// session lives on there and is reported as a reload of that file instead.
func (w *Watcher) removed(p, id, oldLeaf, why string) {
	ev := Event{SessionID: id, File: p, Kind: KindRemove, OldLeaf: oldLeaf, Error: why}
	_ = w.lib.View(id, func(s *sessions.Session) error {
		ev.Kind, ev.File, ev.Leaf, ev.Error = KindReload, s.File, leafID(s), ""
		return nil
	})
	w.publish(ev)
}

// publish logs and fans out one event.
func (w *Watcher) publish(ev Event) {
	w.log.Debug("watcher: event", "kind", ev.Kind, "session", ev.SessionID, "file", ev.File, "new", len(ev.NewIDs), "leaf", ev.Leaf)
	w.hub.publish(ev)
}

// leafID returns the id of the entry pi resumes from, or "".
func leafID(s *sessions.Session) string {
	if i := s.Leaf(); i >= 0 {
		return s.Entries[i].ID
	}
	return ""
}
