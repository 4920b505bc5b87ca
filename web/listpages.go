package web

import (
	"sync"
	"sync/atomic"
)

// listPages holds drawn sessions lists by key, and the lists being drawn,
// so that however many clients ask for the same list at once it is drawn
// once: the first draws it, the others wait for it.
type listPages struct {
	drawn *lru[listKey, *drawnList]

	mu      sync.Mutex
	pending map[listKey]*listDraw // lists being drawn

	draws atomic.Int64 // lists drawn so far (tests count them)
	// Tests' hooks: drawing is called before a list is drawn, joined when
	// a request waits for a list another is drawing.
	drawing, joined func(listKey)
}

// listDraw is a list being drawn; done is closed once page or err is set.
type listDraw struct {
	done chan struct{}
	page *drawnList
	err  error
}

// listsBudget bounds the bytes of the drawn lists kept (a list of 10,000
// sessions is several megabytes, twice: plain and gzipped).
const listsBudget = 32 << 20

func newListPages(n int, budget int64) *listPages {
	return &listPages{drawn: newLRU[listKey, *drawnList](n, budget), pending: map[listKey]*listDraw{}}
}

// get returns the list of key: drawn before, being drawn for another
// request (waited for), or drawn now by draw. keep says whether the list
// may be served again to later requests (not while piweb is indexing: its
// progress bar is in the page).
func (lp *listPages) get(key listKey, keep bool, draw func() (*drawnList, error)) (*drawnList, error) {
	if keep {
		if page := lp.drawn.get(key); page != nil {
			return page, nil
		}
	}
	lp.mu.Lock()
	if d, ok := lp.pending[key]; ok {
		lp.mu.Unlock()
		if lp.joined != nil {
			lp.joined(key)
		}
		<-d.done
		return d.page, d.err
	}
	if keep { // drawn between the look above and the lock
		if page := lp.drawn.get(key); page != nil {
			lp.mu.Unlock()
			return page, nil
		}
	}
	d := &listDraw{done: make(chan struct{})}
	lp.pending[key] = d
	lp.mu.Unlock()

	lp.draws.Add(1)
	defer func() { // also when draw panics: nobody waits forever
		if d.page == nil && d.err == nil {
			d.err = errDrawFailed
		}
		lp.mu.Lock()
		if d.err == nil && keep {
			lp.drawn.put(key, d.page, int64(len(d.page.html)+len(d.page.gzip)))
		}
		delete(lp.pending, key)
		lp.mu.Unlock()
		close(d.done)
	}()
	if lp.drawing != nil {
		lp.drawing(key)
	}
	d.page, d.err = draw()
	return d.page, d.err
}
