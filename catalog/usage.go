package catalog

import (
	"slices"
	"sync"

	"github.com/piweb/piweb/ledger"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/usage"
)

// usageOf returns the usage a save of session s (at path, described by
// m) adds: how the lineage names the file, and the entries that count
// from position from on (the store holds those before). Which of them
// are on the path is the store's to tell from the save's places.
func (c *Catalog) usageOf(path string, s *sessions.Session, m *sessions.Meta, from int) (*store.Usage, error) {
	r, err := s.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	l := c.ledgers.get(path, from > 0)
	if err := l.Update(r); err != nil {
		return nil, err
	}
	link := usage.LinkOf(path, m.ParentSession)
	us := &store.Usage{Session: m.Key, Path: link.Path, Name: link.Name, Parent: link.Parent, ParentName: link.ParentName}
	usage.Records(s, r, l, from, func(rec *usage.Record) {
		us.Rows = append(us.Rows, store.Use{Off: rec.Off, Pos: rec.Pos, EntryID: rec.ID, Time: rec.Time, Bucket: rec.Start.UnixMilli(),
			Model: rec.Model, Errored: rec.Errored, Aborted: rec.Aborted,
			Tally: store.Tally{Turns: rec.Turns, Input: rec.Input, Output: rec.Output, CacheRead: rec.CacheRead, CacheWrite: rec.CacheWrite, Cost: rec.Cost}})
	})
	return us, nil
}

// ledgerFiles is how many files' ledgers the catalog keeps: those pi is
// writing to, so that each append is read alone.
const ledgerFiles = 8

// ledgerCache keeps the ledgers of the files saved last that grew (the
// zero value is empty and ready).
type ledgerCache struct {
	mu    sync.Mutex
	order []string // least recently used first
	byKey map[string]*ledger.Ledger
}

// get returns a ledger for path: the one kept when the file grew since
// its last save (kept from now on), else a new one.
func (lc *ledgerCache) get(path string, grew bool) *ledger.Ledger {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	l := lc.byKey[path]
	if k := slices.Index(lc.order, path); k >= 0 {
		lc.order = slices.Delete(lc.order, k, k+1)
	}
	if !grew {
		delete(lc.byKey, path)
		return ledger.New()
	}
	if l == nil {
		l = ledger.New()
		if lc.byKey == nil {
			lc.byKey = map[string]*ledger.Ledger{}
		}
		lc.byKey[path] = l
	}
	lc.order = append(lc.order, path)
	if len(lc.order) > ledgerFiles {
		delete(lc.byKey, lc.order[0])
		lc.order = lc.order[1:]
	}
	return l
}
