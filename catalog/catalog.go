// Package catalog joins the session library and the index store. At a
// start it lists every session from the store (a file whose size and
// modification time are as the store last saw it is not read at all) and
// reads the files that changed or are new; it then keeps the store
// current from the library's change feed: each file's row of the sessions
// list, where its entries lie relative to the path pi resumes, its labels,
// and the searchable texts of its entries (only those appended, when the
// file only grew: see sync.go). It answers searches through the store's
// full-text index, every candidate checked on the entry's real text, or,
// while the store cannot be used, by scanning the files (search.go).
//
// It never fails because of the store: a store that is full, unreachable
// or damaged leaves the files it could not save pending, tried again with
// a growing pause, and searches say partial until every file is saved.
package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/usage"
)

// Store is the index store as the catalog uses it: store.DB, on SQLite or
// PostgreSQL.
type Store interface {
	Files(ctx context.Context, machine string) ([]store.File, int, error)
	Facts(ctx context.Context, id int64) (store.Facts, error)
	SaveMany(ctx context.Context, saves []*store.Save) error
	Remove(ctx context.Context, machine string, paths ...string) error
	Search(ctx context.Context, q store.Query) ([]store.Candidate, error)
	Copies(ctx context.Context, entryID string, part int, ts int64) ([]store.Candidate, error)
	Labels(ctx context.Context, machine string) ([]store.FileLabel, []string, error)
	OnReset(fn func())
	TextIndex(ctx context.Context, on bool) error
	SetHook(h store.Hook)
}

// Options configure a Catalog.
type Options struct {
	// Store keeps what the catalog learns across runs and finds texts;
	// nil runs without one (every start reads every file; search scans).
	Store  Store
	Logger *slog.Logger
	// OnFile, when set, is called before each file the first fill reads
	// (tests hold the fill half way with it).
	OnFile func(path string)
	// PageTime bounds the checking of one page of an indexed search: past
	// it, the page ends with the hits found and a Next. 0: 150 ms;
	// negative: unbounded, a scan's pages too (tests that count a page's
	// hits).
	PageTime time.Duration
}

// Catalog is the library and the store, kept together.
type Catalog struct {
	lib *library.Library
	st  Store
	log *slog.Logger
	opt Options

	ready     chan struct{} // closed when every file is in the library
	searched  chan struct{} // closed when every file was first saved in the store
	readyOnce sync.Once
	srchOnce  sync.Once

	prog   progress
	yield  atomic.Pointer[func(context.Context)] // YieldTo's
	counts searchCounts

	mu      sync.Mutex
	files   map[string]*fileState // what the store holds of each file
	queue   []string              // files to save, live changes first
	queued  map[string]bool
	busy    map[string]bool
	failed  map[string]bool // files whose last save failed: tried again (see retry)
	backoff time.Duration
	retry   *time.Timer
	changed chan struct{} // closed (and replaced) whenever the queue or its work changes: Wait
	wake    chan struct{}
	down    atomic.Bool // the store failed: logged once until it works again
	epoch   int         // counts the times the store was made again (requeue)

	facts   factCache
	ledgers usage.Ledgers // of files that grew: their usage read as pi appends
}

// fileState is what the store holds of one file.
type fileState struct {
	stamp store.Stamp
	docs  int    // entries whose texts the store holds, from the first
	gen   uint64 // the library's generation of the file the store holds (0: not known)
}

// progress counts indexing work; read through Progress.
type progress struct {
	start                 time.Time
	filesTotal, filesDone atomic.Int64
	bytesTotal, bytesDone atomic.Int64
	searchTotal           atomic.Int64
	searchDone            atomic.Int64
	end                   atomic.Int64 // unix nanos when the library was complete
}

// Progress is a snapshot of indexing.
type Progress struct {
	Indexing    bool          `json:"indexing"` // the library is still being filled
	FilesDone   int64         `json:"filesDone"`
	FilesTotal  int64         `json:"filesTotal"`
	BytesDone   int64         `json:"bytesDone"`
	BytesTotal  int64         `json:"bytesTotal"`
	Elapsed     time.Duration `json:"elapsedNs"`
	Rate        float64       `json:"bytesPerSecond"`
	Searching   bool          `json:"searchIndexing"` // the search index is still being built
	SearchDone  int64         `json:"searchFilesDone"`
	SearchTotal int64         `json:"searchFilesTotal"`
}

