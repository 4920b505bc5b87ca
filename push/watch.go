package push

// Watching: push --watch follows the root with fsnotify (the root and each
// project folder in it: fsnotify does not watch subfolders), pushes a file
// once it has been quiet for a debounce (pi writes a line in several
// writes), and rescans the whole root now and then, which catches what
// notifications miss (lost events, network file systems, folders made
// while a watch was being added). A store that fails is tried again after
// a growing pause; nothing is lost meanwhile, as every push starts from
// what the store holds.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/piweb/piweb/library"
)

// WatchOptions tune Watch; the zero value gives the defaults.
type WatchOptions struct {
	// Debounce is how long a file must be quiet before it is pushed (default 100 ms).
	Debounce time.Duration
	// Rescan is how often the whole root is pushed (default 1 min).
	Rescan time.Duration
	// Retry is the first pause after the store failed (default 1 s; it doubles to 1 min).
	Retry time.Duration
}

// Watch pushes every file, then follows the root until ctx is done: each
// file pi writes to is pushed once it is quiet for opt.Debounce, and the
// whole root every opt.Rescan. onPush, when set, is called after each
// push with what it did and the store's error, if any.
func (p *Pusher) Watch(ctx context.Context, opt WatchOptions, onPush func(Stats, error)) error {
	if opt.Debounce <= 0 {
		opt.Debounce = 100 * time.Millisecond
	}
	if opt.Rescan <= 0 {
		opt.Rescan = time.Minute
	}
	if opt.Retry <= 0 {
		opt.Retry = time.Second
	}
	if onPush == nil {
		onPush = func(Stats, error) {}
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		p.log.Warn("push: cannot watch files: pushing on the rescans only", "every", opt.Rescan, "err", err)
	}
	w := &watch{p: p, opt: opt, fsw: fsw, due: map[string]bool{}, timers: map[string]*time.Timer{}, kick: make(chan struct{}, 1)}
	w.all = true
	w.watchTree()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { w.work(ctx, onPush) })
	defer wg.Wait()
	defer cancel()
	if fsw == nil {
		<-ctx.Done()
		return nil
	}
	defer fsw.Close()
	for {
		select {
		case <-ctx.Done():
			w.stopTimers()
			return nil
		case ev, ok := <-fsw.Events:
			if !ok {
				return errors.New("push: fsnotify closed its events")
			}
			w.handle(ev)
		case err, ok := <-fsw.Errors:
			if !ok {
				return errors.New("push: fsnotify closed its errors")
			}
			p.log.Warn("push: watching files", "err", err) // events may be lost (a queue overflow): rescan
			w.rescanSoon()
		}
	}
}

// watch is one Watch's state.
type watch struct {
	p   *Pusher
	opt WatchOptions
	fsw *fsnotify.Watcher

	mu     sync.Mutex
	due    map[string]bool // files quiet since their last write, to push
	all    bool            // the whole root is due
	timers map[string]*time.Timer
	kick   chan struct{}
}

// watchTree watches the root and each folder in it.
func (w *watch) watchTree() {
	if w.fsw == nil {
		return
	}
	root := w.p.opt.Root
	if err := w.fsw.Add(root); err != nil {
		w.p.log.Warn("push: cannot watch the root: pushing on the rescans only", "root", root, "err", err)
		return
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			w.add(filepath.Join(root, e.Name()))
		}
	}
}

// add watches a project folder.
func (w *watch) add(dir string) {
	if err := w.fsw.Add(dir); err != nil {
		w.p.log.Warn("push: cannot watch a folder: its files are pushed on the rescans", "folder", dir, "err", err)
	}
}

// handle takes one notification: a new project folder is watched (and
// its files pushed), a session file written to is pushed once quiet.
func (w *watch) handle(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		return // Spotlight, backups and antivirus touch files all day
	}
	dir := filepath.Dir(ev.Name)
	inRoot := dir == filepath.Clean(w.p.opt.Root)
	if inRoot && ev.Has(fsnotify.Create) {
		if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
			w.add(ev.Name)
			w.rescanSoon() // files may have come before the watch did
			return
		}
	}
	if !library.IsSessionFileName(filepath.Base(ev.Name)) || !ev.Has(fsnotify.Write) && !ev.Has(fsnotify.Create) {
		return
	}
	if !inRoot && filepath.Dir(dir) != filepath.Clean(w.p.opt.Root) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if t := w.timers[ev.Name]; t != nil {
		t.Reset(w.opt.Debounce)
		return
	}
	name := ev.Name
	w.timers[name] = time.AfterFunc(w.opt.Debounce, func() {
		w.mu.Lock()
		delete(w.timers, name)
		w.due[name] = true
		w.mu.Unlock()
		w.wake()
	})
}

func (w *watch) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// rescanSoon makes the whole root due.
func (w *watch) rescanSoon() {
	w.mu.Lock()
	w.all = true
	w.mu.Unlock()
	w.wake()
}

func (w *watch) stopTimers() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p, t := range w.timers {
		t.Stop()
		delete(w.timers, p)
	}
}

// work pushes what is due, one push at a time, until ctx is done.
func (w *watch) work(ctx context.Context, onPush func(Stats, error)) {
	rescan := time.NewTicker(w.opt.Rescan)
	defer rescan.Stop()
	pause := time.Duration(0)
	for {
		w.mu.Lock()
		all, files := w.all, w.due
		w.all, w.due = false, map[string]bool{}
		w.mu.Unlock()
		var err error
		switch {
		case all:
			var st Stats
			st, err = w.p.Push(ctx)
			onPush(st, err)
		case len(files) > 0:
			var total Stats
			for f := range files {
				var st Stats
				if st, err = w.p.PushFile(ctx, f); err != nil {
					break
				}
				total.add(st)
			}
			onPush(total, err)
		}
		if ctx.Err() != nil {
			return
		}
		var retry <-chan time.Time
		if err != nil {
			// The store failed: everything again, after a pause (nothing
			// was lost: the next push starts from what the store holds).
			pause = min(max(2*pause, w.opt.Retry), time.Minute)
			w.mu.Lock()
			w.all = true
			w.mu.Unlock()
			retry = time.After(pause)
		} else {
			pause = 0
		}
		if retry != nil {
			select {
			case <-ctx.Done():
				return
			case <-retry:
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-rescan.C:
			w.rescanSoon()
		}
	}
}
