// Package store is piweb's embedded, disposable index store: one SQLite
// database (through modernc.org/sqlite, pure Go) in the user's cache
// folder, holding what indexing learned so that a restart need not learn
// it again, and the full-text index of every session.
//
// What it stores. Per session file, a Record: the file's size and
// modification time when it was indexed, a small Stamp and an opaque Blob
// (the caller's serialized index of the file; the store never interprets
// either; All lists records without blobs, Blobs streams them). And per
// searchable piece of an entry, a Doc: its place (file, entry id,
// position, part), kind (type, role), time and project, and the words of
// its text (search.Terms) in a word index of its own (index.go: sorted
// segments of words and document ids, merged as an LSM tree merges) that
// keeps neither the text nor word positions, so that it stays well under
// half the size of the text it covers.
//
// What is the truth. The session files. A Record is only as good as the
// caller's check that the file still has that size, time and stamp. Every
// search hit is checked again on the entry's real text, which the caller
// supplies through SearchOptions.Text (search.Query.Excerpt decides and
// makes the snippet): a file that changed under the index gives no stale
// hit, and phrases and re: are exact although the index holds only words.
// The whole store may be deleted at any time, costing only a slower start.
//
// Ranking. Documents are numbered in the order they are added; that order
// is what "newest" means (see Batch.AddDocs). Search ranks the newest
// 8,192 candidates the index finds (then the next 8,192, and so on, so a
// query that matches half the corpus costs no more than one that matches
// a window), by bm25 as far as an index without word counts allows: for
// queries whose words must all occur that is the document's length in
// distinct words (shorter first), then newest first. Queries the index
// cannot narrow (re: alone, negations alone) scan newest first.
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
// and each Batch is one transaction (its words are sorted before it takes
// the lock, so batches filled on several goroutines use every core). Several
// processes (two piweb servers) may share one database: it runs in WAL
// mode with a busy timeout, writers take the write lock when they begin
// (BEGIN IMMEDIATE), and a search reads one snapshot. Two piweb versions
// with different schema versions on one store each rebuild it when they
// open it.
package store