// New returns a catalog over lib (usually empty: Run fills it).
func New(lib *library.Library, opt Options) *Catalog {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opt.PageTime == 0 {
		opt.PageTime = 150 * time.Millisecond
	}
	c := &Catalog{lib: lib, st: opt.Store, log: opt.Logger, opt: opt,
		ready: make(chan struct{}), searched: make(chan struct{}),
		files: map[string]*fileState{}, queued: map[string]bool{}, busy: map[string]bool{}, failed: map[string]bool{},
		changed: make(chan struct{}), wake: make(chan struct{}, 1)}
	c.prog.start = time.Now()
	if c.st != nil {
		c.st.OnReset(c.requeue)
		c.st.SetHook(usage.Tables{})
	}
	return c
}

// Loaded returns a catalog over a library that is already filled (tests,
// the demo): ready at once, and searching by scanning when it has no store.
func Loaded(lib *library.Library, opt Options) *Catalog {
	c := New(lib, opt)
	c.markReady()
	if c.st == nil {
		c.markSearched(context.Background())
	}
	return c
}

// Library returns the catalog's library.
func (c *Catalog) Library() *library.Library { return c.lib }

// Ready is closed once every file under the root is in the library.
func (c *Catalog) Ready() <-chan struct{} { return c.ready }

// YieldTo makes the store's workers call fn before each file they save
// (a web server's Yield: pages go first).
func (c *Catalog) YieldTo(fn func(ctx context.Context)) { c.yield.Store(&fn) }

// SearchReady is closed once the store first held every file (at once without a store).
func (c *Catalog) SearchReady() <-chan struct{} { return c.searched }

// Indexing reports whether the library is still being filled.
func (c *Catalog) Indexing() bool {
	select {
	case <-c.ready:
		return false
	default:
		return true
	}
}

func (c *Catalog) markReady() {
	c.readyOnce.Do(func() {
		c.prog.end.Store(time.Now().UnixNano())
		close(c.ready)
	})
}

// markSearched marks the first build done, once: the store's text index
// made first (when there is a store).
func (c *Catalog) markSearched(ctx context.Context) {
	c.srchOnce.Do(func() {
		if c.st != nil {
			if err := c.st.TextIndex(ctx, true); err != nil && ctx.Err() == nil {
				c.log.Warn("index store: cannot make the text index (searches read every text until the next start)", "err", err)
			}
		}
		close(c.searched)
	})
}

// Progress returns how far indexing is.
func (c *Catalog) Progress() Progress {
	p := Progress{Indexing: c.Indexing(), FilesDone: c.prog.filesDone.Load(), FilesTotal: c.prog.filesTotal.Load(),
		BytesDone: c.prog.bytesDone.Load(), BytesTotal: c.prog.bytesTotal.Load(),
		SearchDone: c.prog.searchDone.Load(), SearchTotal: c.prog.searchTotal.Load(), Searching: c.searching()}
	end := time.Now()
	if e := c.prog.end.Load(); e != 0 {
		end = time.Unix(0, e)
	}
	p.Elapsed = end.Sub(c.prog.start)
	if s := p.Elapsed.Seconds(); s > 0 {
		p.Rate = float64(p.BytesDone) / s
	}
	return p
}

// searching reports whether the store does not hold every file as the
// library has it yet: the first build is under way, files are queued or
// being saved, or saves failed (a full disk, an unreachable server) and
// are pending.
func (c *Catalog) searching() bool {
	select {
	case <-c.searched:
	default:
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.failed) > 0 || len(c.queue) > 0 || len(c.busy) > 0
}

