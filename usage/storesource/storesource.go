// Package storesource is a usage.Source on the index store: the rows
// usage.Files reads from the session files, read instead from the sums
// the store keeps per file, 15-minute bucket and model (usage.Tables),
// which the catalog keeps current as pi writes. A report reads those sums
// only: a few per session, however long the sessions are.
//
// The rows are those usage.Files gives for the same files, costs added in
// the same order (so reports agree to the last digit), once the store
// holds the files as they are: Settle waits for that. Until the store
// first held every file, and while it cannot be reached, a fallback
// (usage.Files) answers, so the numbers are never those of half a root.
package storesource

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/usage"
)

// Store is what the source reads: usage.Stored.
type Store interface {
	UsageVersion(ctx context.Context) (int64, error)
	UsageSums(ctx context.Context) ([]usage.Row, error)
	UsageSessions(ctx context.Context, keys []string) ([]usage.StoredSession, error)
}

// Source is a usage.Source and usage.Directory on the index store. It
// keeps what it read while the store's usage stays as it was (its
// UsageVersion): a page drawn again, or another range of it, reads one
// number from the store. Safe for concurrent use.
type Source struct {
	db      Store
	machine string
	opt     Options

	mu       sync.Mutex
	version  int64
	rows     []usage.Row              // every row at version, sorted; nil: none read
	sessions map[string]usage.Session // those read at version
}

// Options are what a Source knows of the catalog that keeps its store.
type Options struct {
	// Settle returns once the store holds the files' changes made so far
	// (catalog.Catalog.Wait); nil: at once.
	Settle func(ctx context.Context) error
	// Ready is closed once the store first held every file
	// (catalog.Catalog.SearchReady); nil: it does.
	Ready <-chan struct{}
	// Fallback answers until Ready is closed and while the store cannot
	// be reached (store.ErrUnavailable); nil: the store answers, or fails.
	Fallback usage.Source
}

// New returns the source of db's usage, which names this machine's files
// (the store's machine "") machine.
func New(db Store, machine string, opt Options) *Source {
	return &Source{db: db, machine: machine, opt: opt}
}

// fallback returns the source to ask instead of the store now, if any.
func (s *Source) fallback() usage.Source {
	if s.opt.Fallback == nil || s.opt.Ready == nil {
		return nil
	}
	select {
	case <-s.opt.Ready:
		return nil
	default:
		return s.opt.Fallback
	}
}

// failover reports whether err calls for the fallback.
func (s *Source) failover(err error) bool {
	return s.opt.Fallback != nil && errors.Is(err, store.ErrUnavailable)
}

// name returns how rows name a machine of the store.
func (s *Source) name(m string) string {
	if m == "" {
		return s.machine
	}
	return m
}

// Rows returns the rows the filter selects, sorted by start, session and
// model (usage.SortRows).
func (s *Source) Rows(ctx context.Context, f usage.Filter) ([]usage.Row, error) {
	if fb := s.fallback(); fb != nil {
		return fb.Rows(ctx, f)
	}
	all, err := s.all(ctx)
	if s.failover(err) {
		return s.opt.Fallback.Rows(ctx, f)
	}
	if err != nil {
		return nil, err
	}
	n := 0 // counted first: the rows are a few hundred bytes each
	for i := range all {
		if f.Match(&all[i]) {
			n++
		}
	}
	rows := make([]usage.Row, 0, n)
	for i := range all {
		if f.Match(&all[i]) {
			rows = append(rows, all[i])
		}
	}
	return rows, nil
}

// all returns every row of the store's usage as it is now (kept while
// its version stays), sorted.
func (s *Source) all(ctx context.Context) ([]usage.Row, error) {
	v, err := s.db.UsageVersion(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rows != nil && s.version == v {
		return s.rows, nil
	}
	rows, err := s.db.UsageSums(ctx)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].Machine = s.name(rows[i].Machine)
	}
	usage.SortRows(rows)
	if s.version != v {
		s.sessions = nil
	}
	s.version, s.rows = v, rows // (read at v or later: the next change of version reads them again)
	return rows, nil
}

// Sessions describes the sessions with the given keys that the store
// holds (this machine's first, where two machines have one key).
func (s *Source) Sessions(ctx context.Context, keys []string) (map[string]usage.Session, error) {
	dir, _ := s.opt.Fallback.(usage.Directory)
	if s.fallback() != nil && dir != nil {
		return dir.Sessions(ctx, keys)
	}
	v, err := s.db.UsageVersion(ctx)
	if s.failover(err) && dir != nil {
		return dir.Sessions(ctx, keys)
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]usage.Session, len(keys))
	var missing []string
	s.mu.Lock()
	if s.version != v {
		s.version, s.rows, s.sessions = v, nil, nil
	}
	for _, k := range keys {
		if m, ok := s.sessions[k]; ok {
			if m.Key != "" {
				out[k] = m
			}
		} else {
			missing = append(missing, k)
		}
	}
	s.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	list, err := s.db.UsageSessions(ctx, missing)
	if s.failover(err) && dir != nil {
		return dir.Sessions(ctx, keys)
	}
	if err != nil {
		return nil, err
	}
	read := map[string]usage.Session{}
	local := map[string]bool{}
	for _, us := range list {
		if local[us.Session] {
			continue
		}
		// What a report shows of the list row (sessions.Meta) alone.
		var m struct {
			ID           string    `json:"id"`
			Project      string    `json:"project"`
			Cwd          string    `json:"cwd"`
			Name         string    `json:"name"`
			FirstMessage string    `json:"firstMessage"`
			Modified     time.Time `json:"modified"`
		}
		if err := json.Unmarshal(us.Meta, &m); err != nil {
			continue // a list row that does not read: the report names the session by its key
		}
		read[us.Session] = usage.Session{Key: us.Session, ID: m.ID, Project: m.Project, Cwd: m.Cwd, Name: m.Name,
			FirstMessage: m.FirstMessage, Modified: m.Modified}
		local[us.Session] = us.Machine == ""
	}
	s.mu.Lock()
	if s.version == v {
		if s.sessions == nil {
			s.sessions = map[string]usage.Session{}
		}
		for _, k := range missing {
			s.sessions[k] = read[k] // (a key the store does not know: its zero value, read no more)
		}
	}
	s.mu.Unlock()
	for k, m := range read {
		out[k] = m
	}
	return out, nil
}

// Settle returns once the store holds the files' changes made so far
// (at once without a way to tell), or ctx is done.
func (s *Source) Settle(ctx context.Context) error {
	if s.opt.Settle == nil || s.fallback() != nil {
		return nil // (the fallback reads the files as they are)
	}
	return s.opt.Settle(ctx)
}
