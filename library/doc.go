// Package library holds every session file under a root: where pi keeps
// them (DefaultRoot) and which they are (SessionFiles), each file's key
// and list row (Meta), trees read on demand into a cache bounded in bytes,
// kept current by Refresh, and the change feed that publishes what
// changed (Subscribe). Its writers (Label, Rewind, Fork, Upgrade,
// SaveBeside) take a file's write lock, write through package writer and
// refresh.
//
// It may import sessions and writer; web, catalog, watcher, usage, team,
// push and cmd/piweb use it, and sessions and writer never import it.
package library
