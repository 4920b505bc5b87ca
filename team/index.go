package team

import (
	"context"

	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/store"
	"github.com/piweb/piweb/usage"
)

// Index is the store as a team server's catalog uses it (catalog.Store):
// what it indexes of the mirror's files goes under a machine name of its
// own, so that a piweb indexing its own sessions in the same database
// (under "") keeps its rows, and so does another team server.
type Index struct {
	*store.DB
	Machine string
}

// Files returns the rows of the mirror's files.
func (x Index) Files(ctx context.Context, _ string) ([]store.File, int, error) {
	return x.DB.Files(ctx, x.Machine)
}

// Remove forgets mirror files.
func (x Index) Remove(ctx context.Context, _ string, paths ...string) error {
	return x.DB.Remove(ctx, x.Machine, paths...)
}

// Labels finds labels in the mirror's files.
func (x Index) Labels(ctx context.Context, _ string) ([]store.FileLabel, []string, error) {
	return x.DB.Labels(ctx, x.Machine)
}

// Search finds candidates in the mirror's files.
func (x Index) Search(ctx context.Context, q store.Query) ([]store.Candidate, error) {
	if !q.Any {
		q.Machine = x.Machine
	}
	return x.DB.Search(ctx, q)
}

// SaveMany saves mirror files' rows.
func (x Index) SaveMany(ctx context.Context, saves []*store.Save) error {
	mine := make([]*store.Save, len(saves))
	for i, sv := range saves {
		c := *sv
		c.File.Machine = x.Machine
		mine[i] = &c
	}
	return x.DB.SaveMany(ctx, mine)
}

// Usage is a team server's usage.Source: the rows of the mirror's
// sessions (Files), each under the machine it came from (Machine of its
// file: Mirror.Machine).
type Usage struct {
	Files   usage.Source
	Lib     *library.Library
	Machine func(file string) string
}

// Rows returns the rows the filter selects.
func (u Usage) Rows(ctx context.Context, f usage.Filter) ([]usage.Row, error) {
	all := f
	all.Machines = nil
	rows, err := u.Files.Rows(ctx, all)
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for _, r := range rows {
		if file, ok := u.Lib.File(r.Session); ok {
			r.Machine = u.Machine(file)
		}
		if f.Match(&r) {
			out = append(out, r)
		}
	}
	return out, nil
}
