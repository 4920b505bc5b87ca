package store

import (
	"database/sql"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/piweb/piweb/search"
)

// Doc is one searchable piece of an entry: a message's text, a thinking
// block, a tool call, a tool's output, a bash command and its output, a
// summary, a label, a session name, a model.
type Doc struct {
	EntryID  string
	Position int    // the entry's index in its file
	Part     int    // which piece of the entry, numbered by the caller, so that SearchOptions.Text finds it again
	Type     string // the piece's kind, as the caller names it ("text", "thinking", "toolCall", "toolResult", …)
	Role     string // one of search.Roles for role: to find it, else any word ("custom", "system")
	Time     int64  // Unix milliseconds
	Project  string
	Text     string // indexed, not kept
}

// lenBits is how many bits a document's length level takes.
const lenBits = 5

// lenLevel maps a number of distinct words to 0..31, two levels per doubling.
func lenLevel(n int) int64 {
	if n <= 0 {
		return 0
	}
	k := bits.Len(uint(n))
	l := 2 * int64(k-1)
	if k >= 2 && n&(1<<(k-2)) != 0 {
		l++ // the upper half of the octave
	}
	return min(l, 1<<lenBits-1)
}

// Batch gathers changes to write in one transaction: records put and
// deleted, documents added and deleted. Deletions and puts happen in the
// order they were asked for; documents are added after them, so a batch
// may drop a file's documents and add new ones. A Batch is for one
// goroutine; several may be filled at once and committed in turn.
type Batch struct {
	s     *Store
	ops   []op
	docs  []pendingDoc
	terms map[string]struct{}
	buf   []byte
}

type op struct {
	kind uint8 // opPut, opDelete, opDeleteDocs
	rec  Record
}

const (
	opPut = iota
	opDelete
	opDeleteDocs
)

type pendingDoc struct {
	file  string
	d     Doc // Text emptied
	fts   string
	n     int   // text length
	level int64 // lenLevel of its distinct words
}

// Batch starts an empty batch.
func (s *Store) Batch() *Batch { return &Batch{s: s} }

// Put stores r (replacing the file's record) when the batch commits.
func (b *Batch) Put(r Record) { b.ops = append(b.ops, op{kind: opPut, rec: r}) }

// Delete drops file's record and documents, including those added to this batch before.
func (b *Batch) Delete(file string) {
	b.dropPending(file)
	b.ops = append(b.ops, op{kind: opDelete, rec: Record{File: file}})
}

// DeleteDocs drops file's documents (the file was rewritten or is gone),
// including those added to this batch before.
func (b *Batch) DeleteDocs(file string) {
	b.dropPending(file)
	b.ops = append(b.ops, op{kind: opDeleteDocs, rec: Record{File: file}})
}

func (b *Batch) dropPending(file string) {
	b.docs = slices.DeleteFunc(b.docs, func(p pendingDoc) bool { return p.file == file })
}

// AddDocs adds documents of file (pi only appends: new entries come as the
// file grows). Their words are extracted now, in the caller's goroutine.
//
// Documents are numbered in the order they are added, and that order is
// what "newest first" means to Search among hits of equal relevance (and
// what its windows follow): add a file's documents in file order, and on a
// first indexing add files from the least to the most recently modified.
func (b *Batch) AddDocs(file string, docs []Doc) {
	if b.terms == nil {
		b.terms = map[string]struct{}{}
	}
	for i := range docs {
		d := docs[i]
		if len(b.terms) > 4096 {
			b.terms = map[string]struct{}{} // clearing a map costs its largest size
		} else {
			clear(b.terms)
		}
		b.buf = b.buf[:0]
		search.Terms(d.Text, func(t []byte) {
			if _, ok := b.terms[string(t)]; ok {
				return
			}
			b.terms[string(t)] = struct{}{}
			b.buf = append(append(b.buf, t...), ' ')
		})
		n := len(d.Text)
		d.Text = ""
		b.docs = append(b.docs, pendingDoc{file: file, d: d, fts: string(b.buf), n: n, level: lenLevel(len(b.terms))})
	}
}

// Len returns the number of documents waiting in the batch.
func (b *Batch) Len() int { return len(b.docs) }

// Commit writes the batch in one transaction and empties it.
func (b *Batch) Commit() error {
	s := b.s
	if len(b.ops) == 0 && len(b.docs) == 0 {
		return nil
	}
	names, err := s.loadNames()
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.Begin()
	if err != nil {
		return wrap(err)
	}
	defer tx.Rollback()
	newNames := false
	if err := b.write(tx, names, &newNames); err != nil {
		if newNames {
			s.forgetNames()
		}
		return wrap(err)
	}
	if err := tx.Commit(); err != nil {
		return wrap(err)
	}
	if newNames {
		s.forgetNames()
	}
	b.ops, b.docs = b.ops[:0], b.docs[:0]
	return nil
}

