// Package watcher keeps a library.Library in step with the session files
// on disk and tells subscribers what changed, one Event per change.
//
// It watches directories, never files (editors and atomic saves replace
// files, which kills a file watch): the sessions root and each project
// folder in it, with one fsnotify watcher. Events are debounced per path,
// then the file is re-read through Library.Refresh, one file at a time. A
// slow periodic rescan catches what notifications miss (lost events,
// network filesystems, folders moved out of the tree, a root created later).
//
// Changes are published by the library (Library.Refresh), not here: this
// package only decides when to call it. Subscribe is the library's feed;
// Run ends its subscriptions when it returns. Files that are not sessions
// are logged, not published; problems watching the tree are published as
// library.KindError changes. Only files under the root are managed:
// sessions put in the library with Library.Add from elsewhere are left alone.
package watcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
)

// Options tunes a Watcher; the zero value gives the defaults.
type Options struct {
	// Debounce is how long a file must stay quiet before it is re-read (default 100ms).
	Debounce time.Duration
	// Rescan is the interval of the safety-net full rescan (default 30s; 0 = default, <0 = off).
	Rescan time.Duration
	// Logger receives diagnostics (default slog.Default()).
	Logger *slog.Logger
}

const (
	defaultDebounce = 100 * time.Millisecond
	defaultRescan   = 30 * time.Second
	// A file written more often than Debounce would never go quiet; it is
	// re-read at least once per maxWaitFactor debounce periods.
	maxWaitFactor = 10
)

// Watcher keeps a Library in step with the session files under its root and fans out Events.
type Watcher struct {
	lib      *library.Library
	root     string
	debounce time.Duration
	maxWait  time.Duration
	rescan   time.Duration
	log      *slog.Logger

	mu       sync.Mutex
	started  bool
	stopped  bool
	timers   map[string]*pending // per-path debounce
	due      []string            // paths whose quiet period ended, in that order
	isDue    map[string]bool
	projects map[string]bool   // project folders watched
	failed   map[string]string // folders whose watch failed, with the error reported

	kick     chan struct{} // wakes the worker: paths are due
	rescanCh chan struct{} // asks the worker for a full rescan
	ready    chan struct{} // closed after the first scan

	fsw *fsnotify.Watcher // nil when notifications are unavailable: rescans only

	// Test hooks.
	noWatch      bool              // do not use fsnotify (as on a network filesystem)
	afterRefresh func(path string) // called by the worker after each re-read
}

// pending is one path's debounce timer.
type pending struct {
	t     *time.Timer
	first time.Time
	dirty bool // something changed since the file was last queued: read it when the timer fires
}

// New returns a Watcher for lib's root; call Run to start it.
func New(lib *library.Library, opt Options) (*Watcher, error) {
	if lib == nil {
		return nil, errors.New("watcher: nil library")
	}
	if lib.Root == "" {
		return nil, errors.New("watcher: the library has no root folder")
	}
	w := &Watcher{
		lib:      lib,
		root:     filepath.Clean(lib.Root),
		debounce: opt.Debounce,
		rescan:   opt.Rescan,
		log:      opt.Logger,
		timers:   map[string]*pending{},
		isDue:    map[string]bool{},
		projects: map[string]bool{},
		failed:   map[string]string{},
		kick:     make(chan struct{}, 1),
		rescanCh: make(chan struct{}, 1),
		ready:    make(chan struct{}),
	}
	if w.debounce <= 0 {
		w.debounce = defaultDebounce
	}
	w.maxWait = maxWaitFactor * w.debounce
	if w.rescan == 0 {
		w.rescan = defaultRescan
	}
	if w.log == nil {
		w.log = slog.Default()
	}
	return w, nil
}

