// Package store is piweb's embedded, disposable index store: one SQLite
// database (through modernc.org/sqlite, pure Go) in the user's cache
// folder, holding what indexing learned so that a restart need not learn
// it again.
//
// What it stores. Per session file, a Record: the file's size and
// modification time when it was indexed, a small Stamp and an opaque Blob
// (the caller's serialized index of the file; the store never interprets
// either). And per searchable piece of an entry, a Doc: its place (file,
// entry id, position, part), kind (type, role), time and project, and the
// words of its text in a full-text index (FTS5, contentless: the text
// itself is not kept, so the index stays well under half the size of the
// text it covers; snippets and exact checks are made on text the caller
// supplies again through SearchOptions.Text).
//
// What is the truth. The session files. The store is a cache: a Record is
// only as good as the caller's check that the file still has that size,
// time and stamp; every search hit is checked against the entry's real
// text before it is returned; and the whole store may be deleted at any
// time, costing only a slower next start.
//
// Corruption and versions. Open never fails because of what it finds: a
// file that is not an SQLite database, a database of another program or of
// another schema version (SchemaVersion, raised whenever the format
// changes), or one that cannot be read is deleted and created again,
// empty. Open fails only when no database can be created at the path (the
// caller then runs without a store). An error during use that says the
// database is damaged wraps ErrCorrupt; Reset empties the store.
//
// Concurrency. A *Store is safe for concurrent use; writes are serialized
// and each is one short transaction. Several processes (two piweb servers)
// may share one database: it runs in WAL mode with a busy timeout, writers
// take the write lock when they begin (BEGIN IMMEDIATE), and readers see a
// consistent snapshot per statement. Two piweb versions with different
// schema versions on one store each rebuild it when they open it.
package store
