// Package catalog joins the session library and the index store: it
// fills the library at start (from the store's kept indexes where the
// files are unchanged, reading only appended bytes where they grew),
// keeps the store current from the library's change feed, builds the
// full-text index of every entry, reports indexing progress, and answers
// searches (through the store's word index, or without a store by a
// bounded scan of the files).
package catalog

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
)

// Options configure a Catalog.
type Options struct {
	// Store keeps indexes and the search index across runs; nil runs
	// without one (every start reads every file; search scans).
	Store  *store.Store
	Logger *slog.Logger
	// OnFile, when set, is called before each file of the first fill is
	// loaded (tests hold the fill half way with it).
	OnFile func(path string)
}

// Catalog is the library, the store and the search index, kept together.
type Catalog struct {
	lib *sessions.Library
	st  *store.Store
	log *slog.Logger
	opt Options

	ready     chan struct{} // closed when every file is in the library
	searched  chan struct{} // closed when every file's entries are in the search index
	readyOnce sync.Once
	srchOnce  sync.Once

	prog progress

	mu     sync.Mutex
	files  map[string]*fileState // search index state, by file
	queue  []string              // files to bring up to date, live changes first
	queued map[string]bool
	live   map[string]bool // queued files that changed since the start
	busy   map[string]bool
	wake   chan struct{}

	places placeCache
}

// fileState is what the search index holds of one file.
type fileState struct {
	epoch uint64 // the session epoch its documents were read in
	docN  int    // entries [0, docN) have their documents in the store
	valid bool   // the store's documents of the file belong to epoch (else delete them first)
	saved uint64 // the generation whose index the store holds
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
func New(lib *sessions.Library, opt Options) *Catalog {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	c := &Catalog{lib: lib, st: opt.Store, log: opt.Logger, opt: opt,
		ready: make(chan struct{}), searched: make(chan struct{}),
		files: map[string]*fileState{}, queued: map[string]bool{}, live: map[string]bool{}, busy: map[string]bool{},
		wake: make(chan struct{}, 1)}
	c.prog.start = time.Now()
	if c.st != nil {
		c.st.OnMoved(c.requeue)
	}
	return c
}

// Loaded returns a catalog over a library that is already filled (tests,
// the demo): ready at once, and searching by scanning when st is nil.
func Loaded(lib *sessions.Library, opt Options) *Catalog {
	c := New(lib, opt)
	c.markReady()
	if c.st == nil {
		c.srchOnce.Do(func() { close(c.searched) })
	}
	return c
}

// Library returns the catalog's library.
func (c *Catalog) Library() *sessions.Library { return c.lib }

// Ready is closed once every file under the root is in the library.
func (c *Catalog) Ready() <-chan struct{} { return c.ready }

// SearchReady is closed once the search index covers every file (at once without a store).
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

// Progress returns how far indexing is.
func (c *Catalog) Progress() Progress {
	p := Progress{Indexing: c.Indexing(), FilesDone: c.prog.filesDone.Load(), FilesTotal: c.prog.filesTotal.Load(),
		BytesDone: c.prog.bytesDone.Load(), BytesTotal: c.prog.bytesTotal.Load(),
		SearchDone: c.prog.searchDone.Load(), SearchTotal: c.prog.searchTotal.Load()}
	select {
	case <-c.searched:
	default:
		p.Searching = true
	}
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

// Run fills the library from the store and the files, then keeps the
// store and the search index current with the library's changes until
// ctx is done. Store failures are logged, never fatal: a damaged store is
// emptied and rebuilt.
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
		c.srchOnce.Do(func() { close(c.searched) })
		<-ctx.Done()
		return nil
	}
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() { c.worker(ctx) })
	}
	<-ctx.Done()
	return nil
}

// follow queues the files of the library's changes for the store.
func (c *Catalog) follow(ctx context.Context, changes <-chan sessions.Change) {
	for {
		select {
		case <-ctx.Done():
			return
		case ch, ok := <-changes:
			if !ok {
				return
			}
			if ch.File == "" || c.st == nil || c.Indexing() {
				continue // during the fill: its own changes, and fill queues every file after it
			}
			c.enqueue(ch.File, true)
		}
	}
}

