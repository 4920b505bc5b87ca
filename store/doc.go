// Package store is piweb's index store: a disposable SQL database that
// knows every session file well enough to list it, and finds entries by
// their text with the engine's own full-text index.
//
// Two engines, one schema (schema/*.sql, schema.go's numbered steps):
//   - SQLite (modernc.org/sqlite, embedded, pure Go), the default, in the
//     user's cache folder. Texts are indexed by an FTS5 table with the
//     trigram tokenizer, contentless (the store keeps no copy of them) and
//     without positions (detail=none): small, and any substring of three
//     characters or more narrows the candidates.
//   - PostgreSQL (pgx), for a larger store and for teams. It keeps no
//     texts either, but the distinct words of runs of a file's docs (a
//     row of texts for up to 8 short ones, fewer long ones: textRuns),
//     which a pg_trgm GIN index covers (made once they are in after a
//     first build: TextIndex). A search gives every doc of a run whose
//     words hold the needles; a phrase narrows by its words.
//
// What it stores. Per session file (File): where it is (machine and
// path), the Stamp of the bytes last read (size, modification time and
// hashes of its first and last bytes), its row of the sessions list
// (opaque JSON), where each entry lies relative to the path pi resumes
// (an opaque blob), the numbers of its first and last docs, and a
// checksum over all of that, so a damaged row is noticed and read again
// from the file rather than trusted. Per searchable piece of an entry
// (Doc): its file, byte offset and length, position, part, entry id,
// role and time, whether the entry is off the path (as the file's places
// say: is:offpath narrows in the engine), and its text, normalized
// (search.Normalize), for the engine's index only (PostgreSQL keeps the
// distinct words of its run). Per file, the labels in force, each row
// with a checksum of its own (a damaged one is named, not trusted).
//
// What is the truth. The session files. A File is only as good as the
// caller's check that the file still has that Stamp, and every candidate
// Search gives is to be checked on the entry's real text, read again from
// the file (the catalog does). Writes are idempotent, keyed by file and
// byte offset: a save adds only the lines past the last its file's texts
// hold (saves of one file take turns), so two processes sharing one store
// never double an entry. The whole store may be deleted at any time,
// costing a slower start: an SQLite store whose file is deleted, replaced,
// damaged or of another program is made again, empty (OnReset tells the
// caller to put everything back).
//
// Tables of other features. The schema is one (schema/*.sql: the tables
// of a version; schema.go: numbered steps; a store of an older version has its
// index made again, its pushes and tokens kept), but packages named for
// their job keep their own tables' rows: push the pushed files
// (push.Table), auth the login tokens (auth.Table), usage what sessions
// cost (usage.Tables, kept current in the transaction of every Save and
// Remove through the store's Hook).
// They use the store through Use and Tx (its reconnecting and its
// errors' kinds), Rebind (the engine's placeholders) and Engine.
//
// Failures are errors of a few kinds the caller acts on: ErrFull (the disk
// is full: nothing of that write landed; try again later), ErrUnavailable
// (PostgreSQL cannot be reached: piweb serves from memory and searches by
// scanning until it can), ErrCorrupt (damage found: the store is made
// again). A *DB is safe for concurrent use.
package store
