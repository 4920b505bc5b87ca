package web

import (
	"slices"
	"sync"
	"time"
)

// cacheIdle is how long a value nobody asked for stays in an lru (as the
// library's trees: a layout keeps its session's tree alive).
const cacheIdle = 10 * time.Minute

// lru keeps the values of the most recently used keys: at most max of
// them, as many as budget bytes hold (0: no bound in bytes) by the costs
// put gives them (the most recent is kept whatever its cost), and none
// unused for cacheIdle.
type lru[K comparable, V any] struct {
	mu     sync.Mutex
	max    int
	budget int64
	size   int64
	keys   []K // least recently used first
	m      map[K]costed[V]
	sweep  *time.Timer // drops idle values while there are any
}

// costed is a value, its estimated size in bytes, and when it was last used.
type costed[V any] struct {
	v    V
	cost int64
	used time.Time
}

func newLRU[K comparable, V any](max int, budget int64) *lru[K, V] {
	return &lru[K, V]{max: max, budget: budget, m: map[K]costed[V]{}}
}

// get returns the value of k (the zero value when there is none).
func (c *lru[K, V]) get(k K) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if ok {
		c.set(k, e.v, e.cost)
	}
	return e.v
}

// put sets the value of k and its cost, dropping the least recently used
// keys past the bounds.
func (c *lru[K, V]) put(k K, v V, cost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set(k, v, cost)
}

// getOrPut returns the value of k, set to mk() when there is none (its
// cost as it was, or 0 until put gives one).
func (c *lru[K, V]) getOrPut(k K, mk func() V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		e.v = mk()
	}
	c.set(k, e.v, e.cost)
	return e.v
}

func (c *lru[K, V]) set(k K, v V, cost int64) {
	c.size += cost - c.m[k].cost
	c.m[k] = costed[V]{v, cost, time.Now()}
	if i := slices.Index(c.keys, k); i >= 0 {
		c.keys = slices.Delete(c.keys, i, i+1)
	}
	c.keys = append(c.keys, k)
	for len(c.keys) > 1 && (len(c.keys) > c.max || c.budget > 0 && c.size > c.budget) {
		c.dropOldest()
	}
	if c.sweep == nil {
		c.sweep = time.AfterFunc(cacheIdle, c.dropIdle)
	}
}

// setCost sets the cost of k's value, if k still has one.
func (c *lru[K, V]) setCost(k K, cost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.set(k, e.v, cost)
	}
}

// clear drops every value, and the sweep.
func (c *lru[K, V]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.keys) > 0 {
		c.dropOldest()
	}
	if c.sweep != nil {
		c.sweep.Stop()
		c.sweep = nil
	}
}

func (c *lru[K, V]) dropOldest() {
	c.size -= c.m[c.keys[0]].cost
	delete(c.m, c.keys[0])
	c.keys = c.keys[1:]
}

// dropIdle drops the values unused for cacheIdle, and sets the sweep again
// for when the oldest left will be (none left: no sweep until a value is).
func (c *lru[K, V]) dropIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if next := c.dropIdleAt(time.Now()); next > 0 {
		c.sweep.Reset(next)
	} else {
		c.sweep = nil
	}
}

// dropIdleAt drops the values unused for cacheIdle at now, and returns how
// long until the oldest left is (0: none is left).
func (c *lru[K, V]) dropIdleAt(now time.Time) time.Duration {
	for len(c.keys) > 0 && now.Sub(c.m[c.keys[0]].used) >= cacheIdle {
		c.dropOldest()
	}
	if len(c.keys) == 0 {
		return 0
	}
	return max(time.Millisecond, cacheIdle-now.Sub(c.m[c.keys[0]].used))
}