// Run fills the library from the store and the files, then keeps the
// store current with the library's changes until ctx is done. Store
// failures are logged, never fatal.
func (c *Catalog) Run(ctx context.Context) error {
	changes, stop := c.lib.Subscribe()
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() { c.follow(ctx, changes) })
	if err := c.fill(ctx); err != nil {
		return err
	}
	if c.st == nil {
		c.markSearched(ctx)
		<-ctx.Done()
		return nil
	}
	if err := c.st.TextIndex(ctx, false); err != nil {
		c.log.Warn("index store: cannot prepare the first build", "err", err)
	}
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() { c.worker(ctx) })
	}
	c.checkSearched(ctx)
	<-ctx.Done()
	c.mu.Lock()
	if c.retry != nil {
		c.retry.Stop()
	}
	c.mu.Unlock()
	return nil
}

// follow queues the files of the library's changes for the store.
func (c *Catalog) follow(ctx context.Context, changes <-chan library.Change) {
	for {
		select {
		case <-ctx.Done():
			return
		case ch, ok := <-changes:
			if !ok {
				return
			}
			if ch.File == "" || ch.Kind == "" || c.st == nil || c.Indexing() || c.holds(ch.File) {
				continue // the fill queues every file it reads once it is done
			}
			c.enqueue(ch.File, true)
		}
	}
}

// holds reports whether the store holds path as the library has it now
// (a change the feed delivers late, such as a seeded file's).
func (c *Catalog) holds(path string) bool {
	gen, ok := c.lib.Gen(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.files[path]
	return ok && st != nil && st.gen == gen
}

// enqueue asks the workers to bring file's store record and texts up to
// date; live changes go before the backlog of a first build.
func (c *Catalog) enqueue(file string, live bool) {
	c.mu.Lock()
	switch {
	case live && c.queued[file]:
		if k := slices.Index(c.queue, file); k > 0 {
			c.queue = append(append([]string{file}, c.queue[:k]...), c.queue[k+1:]...)
		}
	case live:
		c.queue = append([]string{file}, c.queue...)
	case !c.queued[file]:
		c.queue = append(c.queue, file)
	}
	c.queued[file] = true
	c.notifyLocked()
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// notifyLocked wakes those waiting for the queue to change (c.mu held).
func (c *Catalog) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// fill puts every file under the root into the library: the rows the
// store holds of files unchanged since (not read), and the others read,
// newest first. Then it queues every file the store does not hold as it
// is, oldest first (the order of documents is what "newest" means to a
// search).
func (c *Catalog) fill(ctx context.Context) error {
	defer c.markReady()
	paths, err := library.SessionFiles(c.lib.Root)
	if err != nil {
		return err
	}
	recs := map[string]*store.File{}
	if c.st != nil {
		files, damaged, err := c.st.Files(ctx, "")
		switch {
		case err != nil:
			c.storeFailed(err) // every file is read, and saved again
			files = nil
		case damaged > 0:
			c.log.Warn("index store: rows that do not hold together: their files are read again", "rows", damaged)
		}
		for k := range files {
			recs[files[k].Path] = &files[k]
		}
	}
	type toRead struct {
		path string
		size int64
		mod  time.Time
	}
	var reads []toRead
	var save []string // files the store does not hold as they are
	onDisk := make(map[string]bool, len(paths))
	for _, p := range paths {
		onDisk[p] = true
		fi, err := os.Stat(p)
		rec := recs[p]
		if err == nil && rec != nil && rec.Stamp.Size == fi.Size() && rec.Stamp.ModTime == fi.ModTime().UnixNano() {
			if c.seed(rec) {
				gen, _ := c.lib.Gen(p)
				c.setState(p, &fileState{stamp: rec.Stamp, docs: rec.Docs, gen: gen})
				if rec.Problem == "" && !c.complete(rec) {
					save = append(save, p)
				}
				continue
			}
		}
		if rec != nil && rec.Problem == "" {
			c.setState(p, &fileState{stamp: rec.Stamp, docs: rec.Docs}) // to tell an append from a rewrite
		}
		var size int64
		var mod time.Time
		if err == nil {
			size, mod = fi.Size(), fi.ModTime()
		}
		reads = append(reads, toRead{p, size, mod})
		save = append(save, p)
	}
	var gone []string
	for p := range recs {
		if !onDisk[p] {
			gone = append(gone, p)
		}
	}
	if len(gone) > 0 && c.st != nil {
		if err := c.st.Remove(ctx, "", gone...); err != nil {
			c.storeFailed(err)
		}
	}
	// The newest first, so the sessions page shows the recent ones soonest.
	slices.SortFunc(reads, func(a, b toRead) int { return b.mod.Compare(a.mod) })
	c.prog.filesTotal.Store(int64(len(reads)))
	for _, r := range reads {
		c.prog.bytesTotal.Add(r.size)
	}
	jobs := make(chan toRead)
	var wg sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for r := range jobs {
				if c.opt.OnFile != nil {
					c.opt.OnFile(r.path)
				}
				c.lib.Refresh(r.path)
				c.prog.filesDone.Add(1)
				c.prog.bytesDone.Add(r.size)
			}
		})
	}
	for _, r := range reads {
		if ctx.Err() != nil {
			break
		}
		jobs <- r
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil
	}
	if c.st == nil {
		return nil
	}
	// Oldest first into the store.
	mods := make(map[string]time.Time, len(save))
	for _, p := range save {
		if m, ok := c.lib.MetaOf(p); ok {
			mods[p] = m.Modified
		}
	}
	slices.SortStableFunc(save, func(a, b string) int { return mods[a].Compare(mods[b]) })
	c.prog.searchTotal.Store(int64(len(save)))
	for _, p := range save {
		c.enqueue(p, false)
	}
	return nil
}