func (b *Batch) write(tx *sql.Tx, names map[int64]string, newNames *bool) error {
	for _, o := range b.ops {
		switch o.kind {
		case opPut:
			r := o.rec
			fid, err := pathID(tx, r.File, true)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT OR REPLACE INTO records(id, size, mtime, stamp) VALUES(?,?,?,?)`, fid, r.Size, r.ModTime, r.Stamp); err != nil {
				return err
			}
			if r.Blob == nil {
				_, err = tx.Exec(`DELETE FROM blobs WHERE id=?`, fid)
			} else {
				_, err = tx.Exec(`INSERT OR REPLACE INTO blobs(id, data) VALUES(?,?)`, fid, r.Blob)
			}
			if err != nil {
				return err
			}
		case opDelete, opDeleteDocs:
			fid, err := pathID(tx, o.rec.File, false)
			if err != nil || fid == 0 {
				return err
			}
			if err := deleteDocs(tx, fid); err != nil {
				return err
			}
			if o.kind == opDelete {
				for _, q := range []string{`DELETE FROM records WHERE id=?`, `DELETE FROM blobs WHERE id=?`, `DELETE FROM paths WHERE id=?`} {
					if _, err := tx.Exec(q, fid); err != nil {
						return err
					}
				}
			}
		}
	}
	if len(b.docs) == 0 {
		return nil
	}
	// Ids only grow (AUTOINCREMENT), which FTS5 needs to write its terms
	// out in large segments, and small gaps keep its lists short.
	ins, err := tx.Prepare(`INSERT INTO docs(fid, pos, part, entry, type, role, project, len, time, lvl) VALUES(?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	fts, err := tx.Prepare(`INSERT INTO fts(rowid, t) VALUES(?,?)`)
	if err != nil {
		return err
	}
	defer fts.Close()
	byName := make(map[string]int64, len(names))
	for id, n := range names {
		byName[n] = id
	}
	intern := func(n string) (int64, error) {
		if id, ok := byName[n]; ok {
			return id, nil
		}
		id, created, err := nameID(tx, n)
		if err != nil {
			return 0, err
		}
		*newNames = *newNames || created
		byName[n] = id
		return id, nil
	}
	fids := map[string]int64{}
	var ftsText []byte
	for i := range b.docs {
		p := &b.docs[i]
		fid, ok := fids[p.file]
		if !ok {
			if fid, err = pathID(tx, p.file, true); err != nil {
				return err
			}
			fids[p.file] = fid
		}
		typ, err := intern(p.d.Type)
		if err != nil {
			return err
		}
		role, err := intern(p.d.Role)
		if err != nil {
			return err
		}
		proj, err := intern(p.d.Project)
		if err != nil {
			return err
		}
		res, err := ins.Exec(fid, p.d.Position, p.d.Part, p.d.EntryID, typ, role, proj, p.n, p.d.Time, p.level)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		ftsText = append(append(ftsText[:0], p.fts...), filterTerms(role, proj, p.d.Time)...)
		if _, err := fts.Exec(id, string(ftsText)); err != nil {
			return err
		}
	}
	return nil
}

// filterTerms are the extra index terms that let role:, project:, after:
// and before: narrow a search.
func filterTerms(role, project, ms int64) string {
	return roleTerm(role) + " " + projectTerm(project) + " " + monthTerm(ms)
}

// The filter terms start with a letter no word of real text starts with
// in practice; were one to, the document's own role and project are
// checked again before a hit is returned.
func roleTerm(id int64) string    { return "ǂr" + strconv.FormatInt(id, 10) }
func projectTerm(id int64) string { return "ǂp" + strconv.FormatInt(id, 10) }

// monthTerm names the calendar month (UTC) of a time in milliseconds.
func monthTerm(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	return "ǂm" + strconv.Itoa(t.Year()*100+int(t.Month()))
}

// deleteDocs drops every document of file fid.
func deleteDocs(tx *sql.Tx, fid int64) error {
	rows, err := tx.Query(`SELECT id FROM docs WHERE fid=?`, fid)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	del, err := tx.Prepare(`DELETE FROM fts WHERE rowid=?`)
	if err != nil {
		return err
	}
	defer del.Close()
	for _, id := range ids {
		if _, err := del.Exec(id); err != nil {
			return err
		}
	}
	_, err = tx.Exec(`DELETE FROM docs WHERE fid=?`, fid)
	return err
}

// AddDocs adds documents of file in one transaction (see Batch.AddDocs).
func (s *Store) AddDocs(file string, docs []Doc) error {
	b := s.Batch()
	b.AddDocs(file, docs)
	return b.Commit()
}

// DeleteDocs drops every document of file.
func (s *Store) DeleteDocs(file string) error {
	b := s.Batch()
	b.DeleteDocs(file)
	return b.Commit()
}
