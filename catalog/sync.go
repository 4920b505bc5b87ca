package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"

	"github.com/piweb/piweb/search"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
)

// Batches: a worker saves up to batchFiles files, or batchText bytes of
// texts, in one transaction.
const (
	batchFiles = 64
	batchText  = 16 << 20
)

// maxText bounds the bytes of one piece's text the store indexes (a tool
// output of many megabytes): a hit beyond them is found by scanning.
const maxText = 1 << 20

// worker saves queued files into the store until ctx is done.
func (c *Catalog) worker(ctx context.Context) {
	for {
		batch := c.take(ctx)
		if batch == nil {
			return
		}
		c.saveBatch(ctx, batch)
	}
}

// take waits for queued files no other worker is saving, and takes up to
// batchFiles of them; nil once ctx is done.
func (c *Catalog) take(ctx context.Context) []string {
	for {
		c.mu.Lock()
		var out []string
		rest := c.queue[:0:0]
		for _, f := range c.queue {
			if len(out) < batchFiles && !c.busy[f] {
				out = append(out, f)
				c.busy[f] = true
				delete(c.queued, f)
				continue
			}
			rest = append(rest, f)
		}
		c.queue = rest
		if len(out) > 0 {
			c.notifyLocked()
		}
		c.mu.Unlock()
		if len(out) > 0 {
			return out
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.wake:
		}
	}
}

// saveBatch saves the files of batch in one transaction, as many as
// batchText allows (the others go back to the queue).
func (c *Catalog) saveBatch(ctx context.Context, batch []string) {
	c.mu.Lock()
	epoch := c.epoch
	c.mu.Unlock()
	var saves []*store.Save
	var gens []uint64
	var saved, gone, back []string
	text := 0
	for k, path := range batch {
		if text >= batchText {
			back = append(back, batch[k:]...)
			break
		}
		c.giveWay(ctx)
		sv, gen, err := c.prepare(path)
		switch {
		case errors.Is(err, errGone):
			gone = append(gone, path)
		case err != nil:
			c.log.Warn("index store: cannot read a session for it", "file", path, "err", err)
		default:
			saves = append(saves, sv)
			gens = append(gens, gen)
			saved = append(saved, path)
			for _, d := range sv.Docs {
				text += len(d.Text)
			}
		}
	}
	var err error
	if len(gone) > 0 {
		err = c.st.Remove(ctx, "", gone...)
	}
	if err == nil && len(saves) > 0 {
		c.giveWay(ctx)
		err = c.st.SaveMany(ctx, saves)
	}
	if err == nil {
		// Before any waiter wakes: a search after Wait reads the new facts.
		c.facts.forget(append(saved, gone...)...)
	}
	c.mu.Lock()
	for _, p := range batch {
		delete(c.busy, p)
	}
	if err != nil && ctx.Err() == nil {
		for _, p := range append(saved, gone...) {
			c.failed[p] = true
		}
		c.scheduleRetryLocked()
	} else if err == nil && epoch == c.epoch {
		// (A store made again meanwhile holds only what this batch wrote:
		// every file was queued again, read from the start.)
		for k, p := range saved {
			sv := saves[k]
			delete(c.failed, p)
			c.files[p] = &fileState{stamp: sv.File.Stamp, docs: sv.File.Docs, gen: gens[k]}
		}
		for _, p := range gone {
			delete(c.failed, p)
			delete(c.files, p)
		}
		if len(c.failed) == 0 {
			c.backoff = 0
		}
	}
	c.notifyLocked()
	c.mu.Unlock()
	for _, p := range back {
		c.enqueue(p, false)
	}
	if err != nil {
		if ctx.Err() == nil {
			c.storeFailed(err)
		}
	} else {
		if c.down.Swap(false) {
			c.log.Info("index store works again")
		}
		c.prog.searchDone.Add(int64(len(saved) + len(gone)))
	}
	c.checkSearched(ctx)
}

// giveWay calls YieldTo's function, if any: pages go first.
func (c *Catalog) giveWay(ctx context.Context) {
	if y := c.yield.Load(); y != nil {
		(*y)(ctx)
	}
}

// scheduleRetryLocked tries the failed files again after a pause that
// grows with each failure, up to half a minute (c.mu held).
func (c *Catalog) scheduleRetryLocked() {
	c.backoff = min(max(2*c.backoff, 250*time.Millisecond), 30*time.Second)
	if c.retry != nil {
		c.retry.Stop()
	}
	c.retry = time.AfterFunc(c.backoff, func() {
		c.mu.Lock()
		var again []string
		for p := range c.failed {
			again = append(again, p)
		}
		c.mu.Unlock()
		for _, p := range again {
			c.enqueue(p, true)
		}
	})
}