// enqueue asks the workers to bring file's store record and documents up
// to date; live changes go before the backlog of a first build.
func (c *Catalog) enqueue(file string, live bool) {
	c.mu.Lock()
	switch {
	case live && !c.live[file]:
		if c.queued[file] {
			c.queue = slices.DeleteFunc(c.queue, func(f string) bool { return f == file })
		}
		c.live[file] = true
		c.queue = append([]string{file}, c.queue...)
	case !c.queued[file]:
		c.queue = append(c.queue, file)
	}
	c.queued[file] = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// fileInfo is one file under the root, as the start found it.
type fileInfo struct {
	path string
	size int64
	mod  time.Time
	rec  *store.Record
}

// fill puts every file under the root into the library: restored from
// the store's kept index when it has one, else read. The newest files go
// first, so the sessions page shows the recent ones soonest. With an
// empty store, only the newest few: the others follow oldest first, each
// read once for the library and the search index together (fuser).
func (c *Catalog) fill(ctx context.Context) error {
	defer c.markReady()
	paths, err := sessions.SessionFiles(c.lib.Root)
	if err != nil {
		return err
	}
	recs := map[string]*store.Record{}
	empty := false // the store holds no record: documents are built as the files are read
	if c.st != nil {
		all, err := c.st.All()
		if err != nil {
			c.storeFailed(err)
		}
		empty = err == nil && len(all) == 0
		for i := range all {
			recs[all[i].File] = &all[i]
		}
	}
	files := make([]fileInfo, 0, len(paths))
	var total int64
	for _, p := range paths {
		size, mod, err := sessions.Stat(p)
		if err != nil {
			size = 0
		}
		files = append(files, fileInfo{path: p, size: size, mod: mod, rec: recs[p]})
		total += size
	}
	slices.SortFunc(files, func(a, b fileInfo) int { return b.mod.Compare(a.mod) })
	c.prog.filesTotal.Store(int64(len(files)))
	c.prog.bytesTotal.Store(total)

	// An empty store (a first start, or after a reset): each file's
	// documents are built as the library reads it (fuse), oldest file
	// first, the order the documents must have; but the newest files
	// first of all, on a goroutine of their own, so that the sessions
	// page lists them at once, into a batch committed last.
	plain, first := len(files), 0
	if empty && fuseFirst {
		plain = 0
		for sum := int64(0); first < len(files) && sum < min(total/firstShare, firstMax); first++ {
			sum += files[first].size
		}
	}
	var late *fuser
	var lateWG sync.WaitGroup
	if first > 0 {
		late = &fuser{c: c, b: c.st.Batch(), hold: true}
		lateWG.Go(func() {
			for i := first - 1; i >= 0 && ctx.Err() == nil; i-- { // the oldest of them first, as their documents are numbered
				if c.opt.OnFile != nil {
					c.opt.OnFile(files[i].path)
				}
				late.load(&files[i])
				c.prog.filesDone.Add(1)
				c.prog.bytesDone.Add(files[i].size)
			}
		})
	}
	type job struct {
		f    *fileInfo
		fuse bool
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range cmp.Or(fillers, max(2, runtime.GOMAXPROCS(0))) {
		wg.Go(func() {
			var fz *fuser
			for j := range jobs {
				if c.opt.OnFile != nil {
					c.opt.OnFile(j.f.path)
				}
				if j.fuse {
					if fz == nil {
						fz = &fuser{c: c, b: c.st.Batch()}
					}
					fz.load(j.f)
				} else {
					c.load(j.f)
				}
				c.prog.filesDone.Add(1)
				c.prog.bytesDone.Add(j.f.size)
			}
			if fz != nil {
				fz.commit()
			}
		})
	}
	for i := first; i < len(files); i++ {
		if ctx.Err() != nil {
			break
		}
		if i < plain {
			jobs <- job{f: &files[i]}
		} else {
			jobs <- job{f: &files[len(files)-1-(i-first)], fuse: true}
		}
	}
	close(jobs)
	wg.Wait()
	lateWG.Wait()
	if late != nil {
		late.commit() // after every other batch: the newest documents numbered last
	}
	if c.st == nil {
		return nil
	}
	if _, err := c.st.Retain(paths); err != nil {
		c.storeFailed(err)
	}
	// The search index and the kept indexes catch up in the background,
	// oldest file first: documents are numbered in the order added, and
	// that order is what "recent first" means to the ranking.
	c.prog.searchTotal.Store(int64(len(files)))
	for i := len(files) - 1; i >= 0; i-- {
		c.enqueue(files[i].path, false)
	}
	c.checkSearched()
	return nil
}

// firstShare and firstMax: a fused first fill reads the newest files
// first as any fill does, up to 1/firstShare of the bytes and at most
// firstMax, so the sessions page shows recent sessions at once. Their
// documents wait in a batch of their own until the others are in (they
// are numbered last), so firstMax is what one page of recent sessions
// takes, not more.
var (
	firstShare int64 = 16
	firstMax   int64 = 16 << 20
)

// fillers, when not 0, is how many goroutines fill the library (tests).
var fillers int

// fuseFirst, when false, has a first build read each file plainly and
// sync it after, as a fill into a store that holds records does (tests
// compare the two).
var fuseFirst = true

// fuser is a fill goroutine's part of a first build: it puts files into
// the library and their documents and records into its batch in one
// read (Library.RefreshEach), as sync would have.
type fuser struct {
	c    *Catalog
	b    *store.Batch
	bufs syncBufs
	text int  // text in the batch
	hold bool // the batch is committed by the caller, once (the newest files')
}

// load puts f into the library and its documents and record into the
// batch: those the read made where they are the library's session, else
// sync's.
func (z *fuser) load(f *fileInfo) {
	c, b, file := z.c, z.b, f.path
	b.DeleteDocs(file)
	g := z.bufs.gather(b, file, sessions.ProjectOf(file))
	got, err := c.lib.RefreshEachTap(file, func(pos int, e *sessions.Entry, line []byte) { g.entry(pos, e, line) }, &g.tap)
	snap, ok := c.lib.SnapshotFile(file, true)
	if err != nil || got.Epoch == 0 || !ok || snap.Epoch != got.Epoch {
		// Not what the library holds (a version 1 file, a file read again
		// meanwhile, not a session): what it is gets read again, in its
		// place in the order (sync first drops the documents flushed to
		// the batch: the file has no state yet).
		g.drop()
		z.add(c.sync(b, file, &z.bufs))
		return
	}
	g.done()
	b.Put(store.Record{File: file, Size: snap.Size, ModTime: snap.ModTime.UnixNano(), Stamp: stamp(got.Entries), Blob: snap.Index})
	c.mu.Lock()
	c.files[file] = &fileState{epoch: snap.Epoch, docN: got.Entries, valid: true, saved: snap.Gen}
	c.mu.Unlock()
	if testFused != nil {
		testFused(file)
	}
	z.add(g.text)
}

// add counts text added to the batch, and commits it past batchText
// unless it is held.
func (z *fuser) add(text int) {
	if z.text += text; z.text >= batchText && !z.hold {
		z.commit()
	}
}

// commit commits the fuser's batch.
func (z *fuser) commit() {
	z.b, z.text = z.c.commit(z.b), 0
}

// commit commits b and returns the batch to go on with: b, or a new one
// if the commit failed (the store may have been reset).
func (c *Catalog) commit(b *store.Batch) *store.Batch {
	if err := b.Commit(); err != nil {
		c.storeFailed(err)
		return c.st.Batch()
	}
	return b
}

// load puts one file into the library.
func (c *Catalog) load(f *fileInfo) {
	if f.rec == nil {
		c.lib.Refresh(f.path)
		return
	}
	rec, ok, err := c.st.Get(f.path)
	if err != nil || !ok {
		if err != nil {
			c.storeFailed(err)
		}
		c.lib.Refresh(f.path)
		return
	}
	_, reused, _ := c.lib.Restore(f.path, rec.Blob)
	if !reused {
		return // read in full: its documents in the store go (see sync)
	}
	snap, ok := c.lib.SnapshotFile(f.path, false)
	if !ok {
		return
	}
	docN := stampDocs(rec.Stamp)
	if docN > snap.Entries {
		docN = 0
	}
	c.mu.Lock()
	st := &fileState{epoch: snap.Epoch, docN: docN, valid: true}
	if snap.Entries == docN && snap.Size == rec.Size && snap.ModTime.UnixNano() == rec.ModTime {
		st.saved = snap.Gen // nothing new: the record is current
	}
	c.files[f.path] = st
	c.mu.Unlock()
}

// stamp encodes what a record's documents cover.
func stamp(docN int) []byte { return binary.AppendUvarint([]byte{1}, uint64(docN)) }

func stampDocs(b []byte) int {
	if len(b) < 2 || b[0] != 1 {
		return 0
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n > 1<<31 {
		return 0
	}
	return int(n)
}

// storeFailed logs a store error; a damaged store is emptied and every
// file queued to be written again.
func (c *Catalog) storeFailed(err error) {
	if !errors.Is(err, store.ErrCorrupt) {
		c.log.Warn("index store", "err", err)
		return
	}
	c.log.Warn("index store damaged: rebuilding it", "err", err)
	if rerr := c.st.Reset(); rerr != nil {
		c.log.Error("index store: cannot rebuild it", "err", rerr)
		return
	}
	c.requeue()
}

// requeue forgets what the store held and queues every file to be
// written again: the store was emptied, or is another process's rebuilt
// one (store.OnMoved).
func (c *Catalog) requeue() {
	c.mu.Lock()
	c.files = map[string]*fileState{}
	c.mu.Unlock()
	for _, f := range c.lib.Known() {
		c.enqueue(f, false)
	}
}

// batchText is how much text a worker gathers before it commits.
const batchText = 16 << 20

// worker brings queued files up to date in the store, committing a batch
// when it holds batchText of text, when it took a live change, or when
// the queue is empty.
func (c *Catalog) worker(ctx context.Context) {
	b := c.st.Batch()
	bufs := &syncBufs{}
	text := 0
	var done []string // files of the batch, released after its commit
	commit := func() {
		b = c.commit(b)
		c.mu.Lock()
		for _, f := range done {
			delete(c.busy, f)
		}
		c.mu.Unlock()
		c.prog.searchDone.Add(int64(len(done)))
		done, text = done[:0], 0
		c.checkSearched()
		select { // a file another worker waited for may be free now
		case c.wake <- struct{}{}:
		default:
		}
	}
	for {
		if ctx.Err() != nil { // stopping: keep what is done, leave the rest for the next start
			if len(done) > 0 {
				commit()
			}
			return
		}
		f, live := c.next()
		if f == "" {
			if len(done) > 0 {
				commit()
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-c.wake:
				continue
			}
		}
		text += c.sync(b, f, bufs)
		done = append(done, f)
		if live || text >= batchText {
			commit()
		}
	}
}

// next takes the first queued file no worker holds, and reports whether
// it came from a live change.
func (c *Catalog) next() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, f := range c.queue {
		if c.busy[f] {
			continue
		}
		if i == 0 {
			c.queue = c.queue[1:] // the usual case, in constant time: a first fill queues every file
		} else {
			c.queue = slices.Delete(c.queue, i, i+1)
		}
		live := c.live[f]
		delete(c.queued, f)
		delete(c.live, f)
		c.busy[f] = true
		return f, live
	}
	return "", false
}

// checkSearched closes SearchReady when the first build is done.
func (c *Catalog) checkSearched() {
	select {
	case <-c.ready:
	default:
		return
	}
	c.mu.Lock()
	idle := len(c.queue) == 0 && len(c.busy) == 0
	c.mu.Unlock()
	if idle {
		c.srchOnce.Do(func() { close(c.searched) })
	}
}

// sync adds to b what file needs: its record (kept index) and the
// documents of its entries not yet indexed; the documents of a file read
// again are replaced, those of a gone file dropped. It returns the bytes
// of text added. The texts are decoded into bufs.
func (c *Catalog) sync(b *store.Batch, file string, bufs *syncBufs) int {
	snap, ok := c.lib.SnapshotFile(file, false)
	c.mu.Lock()
	st := c.files[file]
	c.mu.Unlock()
	if ok && st != nil && st.valid && st.epoch == snap.Epoch && st.saved == snap.Gen && st.docN == snap.Entries {
		return 0 // the store is current
	}
	if ok {
		snap, ok = c.lib.SnapshotFile(file, true)
	}
	if !ok {
		b.Delete(file)
		c.mu.Lock()
		delete(c.files, file)
		c.mu.Unlock()
		return 0
	}
	if st == nil {
		st = &fileState{}
	}
	if !st.valid || st.epoch != snap.Epoch {
		b.DeleteDocs(file)
		st = &fileState{epoch: snap.Epoch, valid: true}
	}
	text := 0
	docN := st.docN
	if docN < snap.Entries {
		g := bufs.gather(b, file, snap.Project)
		epoch, err := c.lib.ReadLinesAsWritten(file, docN, func(pos int, e *sessions.Entry, line []byte) error {
			if pos >= snap.Entries {
				return errStop
			}
			g.entry(pos, e, line)
			return nil
		})
		if err != nil && !errors.Is(err, errStop) || epoch != snap.Epoch {
			if g.flushed {
				// Some of what was read is in the batch: the file's record
				// and documents go, and it is indexed again from the start.
				b.Delete(file)
				c.mu.Lock()
				delete(c.files, file)
				c.mu.Unlock()
			}
			g.drop()
			c.enqueue(file, true) // changed while read: again
			return 0
		}
		g.done()
		text = g.text
		docN = snap.Entries
	}
	// Without a kept index (an old-format file, an unfinished last line)
	// the next start reads the file again and replaces its documents.
	b.Put(store.Record{File: file, Size: snap.Size, ModTime: snap.ModTime.UnixNano(), Stamp: stamp(docN), Blob: snap.Index})
	c.mu.Lock()
	c.files[file] = &fileState{epoch: snap.Epoch, docN: docN, valid: true, saved: snap.Gen}
	c.mu.Unlock()
	return text
}

// syncBufs is the memory a worker's sync reuses from file to file.
type syncBufs struct {
	ar   textArena
	docs []store.Doc
	g    gatherer
}

// gatherer makes the documents of a file's entries as they are read and
// adds them to a batch every flushText of text, so that a long file's
// texts reuse the arena's memory.
type gatherer struct {
	bufs          *syncBufs
	b             *store.Batch
	file, project string
	docs          []store.Doc
	text          int     // text made
	pending       int     // text not yet added to the batch
	flushed       bool    // some of the file's documents are in the batch
	tap           lineTap // a first read's lines as it parses them (fuser)
}

// gather starts gathering file's documents into b.
func (bufs *syncBufs) gather(b *store.Batch, file, project string) *gatherer {
	bufs.ar.reset()
	bufs.g = gatherer{bufs: bufs, b: b, file: file, project: project, docs: bufs.docs[:0]}
	bufs.g.tap.g = &bufs.g
	return &bufs.g
}

// flushIfFull adds the documents made so far to the batch once they hold
// flushText of text.
func (g *gatherer) flushIfFull() {
	if g.pending >= flushText {
		g.flush()
		g.flushed = true
		if testFlushed != nil {
			testFlushed(g.file)
		}
	}
}

// entry makes the documents of the entry at pos, whose line is line:
// from what g.tap read of it when it did (the line read by
// Library.RefreshEachTap with g.tap), else from the line.
func (g *gatherer) entry(pos int, e *sessions.Entry, line []byte) {
	var ps []piece
	if d, f, ok := g.tap.take(line); ok {
		var more bool
		ps, more = d.ofEntry(e)
		if more {
			ps = d.assemble(ps, e, f)
		}
		g.bufs.ar.out = ps
		d.line, d.buf = nil, nil
	} else {
		g.flushIfFull()
		ps = buildPieces(&g.bufs.ar, e, line)
	}
	for _, p := range ps {
		g.docs = append(g.docs, store.Doc{EntryID: e.ID, Position: pos, Part: p.part, Type: p.typ,
			Role: p.role, Time: entryTime(e), Project: g.project, Text: p.text})
		g.text += len(p.text)
		g.pending += len(p.text)
	}
}

// flush adds the documents made so far to the batch (which copies the
// texts it keeps).
func (g *gatherer) flush() {
	g.b.AddDocs(g.file, g.docs)
	g.bufs.ar.reset()
	clear(g.docs)
	g.docs, g.pending = g.docs[:0], 0
}

// done adds the rest of the documents to the batch.
func (g *gatherer) done() {
	g.tap.done()
	g.flush()
	g.bufs.docs = g.docs
}

// drop forgets the documents not yet added.
func (g *gatherer) drop() {
	g.tap.done()
	g.bufs.ar.reset()
	clear(g.docs)
	g.bufs.docs = g.docs[:0]
}

var errStop = errors.New("stop")

// flushText is how much text sync gathers before it adds it to the batch.
var flushText = arenaKeep / 2

// testFused, when set, is called after a first build's read of file made its documents.
var testFused func(file string)

// testFlushed, when set, is called after sync added part of file's documents.
var testFlushed func(file string)

func entryTime(e *sessions.Entry) int64 {
	if e.Time == sessions.NoTime {
		return 0
	}
	return e.Time
}

// Wait blocks until the library is filled and the store holds what the
// library holds now: every file's kept index and documents are of its
// current generation, and gone files are gone (tests, benchmarks).
// Without a store it only waits for the library.
func (c *Catalog) Wait(ctx context.Context) error {
	for {
		if !c.Indexing() && c.current() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// current reports whether the store is up to date with the library.
func (c *Catalog) current() bool {
	if c.st == nil {
		return true
	}
	known := c.lib.Known()
	c.mu.Lock()
	idle := len(c.queue) == 0 && len(c.busy) == 0
	states := make(map[string]fileState, len(c.files))
	for f, st := range c.files {
		states[f] = *st
	}
	c.mu.Unlock()
	if !idle {
		return false
	}
	in := make(map[string]bool, len(known))
	for _, f := range known {
		snap, ok := c.lib.SnapshotFile(f, false)
		if !ok {
			continue // not a session
		}
		in[f] = true
		if st, ok := states[f]; !ok || st.saved != snap.Gen {
			return false
		}
	}
	for f := range states {
		if !in[f] {
			return false
		}
	}
	return true
}
