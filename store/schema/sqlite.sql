-- SQLite's half of the index: each searchable piece of an entry (a doc)
-- and, in a contentless FTS5 table without positions, its text's
-- trigrams (small: every hit is checked on the real text anyway).
CREATE TABLE docs (id INTEGER PRIMARY KEY, file_id BIGINT NOT NULL, off BIGINT NOT NULL, len INTEGER NOT NULL,
  pos INTEGER NOT NULL, part INTEGER NOT NULL, entry_id TEXT NOT NULL, role TEXT NOT NULL, ts BIGINT NOT NULL,
  offpath INTEGER NOT NULL DEFAULT 0);
CREATE INDEX docs_entry ON docs (entry_id);
CREATE INDEX docs_offpath ON docs (id) WHERE offpath = 1;
CREATE INDEX docs_file ON docs (file_id);
CREATE VIRTUAL TABLE doc_text USING fts5(text, content='', contentless_delete=1, tokenize='trigram', detail=none);

INSERT INTO usage_version (id, n) VALUES (1, abs(random() % 1000000000000));