// checkSearched marks the first build done once nothing is queued or
// being saved, and the store's text index is made.
func (c *Catalog) checkSearched(ctx context.Context) {
	c.mu.Lock()
	idle := len(c.queue) == 0 && len(c.busy) == 0
	c.mu.Unlock()
	if idle && !c.Indexing() {
		c.markSearched(ctx)
	}
}

// errGone says a file is no longer in the library: the store forgets it.
var errGone = errors.New("the file is no longer a session in the library")

// prepare makes the save that brings the store up to date with path: its
// record (stamp, list row, places, labels), and the texts and usage of the
// entries the store does not hold (those appended since, when the file
// only grew; else all of them, replacing the old).
func (c *Catalog) prepare(path string) (*store.Save, uint64, error) {
	gen, _ := c.lib.Gen(path) // before the read: a change after it is saved again
	s, err := c.lib.Peek(path)
	if err != nil {
		why, ok := c.lib.Problems()[path]
		if !ok {
			return nil, 0, errGone
		}
		sv := &store.Save{File: store.File{Path: path, Problem: why.Error(), Meta: []byte("{}")}, Reset: true}
		if fi, err := os.Stat(path); err == nil {
			sv.File.Stamp = store.Stamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
		}
		return sv, 0, nil
	}
	m, ok := c.lib.MetaOf(path)
	if !ok {
		return nil, 0, errGone
	}
	f, err := c.lib.OpenRead(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	stamp, err := store.StampAt(f, s.Size, s.ModTime)
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	prev := c.files[path]
	c.mu.Unlock()
	reset := prev == nil || prev.docs > len(s.Entries) || !holds(f, prev.stamp)
	from := 0
	if !reset {
		from = prev.docs
	}
	if reset || from >= len(s.Entries) {
		// Indexed whole (the first build reads every file), or nothing
		// new: unless a reader uses the tree, it does not stay, so the
		// build neither fills the cache nor pushes out the trees people
		// read. A tree read for an append stays: the next append of a
		// live session reads only what is new.
		defer c.lib.Release(path)
	}
	meta, err := json.Marshal(m)
	if err != nil {
		return nil, 0, err
	}
	sv := &store.Save{
		File: store.File{Path: path, Stamp: stamp, Docs: len(s.Entries), SessionID: m.ID, Parent: m.ParentSession,
			Project: m.Project, Modified: m.Modified.UnixMilli(), Meta: meta},
		Reset:  reset,
		Places: packPlaces(s.Places()),
		Labels: labelsOf(s),
	}
	if sv.Extra, err = c.ledgers.Update(path, s, &m, from); err != nil {
		return nil, 0, err
	}
	err = sessions.ReadLines(s, from, func(pos int, e *sessions.Entry, line []byte) error {
		for _, p := range pieces(e, line) {
			text := p.text
			if len(text) > maxText {
				text = text[:maxText]
			}
			sv.Docs = append(sv.Docs, store.Doc{Off: e.Off, Len: e.Len, Pos: pos, Part: p.part, EntryID: e.ID,
				Role: p.role, Time: entryTime(e), Text: search.Normalize(text)})
		}
		return nil
	})
	if err != nil && !errors.Is(err, sessions.ErrChanged) {
		return nil, 0, err
	}
	return sv, min(gen, s.Gen()), nil
}

// labelsOf returns the labels in force in s, with their entries' places.
func labelsOf(s *sessions.Session) []store.Label {
	out := []store.Label{}
	for id, text := range s.Labels() {
		i, ok := s.Lookup(id)
		if !ok {
			continue
		}
		e := &s.Entries[i]
		l := store.Label{EntryID: id, Text: text, Pos: i, Off: e.Off, Len: e.Len}
		if le := s.LabelEntry(id); le >= 0 {
			l.Time = entryTime(&s.Entries[le])
		}
		out = append(out, l)
	}
	return out
}

// holds reports whether r still begins with the bytes st describes (the
// file was appended to, if anything, rather than rewritten).
func holds(r io.ReaderAt, st store.Stamp) bool {
	now, err := store.StampAt(r, st.Size, time.Unix(0, st.ModTime))
	return err == nil && now.Head == st.Head && now.Tail == st.Tail
}

// entryTime returns an entry's time in Unix ms, 0 when it has none.
func entryTime(e *sessions.Entry) int64 {
	if e.Time == sessions.NoTime {
		return 0
	}
	return e.Time
}

// packPlaces packs places (0, 1, 2 each) four to a byte.
func packPlaces(p []uint8) []byte {
	out := make([]byte, (len(p)+3)/4)
	for i, v := range p {
		out[i/4] |= (v & 3) << (2 * (i % 4))
	}
	return out
}

// placeAt reads position i of packed places (0 off the path when beyond them).
func placeAt(packed []byte, i int) uint8 {
	if i < 0 || i/4 >= len(packed) {
		return 0
	}
	return packed[i/4] >> (2 * (i % 4)) & 3
}
