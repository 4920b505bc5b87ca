package watcher

import (
	"slices"
	"sync"
)

// hub fans events out to subscribers. Each subscriber has its own bounded
// queue and a goroutine feeding its channel, so publishing never waits.
type hub struct {
	mu     sync.Mutex
	subs   map[*sub]struct{}
	closed bool
	size   int // queue bound per subscriber
}

// sub is one subscription.
type sub struct {
	out  chan Event
	wake chan struct{} // cap 1: the queue got an event
	done chan struct{} // closed to end the subscription
	stop sync.Once

	mu    sync.Mutex
	queue []Event
	limit int
}

// subscribe registers a subscriber; the returned channel is closed by cancel or close.
func (h *hub) subscribe() (<-chan Event, func()) {
	s := &sub{out: make(chan Event), wake: make(chan struct{}, 1), done: make(chan struct{})}
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
func (h *hub) publish(e Event) {
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
func (s *sub) push(e Event) {
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
		s.queue[0] = Event{}
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
func collapse(q []Event) []Event {
	out := make([]Event, 0, len(q))
	at := map[string]int{}
	var lastErr *Event
	for i := range q {
		e := q[i]
		if e.SessionID == "" {
			if e.Kind == KindError {
				lastErr = &q[i]
			}
			continue
		}
		c := Event{SessionID: e.SessionID, File: e.File, Kind: KindReload, Leaf: e.Leaf}
		if e.Kind == KindRemove {
			c = Event{SessionID: e.SessionID, File: e.File, Kind: KindRemove, Error: e.Error}
		}
		if k, ok := at[e.SessionID]; ok {
			out[k] = c
		} else {
			at[e.SessionID] = len(out)
			out = append(out, c)
		}
	}
	if lastErr != nil {
		out = append(out, *lastErr)
	}
	return out
}