// Run watches until ctx is done, then closes fsnotify and all subscriptions and returns nil.
func (w *Watcher) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.started {
		w.mu.Unlock()
		return errors.New("watcher: Run called twice")
	}
	w.started = true
	w.mu.Unlock()

	var events <-chan fsnotify.Event
	var errs <-chan error
	// Without fsnotify (inotify limits) the rescan alone keeps the library current.
	// Run fails only if that is off too, or if fsnotify stops on its own.
	if !w.noWatch {
		fsw, err := fsnotify.NewWatcher()
		if err != nil {
			err = explain(err, "start watching files")
			w.fail("", err)
			if w.rescan < 0 {
				w.shutdown()
				return err
			}
			w.log.Warn("watcher: falling back to periodic rescans", "every", w.rescan)
		} else {
			w.fsw = fsw
			events, errs = fsw.Events, fsw.Errors
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer w.shutdown()
	defer wg.Wait()
	defer cancel()
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.work(ctx)
	}()

	// One loop drains both channels: fsnotify blocks when either is not read.
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return errors.New("watcher: fsnotify closed its event channel")
			}
			w.handle(ev)
		case err, ok := <-errs:
			if !ok {
				return errors.New("watcher: fsnotify closed its error channel")
			}
			w.fsError(err)
		}
	}
}

// shutdown stops the debounce timers, closes fsnotify and ends the subscriptions.
func (w *Watcher) shutdown() {
	w.mu.Lock()
	w.stopped = true
	for p, t := range w.timers {
		t.t.Stop()
		delete(w.timers, p)
	}
	w.mu.Unlock()
	if w.fsw != nil {
		if err := w.fsw.Close(); err != nil {
			w.log.Warn("watcher: closing fsnotify", "err", err)
		}
	}
	w.lib.Close()
}

// handle routes one fsnotify event.
func (w *Watcher) handle(ev fsnotify.Event) {
	if ev.Op&^fsnotify.Chmod == 0 {
		return // Spotlight, antivirus and backups send these; the bytes did not change
	}
	p := filepath.Clean(ev.Name)
	if p == w.root {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.log.Warn("watcher: the sessions root was removed or moved", "root", w.root)
			w.mu.Lock()
			clear(w.projects)
			w.mu.Unlock()
			w.requestRescan()
		}
		return
	}
	wait := w.debounce
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A name that goes away is read after twice the debounce: when the file
		// was moved within the tree, its new name is read first, and the
		// session is reported as living on there rather than removed.
		wait = 2 * w.debounce
	}
	// The first write to a quiet file that grew it is read at once (an append
	// reaches open pages without waiting out the debounce); writes that follow
	// within the debounce are read together when it ends. A file that did not
	// grow may be in the middle of a rewrite (truncated, not yet written): it
	// waits out the debounce.
	lead := false
	if ev.Op == fsnotify.Write {
		fi, err := os.Stat(p)
		lead = err == nil && w.lib.Grew(p, fi)
	}
	dir, name := filepath.Dir(p), filepath.Base(p)
	switch {
	case dir == w.root:
		if library.IsSessionFileName(name) {
			w.touch(p, wait, false)
		}
		if ev.Has(fsnotify.Create) {
			w.addProject(p)
		}
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.mu.Lock()
			gone := w.projects[p]
			delete(w.projects, p)
			w.mu.Unlock()
			if gone {
				// Its files vanished from the tree without an event each (moves are silent).
				w.requestRescan()
			}
		}
	case filepath.Dir(dir) == w.root && library.IsSessionFileName(name):
		w.touch(p, wait, lead)
	}
}

// fsError reports an error from fsnotify.
func (w *Watcher) fsError(err error) {
	overflow := errors.Is(err, fsnotify.ErrEventOverflow)
	if overflow {
		err = fmt.Errorf("%w: some file changes were lost, rescanning all sessions (raise fs.inotify.max_queued_events if this repeats)", err)
	}
	w.fail("", err)
	if overflow {
		w.requestRescan() // after the error event, so subscribers see it before what the rescan finds
	}
}

// fail logs err and publishes it as an error event.
func (w *Watcher) fail(file string, err error) {
	w.log.Error("watcher", "err", err, "file", file)
	w.lib.Publish(library.Change{Kind: library.KindError, File: file, Error: err.Error()})
}

