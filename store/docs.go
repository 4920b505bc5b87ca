package store

import (
	"cmp"
	"database/sql"
	"hash/fnv"
	"math/bits"
	"slices"
	"strconv"

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

// A document's id is its time in milliseconds (43 bits, until the year
// 2248), then its length level (lenBits), then a sequence number (seqBits)
// that tells apart documents of the same millisecond and level. So newest
// first is ORDER BY id DESC, a time range is an id range, and ranking
// needs nothing but the ids.
const (
	seqBits    = 15
	lenBits    = 5
	docSeqBits = seqBits + lenBits
	maxDocTime = 1<<(63-docSeqBits) - 1
	seqMask    = 1<<seqBits - 1
)

// lenLevel maps a number of distinct words to 0..31, two levels per doubling.
func lenLevel(n int) int64 {
	if n <= 0 {
		return 0
	}
	l := 2 * int64(bits.Len(uint(n))-1)
	if k := bits.Len(uint(n)); k >= 2 && n&(1<<(k-2)) != 0 {
		l++ // the upper half of the octave
	}
	return min(l, 1<<lenBits-1)
}

// docKey returns the preferred id of a document with n distinct words:
// its time and level, then a number from its place, so that ids are stable
// and rarely collide.
func docKey(file string, d *Doc, n int) int64 {
	t := min(max(d.Time, 0), maxDocTime)
	h := fnv.New32a()
	h.Write([]byte(file))
	h.Write([]byte{0, byte(d.Position), byte(d.Position >> 8), byte(d.Position >> 16), byte(d.Position >> 24), byte(d.Part), byte(d.Part >> 8)})
	return t<<docSeqBits | lenLevel(n)<<seqBits | int64(h.Sum32()&seqMask)
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
	file string
	key  int64
	d    Doc // Text emptied
	fts  string
	n    int // text length
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
func (b *Batch) AddDocs(file string, docs []Doc) {
	if b.terms == nil {
		b.terms = map[string]struct{}{}
	}
	for i := range docs {
		d := docs[i]
		clear(b.terms)
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
		b.docs = append(b.docs, pendingDoc{file: file, key: docKey(file, &d, len(b.terms)), d: d, fts: string(b.buf), n: n})
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
	// In id order: FTS5 writes its pending terms out whenever ids go back.
	slices.SortFunc(b.docs, func(x, y pendingDoc) int { return cmp.Compare(x.key, y.key) })
	ins, err := tx.Prepare(`INSERT OR IGNORE INTO docs(id, fid, pos, part, entry, type, role, project, len) VALUES(?,?,?,?,?,?,?,?,?)`)
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
		id := p.key
		for {
			res, err := ins.Exec(id, fid, p.d.Position, p.d.Part, p.d.EntryID, typ, role, proj, p.n)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				break
			}
			id = id&^seqMask | (id+1)&seqMask // another document of the same millisecond and level took it
		}
		ftsText = append(append(ftsText[:0], p.fts...), filterTerms(role, proj)...)
		if _, err := fts.Exec(id, string(ftsText)); err != nil {
			return err
		}
	}
	return nil
}

// filterTerms are the extra index terms that let role: and project: narrow a search.
func filterTerms(role, project int64) string {
	return roleTerm(role) + " " + projectTerm(project)
}

// The filter terms start with a letter no word of real text starts with
// in practice; were one to, the document's own role and project are
// checked again before a hit is returned.
func roleTerm(id int64) string    { return "ǂr" + strconv.FormatInt(id, 10) }
func projectTerm(id int64) string { return "ǂp" + strconv.FormatInt(id, 10) }

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
