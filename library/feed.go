package library

// The change feed: the library publishes every change to its sessions here,
// from one place (Library.Refresh, Add, Remove; the writers refresh after
// each write), and subscribers (the live pages, the watcher's tests) each
// get their own channel. Publishing never waits for a subscriber: one that
// falls behind has its backlog replaced by one change per session (a
// reload, or a removal when that was the session's last change), so it can
// re-sync. After a reload a client re-reads the session, and later append
// changes may name entries it already has: clients skip ids they hold.

import (
	"slices"
	"sync"
)

// Change is one change to a session, or a problem watching the files.
type Change struct {
	Key     string   `json:"key"` // the session's key ("" for an error about no session)
	File    string   `json:"file"`
	Kind    string   `json:"kind"`             // KindAppend, KindReload, KindNew, KindRemove, KindError
	Gen     uint64   `json:"gen,omitempty"`    // the session's generation after the change
	NewIDs  []string `json:"newIds,omitempty"` // ids of appended entries, in file order (KindAppend)
	Leaf    string   `json:"leaf,omitempty"`   // the leaf entry id after the change
	OldLeaf string   `json:"oldLeaf,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Change kinds.
const (
	// KindAppend reports entries appended to a session; NewIDs lists them in file order.
	KindAppend = "append"
	// KindReload reports a session to read again in full (rewritten, truncated, replaced, its key moved to this file, or changes were dropped).
	KindReload = "reload"
	// KindNew reports a session (a key) seen for the first time.
	KindNew = "new"
	// KindRemove reports a key that left the library (its file deleted, moved out, no longer readable, or a copy's key changed).
	KindRemove = "remove"
	// KindError reports a problem watching or reading files; Error says what to do about it.
	KindError = "error"
)

// defaultFeedBuffer bounds the changes queued for one subscriber.
const defaultFeedBuffer = 256

// Subscribe returns a channel of the library's changes, from now on, and a
// func to end the subscription (which closes the channel).
func (l *Library) Subscribe() (<-chan Change, func()) { return l.feed.subscribe() }

// Publish sends changes to every subscriber; the library publishes its own
// changes, and the watcher its errors.
func (l *Library) Publish(c ...Change) { l.publish(c...) }

func (l *Library) publish(cs ...Change) {
	for _, c := range cs {
		if c.Kind != "" {
			l.feed.publish(c)
		}
	}
}

// Close ends every subscription; later ones get a closed channel.
func (l *Library) Close() { l.feed.close() }

// hub fans changes out to subscribers. Each subscriber has its own bounded
// queue and a goroutine feeding its channel, so publishing never waits.
type hub struct {
	mu     sync.Mutex
	subs   map[*sub]struct{}
	closed bool
	size   int // queue bound per subscriber
}

// sub is one subscription.
type sub struct {
	out  chan Change
	wake chan struct{} // cap 1: the queue got an event
	done chan struct{} // closed to end the subscription
	stop sync.Once

	mu    sync.Mutex
	queue []Change
	limit int
}

// subscribe registers a subscriber; the returned channel is closed by cancel or close.
func (h *hub) subscribe() (<-chan Change, func()) {
	s := &sub{out: make(chan Change), wake: make(chan struct{}, 1), done: make(chan struct{})}
	h.mu.Lock()
	s.limit = max(1, h.size)
	if h.closed {
		h.mu.Unlock()
		close(s.out)
		return s.out, func() {}
	}
	if h.subs == nil {
		h.subs = map[*sub]struct{}{}
	}
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	go s.run()
	return s.out, func() {
		h.mu.Lock()
		delete(h.subs, s)
		h.mu.Unlock()
		s.end()
	}
}

// publish queues e for every subscriber.
func (h *hub) publish(e Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	for s := range h.subs {
		c := e
		c.NewIDs = slices.Clone(e.NewIDs) // each subscriber owns its events
		s.push(c)
	}
}

// close ends every subscription; later ones get a closed channel.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		s.end()
	}
	h.subs = nil
}

// push queues e; a full queue collapses into one event per session.
func (s *sub) push(e Change) {
	s.mu.Lock()
	s.queue = append(s.queue, e)
	if len(s.queue) > s.limit {
		s.queue = collapse(s.queue)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// end stops the subscription's goroutine, which then closes its channel.
func (s *sub) end() { s.stop.Do(func() { close(s.done) }) }

// run feeds the queue to the subscriber's channel.
func (s *sub) run() {
	defer close(s.out)
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.queue = nil
			s.mu.Unlock()
			select {
			case <-s.wake:
				continue
			case <-s.done:
				return
			}
		}
		e := s.queue[0]
		s.queue[0] = Change{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
		select {
		case s.out <- e:
		case <-s.done:
			return
		}
	}
}

// collapse replaces a backlog by what a client needs to re-sync: one event
// per session, in order of first appearance (a remove when that was the
// session's last event, else a reload carrying its latest file and leaf),
// then the latest error, if any. Other events without a session are dropped.
func collapse(q []Change) []Change {
	out := make([]Change, 0, len(q))
	at := map[string]int{}
	var lastErr *Change
	for i := range q {
		e := q[i]
		if e.Key == "" {
			if e.Kind == KindError {
				lastErr = &q[i]
			}
			continue
		}
		c := Change{Key: e.Key, File: e.File, Kind: KindReload, Leaf: e.Leaf}
		if e.Kind == KindRemove {
			c = Change{Key: e.Key, File: e.File, Kind: KindRemove, Error: e.Error}
		}
		if k, ok := at[e.Key]; ok {
			out[k] = c
		} else {
			at[e.Key] = len(out)
			out = append(out, c)
		}
	}
	if lastErr != nil {
		out = append(out, *lastErr)
	}
	return out
}
