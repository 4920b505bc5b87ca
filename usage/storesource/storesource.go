// Package storesource is a usage.Source on the index store: the rows
// usage.Files reads from the session files, read instead from the sums
// the store keeps per file, 15-minute bucket and model (store/usage.go),
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
	"time"

	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/usage"
)

// Store is what the source reads: store.DB.
type Store interface {
	UsageSums(ctx context.Context, q store.UsageQuery) ([]store.UsageSum, error)
	UsageSessions(ctx context.Context, keys []string) ([]store.UsageSession, error)
}

// Source is a usage.Source and usage.Directory on the index store.
type Source struct {
	db      Store
	machine string
	opt     Options
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
	q := store.UsageQuery{Projects: f.Projects, Models: f.Models, Sessions: f.Sessions}
	if !f.Since.IsZero() {
		q.Since = f.Since.UnixMilli()
	}
	if !f.Until.IsZero() {
		q.Until = f.Until.UnixMilli()
	}
	for _, m := range f.Machines {
		if m == s.machine {
			m = ""
		}
		q.Machines = append(q.Machines, m)
	}
	sums, err := s.db.UsageSums(ctx, q)
	if s.failover(err) {
		return s.opt.Fallback.Rows(ctx, f)
	}
	if err != nil {
		return nil, err
	}
	rows := make([]usage.Row, 0, len(sums))
	for i := range sums {
		u := &sums[i]
		r := usage.Row{Start: time.UnixMilli(u.Bucket).UTC(), Session: u.Session, SessionID: u.SessionID, Project: u.Project,
			Machine: s.name(u.Machine), Model: u.Model, Sums: sumsOf(&u.Tally), Abandoned: sumsOf(&u.Abandoned),
			Errors: u.Errors, Aborted: u.Aborted}
		if f.Match(&r) { // (a bound at the epoch itself is open to the store)
			rows = append(rows, r)
		}
	}
	usage.SortRows(rows)
	return rows, nil
}

// sumsOf converts the store's tally.
func sumsOf(t *store.Tally) usage.Sums {
	return usage.Sums{Turns: t.Turns, Input: t.Input, Output: t.Output, CacheRead: t.CacheRead, CacheWrite: t.CacheWrite, Cost: t.Cost}
}

// Sessions describes the sessions with the given keys that the store
// holds (this machine's first, where two machines have one key).
func (s *Source) Sessions(ctx context.Context, keys []string) (map[string]usage.Session, error) {
	dir, _ := s.opt.Fallback.(usage.Directory)
	if s.fallback() != nil && dir != nil {
		return dir.Sessions(ctx, keys)
	}
	list, err := s.db.UsageSessions(ctx, keys)
	if s.failover(err) && dir != nil {
		return dir.Sessions(ctx, keys)
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]usage.Session, len(list))
	for _, us := range list {
		if _, ok := out[us.Session]; ok && us.Machine != "" {
			continue
		}
		var m sessions.Meta
		if err := json.Unmarshal(us.Meta, &m); err != nil {
			continue // a list row that does not read: the report names the session by its key
		}
		m.Key = us.Session
		out[us.Session] = usage.SessionOf(&m)
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
