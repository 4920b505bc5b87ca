// Package storesource is a usage.Source on the index store: the rows
// usage.Files reads from the session files, read instead from the sums
// the store keeps per file, 15-minute bucket and model (store/usage.go),
// which the catalog keeps current as pi writes. A report reads those sums
// only: a few per session, however long the sessions are.
//
// The rows are those usage.Files gives for the same files, costs added in
// the same order (so reports agree to the last digit), once the store
// holds the files as they are: Settle waits for that.
package storesource

import (
	"context"
	"encoding/json"
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
	settle  func(ctx context.Context) error
}

// New returns the source of db's usage, which names this machine's files
// (the store's machine "") machine. settle, when not nil, returns once
// the store holds the files' changes made so far (catalog.Catalog.Wait).
func New(db Store, machine string, settle func(ctx context.Context) error) *Source {
	return &Source{db: db, machine: machine, settle: settle}
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
	if err != nil {
		return nil, err
	}
	rows := make([]usage.Row, 0, len(sums))
	for i := range sums {
		u := &sums[i]
		r := usage.Row{Start: time.UnixMilli(u.Bucket).UTC(), Session: u.Session, SessionID: u.SessionID, Project: u.Project,
			Machine: s.name(u.Machine), Model: u.Model, Sums: sumsOf(&u.Tally), Abandoned: sumsOf(&u.Abandoned),
			Errors: u.Errors, Aborted: u.Aborted}
		if f.Match(&r) { // (Since and Until as 0 mean the epoch to a Filter, open to the store)
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
	list, err := s.db.UsageSessions(ctx, keys)
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
	if s.settle == nil {
		return nil
	}
	return s.settle(ctx)
}
