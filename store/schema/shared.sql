-- The tables every engine has, run in one transaction where a store is
-- new, older than the base version, or a step starts its index afresh
-- ({id} and {blob} are written per engine). The index of the session
-- files (files, labels, usage*) is dropped and made again then; pushed
-- files (push_*) and login tokens are kept (IF NOT EXISTS).

-- Each file's row: its stamp and list row, where its entries lie
-- (places), the numbers of its first and last docs (lo, hi: a
-- project's ranges, a save's last line), and their checksum.
CREATE TABLE files (
  id {id},
  machine TEXT NOT NULL,
  path TEXT NOT NULL,
  size BIGINT NOT NULL,
  mtime BIGINT NOT NULL,
  head BIGINT NOT NULL,
  tail BIGINT NOT NULL,
  docs INTEGER NOT NULL,
  session_id TEXT NOT NULL,
  parent TEXT NOT NULL,
  project TEXT NOT NULL,
  modified BIGINT NOT NULL,
  meta TEXT NOT NULL,
  places {blob},
  problem TEXT NOT NULL,
  checksum BIGINT NOT NULL,
  lo BIGINT NOT NULL DEFAULT 0,
  hi BIGINT NOT NULL DEFAULT 0,
  UNIQUE (machine, path)
);

-- A reader's check that the store is current reads this alone.
CREATE INDEX files_stamp ON files (machine, path, size, mtime);

CREATE TABLE labels (
  file_id BIGINT NOT NULL,
  entry_id TEXT NOT NULL,
  label TEXT NOT NULL,
  ts BIGINT NOT NULL,
  pos INTEGER NOT NULL,
  off BIGINT NOT NULL,
  len INTEGER NOT NULL,
  checksum BIGINT NOT NULL,
  PRIMARY KEY (file_id, entry_id)
);

CREATE TABLE usage_files (
  file_id BIGINT PRIMARY KEY,
  machine TEXT NOT NULL,
  session TEXT NOT NULL,
  session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  path TEXT NOT NULL,
  name TEXT NOT NULL,
  parent_path TEXT NOT NULL,
  parent_name TEXT NOT NULL,
  parent_id BIGINT NOT NULL
);
CREATE INDEX usage_files_path ON usage_files (machine, path);
CREATE INDEX usage_files_name ON usage_files (machine, name);
CREATE INDEX usage_files_parent_path ON usage_files (machine, parent_path);
CREATE INDEX usage_files_parent_name ON usage_files (machine, parent_name);
CREATE INDEX usage_files_parent ON usage_files (parent_id);
CREATE INDEX usage_files_session ON usage_files (session);

-- The wide columns first (no padding), the flags (0 or 1) narrow.
CREATE TABLE usage (
  file_id BIGINT NOT NULL,
  off BIGINT NOT NULL,
  ts BIGINT NOT NULL,
  bucket BIGINT NOT NULL,
  turns BIGINT NOT NULL,
  input BIGINT NOT NULL,
  output BIGINT NOT NULL,
  cache_read BIGINT NOT NULL,
  cache_write BIGINT NOT NULL,
  cost DOUBLE PRECISION NOT NULL,
  pos INTEGER NOT NULL,
  errored SMALLINT NOT NULL,
  aborted SMALLINT NOT NULL,
  active SMALLINT NOT NULL,
  copy SMALLINT NOT NULL,
  resumed SMALLINT NOT NULL,
  entry_id TEXT NOT NULL,
  model TEXT NOT NULL,
  PRIMARY KEY (file_id, off)
);
CREATE INDEX usage_ref ON usage (entry_id, ts);
CREATE INDEX usage_key ON usage (file_id, bucket, model);

CREATE TABLE usage_sums (
  file_id BIGINT NOT NULL,
  bucket BIGINT NOT NULL,
  model TEXT NOT NULL,
  turns BIGINT NOT NULL,
  input BIGINT NOT NULL,
  output BIGINT NOT NULL,
  cache_read BIGINT NOT NULL,
  cache_write BIGINT NOT NULL,
  cost DOUBLE PRECISION NOT NULL,
  ab_turns BIGINT NOT NULL,
  ab_input BIGINT NOT NULL,
  ab_output BIGINT NOT NULL,
  ab_cache_read BIGINT NOT NULL,
  ab_cache_write BIGINT NOT NULL,
  ab_cost DOUBLE PRECISION NOT NULL,
  errors BIGINT NOT NULL,
  aborted BIGINT NOT NULL,
  PRIMARY KEY (file_id, bucket, model)
);
CREATE INDEX usage_sums_bucket ON usage_sums (bucket);

-- Counts the transactions that changed usage: a reader keeps what it
-- read while the count stays. It starts anywhere, so a store made again
-- does not count through the numbers of the one it replaces.
CREATE TABLE usage_version (id INTEGER PRIMARY KEY, n BIGINT NOT NULL);

CREATE TABLE IF NOT EXISTS push_files (
  id {id},
  machine TEXT NOT NULL,
  path TEXT NOT NULL,
  gen BIGINT NOT NULL,
  consumed BIGINT NOT NULL,
  sent BIGINT NOT NULL,
  head BIGINT NOT NULL,
  tail BIGINT NOT NULL,
  redact TEXT NOT NULL,
  pushed BIGINT NOT NULL,
  UNIQUE (machine, path)
);

CREATE TABLE IF NOT EXISTS push_chunks (
  file_id BIGINT NOT NULL,
  gen BIGINT NOT NULL,
  off BIGINT NOT NULL,
  data {blob} NOT NULL,
  PRIMARY KEY (file_id, gen, off)
);

CREATE TABLE IF NOT EXISTS tokens (
  id {id},
  name TEXT NOT NULL UNIQUE,
  lookup TEXT NOT NULL UNIQUE,
  hash TEXT NOT NULL,
  created BIGINT NOT NULL,
  used BIGINT NOT NULL
);