// explain wraps err from fsnotify with what to do about inotify limits.
func explain(err error, what string) error {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("%s: %w: the inotify watch limit is reached; raise fs.inotify.max_user_watches "+
			"(e.g. sudo sysctl fs.inotify.max_user_watches=524288); until then changes there are found only by the periodic rescan", what, err)
	case errors.Is(err, syscall.EMFILE):
		return fmt.Errorf("%s: %w: too many inotify instances or open files; raise fs.inotify.max_user_instances "+
			"(e.g. sudo sysctl fs.inotify.max_user_instances=1024) or the open-file limit (ulimit -n)", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// touch (re)starts the debounce timer of a session file path. With lead,
// a file with no timer running is queued at once and the timer only
// gathers what follows.
func (w *Watcher) touch(p string, wait time.Duration, lead bool) {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	if t, ok := w.timers[p]; ok {
		t.dirty = true
		t.t.Reset(min(wait, max(0, w.maxWait-time.Since(t.first))))
		w.mu.Unlock()
		return
	}
	t := &pending{first: time.Now(), dirty: !lead}
	t.t = time.AfterFunc(wait, func() { w.fire(p, t) })
	w.timers[p] = t
	if lead {
		w.queueLocked(p)
	}
	w.mu.Unlock()
	if lead {
		w.wake()
	}
}

// queueLocked adds p to the files the worker reads next.
func (w *Watcher) queueLocked(p string) {
	if !w.isDue[p] {
		w.isDue[p] = true
		w.due = append(w.due, p)
	}
}

// wake tells the worker files are due.
func (w *Watcher) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// fire queues p for the worker once its quiet period ended.
func (w *Watcher) fire(p string, t *pending) {
	w.mu.Lock()
	if w.stopped || w.timers[p] != t {
		w.mu.Unlock()
		return // stopped, or a stale run of a timer reset while it fired
	}
	delete(w.timers, p)
	if !t.dirty {
		w.mu.Unlock()
		return // nothing changed since the first write was read
	}
	w.queueLocked(p)
	w.mu.Unlock()
	w.wake()
}

// requestRescan asks the worker for a full rescan soon.
func (w *Watcher) requestRescan() {
	select {
	case w.rescanCh <- struct{}{}:
	default:
	}
}

// isProject reports whether p (a child of the root) is a project folder, as SessionFiles sees them.
func (w *Watcher) isProject(p string) bool {
	fi, err := os.Stat(p) // follows links, as SessionFiles does
	return err == nil && fi.IsDir() && sessions.Within(w.root, p)
}

// addProject watches a project folder that just appeared and queues the
// session files already in it: they may predate the watch.
func (w *Watcher) addProject(p string) {
	if !w.isProject(p) {
		return
	}
	_ = w.watchDir(p)
	entries, err := os.ReadDir(p)
	if err != nil {
		return
	}
	for _, e := range entries {
		if library.IsSessionFileName(e.Name()) {
			w.touch(filepath.Join(p, e.Name()), w.debounce, false)
		}
	}
}

// watchDir adds a watch on dir (a no-op when it is already watched),
// reporting a failure once until it changes.
func (w *Watcher) watchDir(dir string) error {
	if w.fsw == nil {
		return errors.New("file notifications are unavailable")
	}
	err := w.fsw.Add(dir)
	w.mu.Lock()
	prev, hadFailed := w.failed[dir]
	if err == nil {
		delete(w.failed, dir)
		if dir != w.root {
			w.projects[dir] = true
		}
		w.mu.Unlock()
		if hadFailed {
			w.log.Info("watcher: now watching", "dir", dir)
		}
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		delete(w.failed, dir)
		w.mu.Unlock()
		return err
	}
	err = explain(err, "watch "+dir)
	w.failed[dir] = err.Error()
	w.mu.Unlock()
	if prev != err.Error() {
		w.fail(dir, err)
	}
	return err
}

// watchTree watches the root and every project folder in it.
func (w *Watcher) watchTree() {
	if w.fsw == nil {
		return
	}
	if err := w.watchDir(w.root); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			w.log.Debug("watcher: the sessions root does not exist yet; the rescan will watch it once it does", "root", w.root)
		}
		return
	}
	entries, err := os.ReadDir(w.root)
	if err != nil {
		return
	}
	for _, d := range entries {
		if library.IsSessionFileName(d.Name()) && d.Type().IsRegular() {
			continue
		}
		if !d.IsDir() && d.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if p := filepath.Join(w.root, d.Name()); w.isProject(p) {
			_ = w.watchDir(p)
		}
	}
}
