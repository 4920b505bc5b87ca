package library

import (
	"container/list"
	"sync"
	"time"

	"github.com/piweb/piweb/sessions"
)

// DefaultCacheBytes is how much memory the library's loaded trees may take
// by default (estimated: see cost), whatever the size of the root.
const DefaultCacheBytes = 64 << 20

// cacheIdle is how long a tree nobody reads stays loaded.
const cacheIdle = 10 * time.Minute

// cache keeps the loaded trees of the library's files, the most recently
// used first, dropping the least recently used past its limit in bytes and
// those unused for cacheIdle; cold trees (read by the library for itself,
// used by no reader yet) take a quarter of the limit at most. A dropped tree is read again when needed; a
// reader that holds one keeps it alive as long as it reads it.
type cache struct {
	mu    sync.Mutex
	limit int64
	size  int64
	cold  int64     // of size, the cold trees'
	lru   list.List // of *slot, most recent first
	slots map[*file]*list.Element
	sweep *time.Timer // drops idle trees while any is loaded
}

type slot struct {
	f    *file
	cost int64
	used time.Time
	cold bool // loaded by the library's own reading, no reader has used it since
}

// TreeCost estimates the memory a session's tree holds: its entries'
// index records, ids, links and children, and its diagnostics.
func TreeCost(s *sessions.Session) int64 {
	return 4096 + int64(len(s.Entries))*320 + int64(len(s.Diags))*96
}

// put makes s f's loaded tree, the most recently used.
func (c *cache) put(f *file, s *sessions.Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slots == nil {
		c.slots = map[*file]*list.Element{}
	}
	now := time.Now()
	if el, ok := c.slots[f]; ok {
		sl := el.Value.(*slot)
		c.size += TreeCost(s) - sl.cost
		if sl.cold {
			c.cold += TreeCost(s) - sl.cost
		}
		sl.cost, sl.used = TreeCost(s), now
		c.lru.MoveToFront(el)
	} else {
		sl := &slot{f: f, cost: TreeCost(s), used: now, cold: true}
		c.slots[f] = c.lru.PushFront(sl)
		c.size += sl.cost
		c.cold += sl.cost
	}
	c.trimLocked(f, now)
	if c.sweep == nil {
		c.sweep = time.AfterFunc(cacheIdle, c.idle)
	}
}

// touch marks f's tree used now (warm).
func (c *cache) touch(f *file) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.slots[f]; ok {
		sl := el.Value.(*slot)
		if sl.cold {
			c.cold -= sl.cost
		}
		sl.used, sl.cold = time.Now(), false
		c.lru.MoveToFront(el)
	}
}

// release drops f's tree if it is cold.
func (c *cache) release(f *file) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.slots[f]; ok && el.Value.(*slot).cold {
		c.removeLocked(el)
	}
}

// drop forgets f's tree.
func (c *cache) drop(f *file) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.slots[f]; ok {
		c.removeLocked(el)
	}
}

// trim drops trees past the limit, keeping keep's.
func (c *cache) trim(keep *file) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trimLocked(keep, time.Now())
}

// trimLocked drops the least recently used trees while the cache holds
// more than its limit, or its cold trees more than a quarter of it (never
// keep's: it is in use), and those idle too long.
func (c *cache) trimLocked(keep *file, now time.Time) {
	for el := c.lru.Back(); el != nil; {
		sl := el.Value.(*slot)
		prev := el.Prev()
		if sl.f != keep && (c.size > c.limit || sl.cold && c.cold > c.limit/4 || now.Sub(sl.used) > cacheIdle) {
			c.removeLocked(el)
		}
		el = prev
	}
}

func (c *cache) removeLocked(el *list.Element) {
	sl := el.Value.(*slot)
	c.lru.Remove(el)
	delete(c.slots, sl.f)
	c.size -= sl.cost
	if sl.cold {
		c.cold -= sl.cost
	}
	sl.f.snap.Store(nil)
}

// idle drops the trees nobody used for cacheIdle, and runs again while any is loaded.
func (c *cache) idle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trimLocked(nil, time.Now())
	if c.lru.Len() > 0 {
		c.sweep.Reset(cacheIdle)
	} else {
		c.sweep = nil
	}
}

// Bytes returns the estimated memory of the trees loaded now.
func (l *Library) CacheBytes() int64 {
	l.cache.mu.Lock()
	defer l.cache.mu.Unlock()
	return l.cache.size
}
