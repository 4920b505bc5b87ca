package store

import (
	"context"
	"database/sql"
	"errors"
)

// Record is what the store keeps about one session file.
type Record struct {
	File    string
	Size    int64  // bytes, when indexed
	ModTime int64  // modification time in nanoseconds, when indexed
	Stamp   []byte // a few bytes the caller checks before trusting Blob (say, the head and tail of the file)
	Blob    []byte // the caller's serialized index of the file; only Get and Blobs fill it
}

// Get returns the record of file, blob included; ok is false when there is none.
func (s *Store) Get(file string) (r Record, ok bool, err error) {
	db, release, err := s.acquire()
	if err != nil {
		return Record{}, false, err
	}
	defer release()
	err = db.QueryRow(`SELECT r.size, r.mtime, r.stamp, b.data FROM paths p JOIN records r ON r.id=p.id
		LEFT JOIN blobs b ON b.id=p.id WHERE p.path=?`, file).Scan(&r.Size, &r.ModTime, &r.Stamp, &r.Blob)
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, wrap(err)
	}
	r.File = file
	return r, true, nil
}

// All returns every record without its blob, in path order.
func (s *Store) All() ([]Record, error) {
	db, release, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer release()
	rows, err := db.Query(`SELECT p.path, r.size, r.mtime, r.stamp FROM records r JOIN paths p ON p.id=r.id ORDER BY p.path`)
	if err != nil {
		return nil, wrap(err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		if err := rows.Scan(&r.File, &r.Size, &r.ModTime, &r.Stamp); err != nil {
			return nil, wrap(err)
		}
		out = append(out, r)
	}
	return out, wrap(rows.Err())
}

// Blobs calls fn with the blob of each of files that has one, in the
// order given, all read from one snapshot of the database; fn must not
// keep blob. An error from fn stops the walk and is returned.
func (s *Store) Blobs(files []string, fn func(file string, blob []byte) error) error {
	db, release, err := s.acquire()
	if err != nil {
		return err
	}
	defer release()
	tx, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return wrap(err)
	}
	defer tx.Rollback()
	st, err := tx.Prepare(`SELECT b.data FROM paths p JOIN records r ON r.id=p.id JOIN blobs b ON b.id=p.id WHERE p.path=?`)
	if err != nil {
		return wrap(err)
	}
	defer st.Close()
	for _, f := range files {
		rows, err := st.Query(f)
		if err != nil {
			return wrap(err)
		}
		var blob sql.RawBytes
		found := rows.Next()
		if found {
			err = rows.Scan(&blob)
			if err == nil {
				err = fn(f, blob)
			}
		}
		rows.Close()
		if err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return wrap(err)
		}
	}
	return nil
}

// PutMany stores records, replacing those of the same files, in one transaction.
func (s *Store) PutMany(recs []Record) error {
	b := s.Batch()
	for _, r := range recs {
		b.Put(r)
	}
	return b.Commit()
}

// Delete drops the records and documents of files.
func (s *Store) Delete(files ...string) error {
	b := s.Batch()
	for _, f := range files {
		b.Delete(f)
	}
	return b.Commit()
}

// Retain drops the records and documents of every file not in files (the
// files that still exist) and returns how many files it dropped.
func (s *Store) Retain(files []string) (int, error) {
	gone, err := s.others(files)
	if err != nil || len(gone) == 0 {
		return 0, err
	}
	return len(gone), s.Delete(gone...)
}

// others returns the stored files that are not in files.
func (s *Store) others(files []string) ([]string, error) {
	keep := make(map[string]bool, len(files))
	for _, f := range files {
		keep[f] = true
	}
	db, release, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer release()
	rows, err := db.Query(`SELECT path FROM paths`)
	if err != nil {
		return nil, wrap(err)
	}
	defer rows.Close()
	var gone []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, wrap(err)
		}
		if !keep[p] {
			gone = append(gone, p)
		}
	}
	return gone, wrap(rows.Err())
}