// setState records what the store holds of path (nil: nothing).
func (c *Catalog) setState(path string, st *fileState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st == nil {
		delete(c.files, path)
	} else {
		c.files[path] = st
	}
}

// seed puts a file's row as the store holds it into the library; false
// when the row cannot be used (its list row does not read).
func (c *Catalog) seed(rec *store.File) bool {
	if rec.Problem != "" {
		c.lib.SeedProblem(rec.Path, errors.New(rec.Problem), rec.Stamp.Size, time.Unix(0, rec.Stamp.ModTime))
		return true
	}
	var m sessions.Meta
	if err := json.Unmarshal(rec.Meta, &m); err != nil || m.File != rec.Path || m.ID == "" {
		return false
	}
	c.lib.Seed(m)
	return true
}

// complete reports whether the store holds the texts of every entry of rec's file.
func (c *Catalog) complete(rec *store.File) bool {
	var m struct{ Entries int }
	return json.Unmarshal(rec.Meta, &m) == nil && rec.Docs >= m.Entries
}

// requeue forgets what the store held (it was made again, empty) and
// queues every file the library knows.
func (c *Catalog) requeue() {
	c.mu.Lock()
	c.files = map[string]*fileState{}
	c.epoch++
	c.mu.Unlock()
	c.facts.clear()
	for _, f := range c.lib.Known() {
		c.enqueue(f, false)
	}
}

// storeFailed notes a failure of the store: logged once until it works again.
func (c *Catalog) storeFailed(err error) {
	if !c.down.Swap(true) {
		c.log.Warn("index store failed: pending saves are tried again; searches say partial meanwhile", "err", err)
	}
}

// current reports whether the store holds every file as the library has
// it: each session at the library's generation, each problem, and nothing
// else. A change the library published and the catalog has not queued yet
// makes it false.
func (c *Catalog) current() bool {
	known := c.lib.Known()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(known) != len(c.files) {
		return false
	}
	for _, p := range known {
		st, ok := c.files[p]
		if !ok {
			return false
		}
		if gen, isSession := c.lib.Gen(p); isSession && st.gen != gen {
			return false
		}
	}
	return true
}

// Wait returns once the store holds every file as the library has it
// (at once without a store), or ctx is done.
func (c *Catalog) Wait(ctx context.Context) error {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	if c.st == nil {
		return nil
	}
	select {
	case <-c.searched:
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		c.mu.Lock()
		idle := len(c.queue) == 0 && len(c.busy) == 0 && len(c.failed) == 0
		ch := c.changed
		c.mu.Unlock()
		if idle && c.current() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
