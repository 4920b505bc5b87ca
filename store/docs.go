package store

import (
	"database/sql"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/piweb/piweb/internal/js"
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
	s        *Store
	ops      []op
	docs     []pendingDoc
	files    map[string]bool     // files with documents in docs
	tt       *termTable          // the batch's distinct words and their documents (invert.go)
	distinct []int               // by batch position: the document's distinct words
	filters  map[string]*[]int32 // filter words: the batch positions holding them (empty for those of earlier batches only)
	// filterWords spells the filter words (addFilter); recent are the
	// last few of each kind, month the last document's month.
	filterWords map[filterKey]string
	recent      [3][recentFilters]recentFilter
	month       month
	hashes      []search.TermHash // AddDocs' buffer
	hasher      search.Hasher
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
	d    Doc // Text emptied
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

// dropPending forgets the batch's documents of file: their words keep
// their positions, which then name no document and are left out.
func (b *Batch) dropPending(file string) {
	if !b.files[file] {
		return // the usual case: a file's documents are dropped before any are added
	}
	delete(b.files, file)
	for i := range b.docs {
		if b.docs[i].file == file {
			b.docs[i].file = ""
		}
	}
}

// AddDocs adds documents of file (pi only appends: new entries come as the
// file grows). Their words are extracted now, in the caller's goroutine.
//
// Documents are numbered in the order they are added, and that order is
// what "newest first" means to Search among hits of equal relevance (and
// what its windows follow): add a file's documents in file order, and on a
// first indexing add files from the least to the most recently modified.
//
// AddDocs keeps no reference to docs or their texts: the caller may reuse
// their memory once it returns. A text that is not valid UTF-8 is read as
// pi reads its files (js.ToValidUTF8: U+FFFD for each maximal invalid
// part), and its length is that of the text so read.
func (b *Batch) AddDocs(file string, docs []Doc) {
	if b.filters == nil {
		b.filters = map[string]*[]int32{}
	}
	if len(docs) > 0 {
		if b.files == nil {
			b.files = map[string]bool{}
		}
		b.files[file] = true
	}
	seed := b.s.seed
	for i := range docs {
		d := docs[i]
		if len(d.Text) > math.MaxUint32 {
			d.Text = d.Text[:math.MaxUint32] // offsets are 32 bits; a 4 GB entry is not a real one
		}
		pos := uint32(len(b.docs))
		var distinct int
		d.Text, distinct = b.addText(d.Text, pos, seed)
		b.distinct = append(b.distinct, distinct)
		if d.Time < b.month.lo || d.Time >= b.month.hi {
			b.month = monthOf(d.Time)
		}
		b.addFilter(filterKey{kind: filterRole, s: d.Role}, pos)
		b.addFilter(filterKey{kind: filterProject, s: d.Project}, pos)
		b.addFilter(filterKey{kind: filterMonth, n: b.month.yyyymm}, pos)
		n := len(d.Text)
		d.Text = ""
		if len(b.docs) == cap(b.docs) {
			b.docs = slices.Grow(b.docs, len(b.docs)) // doubles: kept for the next batch
		}
		b.docs = append(b.docs, pendingDoc{file: file, d: d, n: n})
	}
}

// segment is about how much text is hashed at a time: its words' hashes
// then stay in the cache until they are added.
const segment = 16 << 10

// addText adds the words of text, the document at batch position pos, a
// segment at a time (cut after a byte that is neither an ASCII letter nor
// digit, which no word, pair or symbol crosses), and returns the text as
// indexed and its distinct words. A text that is not valid UTF-8 is read
// from its first bad segment on as pi reads its files (WHATWG's decoder:
// js.ToValidUTF8), which the caller may leave to the index: the hasher
// meets every byte that is not ASCII.
func (b *Batch) addText(text string, pos uint32, seed uint64) (string, int) {
	distinct := 0
	for a := 0; a < len(text); {
		e := cutAfter(text, a)
		b.hashes = b.hasher.Append(b.hashes[:0], text[a:e], seed)
		if b.hasher.BadUTF8() {
			// What comes before is valid and ends in ASCII: it reads the same.
			text = text[:a] + string(js.ToValidUTF8([]byte(text[a:])))
			continue // the same segment, read again as pi reads it
		}
		distinct += b.addWords(b.hashes, text[a:], pos) // offsets from a (TermAt reads on, never back)
		a = e
	}
	return text, distinct
}

// cutAfter returns the end of the segment of text starting at a.
func cutAfter(text string, a int) int {
	if len(text)-a <= 2*segment {
		return len(text)
	}
	for e := a + segment; e < len(text); e++ {
		if c := text[e-1]; c < 0x80 && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return e
		}
	}
	return len(text)
}

// Kinds of filter words.
const (
	filterRole = iota
	filterProject
	filterMonth
)

// filterKey is a filter word before it is spelled out.
type filterKey struct {
	kind uint8
	s    string
	n    int
}

// month is a month (yyyymm) and its bounds in Unix milliseconds, lo to hi
// (excluded).
type month struct {
	lo, hi int64
	yyyymm int
}

func monthOf(ms int64) month {
	t := time.UnixMilli(ms).UTC()
	y, m, _ := t.Date()
	return month{time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), y*100 + int(m)}
}

// recentFilters is how many filter words of a kind a batch looks up
// without its maps (documents alternate between a few roles).
const recentFilters = 4

// addFilter adds batch position pos to the filter word of k, spelled out
// once (most documents have the filter words of one of the few before).
func (b *Batch) addFilter(k filterKey, pos uint32) {
	r := &b.recent[k.kind]
	for i := range r {
		if l := &r[i]; l.pos != nil && l.key == k {
			*l.pos = append(*l.pos, int32(pos))
			if i > 0 {
				r[0], r[i] = r[i], r[0]
			}
			return
		}
	}
	w, ok := b.filterWords[k]
	if !ok {
		switch k.kind {
		case filterRole:
			w = roleWord(k.s)
		case filterProject:
			w = projectWord(k.s)
		default:
			w = monthWord(k.n)
		}
		if b.filterWords == nil {
			b.filterWords = map[filterKey]string{}
		}
		b.filterWords[k] = w
	}
	l := b.filters[w]
	if l == nil {
		l = new([]int32)
		b.filters[w] = l
	}
	*l = append(*l, int32(pos))
	copy(r[1:], r[:])
	r[0] = recentFilter{k, l}
}

// recentFilter is a filter word recently added.
type recentFilter struct {
	key filterKey
	pos *[]int32
}

// Len returns the number of documents waiting in the batch.
func (b *Batch) Len() int { return len(b.docs) }

// Commit writes the batch in one transaction and empties it.
func (b *Batch) Commit() error {
	s := b.s
	if len(b.ops) == 0 && len(b.docs) == 0 {
		return nil
	}
	db, release, err := s.acquire() // the names and the write on one database: Reset waits for both
	if err != nil {
		return err
	}
	defer release()
	names, err := s.loadNames(db)
	if err != nil {
		return err
	}
	// Ordering the words needs no database: before the lock.
	sc := scratchPool.Get().(*scratch)
	defer func() {
		clear(sc.filters) // the batch's lists
		scratchPool.Put(sc)
	}()
	in, levels := b.invert(sc)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := db.Begin()
	if err != nil {
		return wrap(err)
	}
	defer tx.Rollback()
	newNames := false
	if err := b.write(tx, names, in, levels, sc, &newNames); err != nil {
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
	if b.tt != nil {
		b.tt.reset()
		tablePool.Put(b.tt)
		b.tt = nil
	}
	b.distinct = b.distinct[:0]
	b.ops, b.docs = b.ops[:0], b.docs[:0]
	for _, l := range b.filters {
		*l = (*l)[:0] // kept for the next batch
	}
	clear(b.files)
	b.recent = [3][recentFilters]recentFilter{}
	return nil
}

func (b *Batch) write(tx *sql.Tx, names map[int64]nameInfo, in *inverted, levels []int64, sc *scratch, newNames *bool) error {
	st := &txStmts{tx: tx}
	fids := map[string]int64{} // the files' ids, once known
	fileID := func(path string, create bool) (int64, error) {
		if id, ok := fids[path]; ok {
			return id, nil
		}
		id, err := pathID(st, path, create)
		if id != 0 {
			fids[path] = id
		}
		return id, err
	}
	for _, o := range b.ops {
		switch o.kind {
		case opPut:
			r := o.rec
			fid, err := fileID(r.File, true)
			if err != nil {
				return err
			}
			if _, err := st.exec(`INSERT OR REPLACE INTO records(id, size, mtime, stamp) VALUES(?,?,?,?)`, fid, r.Size, r.ModTime, r.Stamp); err != nil {
				return err
			}
			if r.Blob == nil {
				_, err = st.exec(`DELETE FROM blobs WHERE id=?`, fid)
			} else {
				_, err = st.exec(`INSERT OR REPLACE INTO blobs(id, data) VALUES(?,?)`, fid, r.Blob)
			}
			if err != nil {
				return err
			}
		case opDelete, opDeleteDocs:
			fid, err := fileID(o.rec.File, false)
			if err != nil {
				return err
			}
			if fid == 0 {
				continue // nothing of the file stored: nothing to drop
			}
			if err := deleteDocs(tx, fid); err != nil {
				return err
			}
			if o.kind == opDelete {
				for _, q := range []string{`DELETE FROM records WHERE id=?`, `DELETE FROM blobs WHERE id=?`, `DELETE FROM paths WHERE id=?`} {
					if _, err := st.exec(q, fid); err != nil {
						return err
					}
				}
				delete(fids, o.rec.File)
			}
		}
	}
	if len(b.docs) == 0 {
		return nil
	}
	// Ids only grow (AUTOINCREMENT): the newest documents are the last
	// added. They are given here as AUTOINCREMENT would (one past the
	// greatest ever used), so that a run of them goes in one row.
	var last int64
	if err := tx.QueryRow(`SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name='docruns'), 0),
		coalesce((SELECT max(hi) FROM docruns), 0))`).Scan(&last); err != nil {
		return err
	}
	w := &runWriter{st: st}
	byName := make(map[string]int64, len(names))
	kinds := make(map[int64]int, len(names))
	for id, n := range names {
		byName[n.name], kinds[id] = id, n.kinds
	}
	intern := func(n string, kind int) (int64, error) {
		if id, ok := byName[n]; ok && kinds[id]&kind != 0 {
			return id, nil
		}
		id, changed, err := nameID(tx, n, kind)
		if err != nil {
			return 0, err
		}
		*newNames = *newNames || changed
		byName[n] = id
		kinds[id] |= kind
		return id, nil
	}
	var file string // the last document's, whose file id and names m keeps
	var typ, role, proj string
	var m docMeta
	var err error
	ids := make([]int64, len(b.docs)) // by batch position; 0: dropped
	for i := range b.docs {
		p := &b.docs[i]
		if p.file == "" {
			continue
		}
		if p.file != file || m.fid == 0 {
			if m.fid, err = fileID(p.file, true); err != nil {
				return err
			}
			file = p.file
		}
		if p.d.Type != typ || m.typ == 0 {
			if m.typ, err = intern(p.d.Type, kindType); err != nil {
				return err
			}
			typ = p.d.Type
		}
		if p.d.Role != role || m.role == 0 {
			if m.role, err = intern(p.d.Role, kindRole); err != nil {
				return err
			}
			role = p.d.Role
		}
		if p.d.Project != proj || m.proj == 0 {
			if m.proj, err = intern(p.d.Project, kindProject); err != nil {
				return err
			}
			proj = p.d.Project
		}
		last++
		ids[i] = last
		m.id, m.pos, m.part, m.entry, m.n, m.time, m.level = last, p.d.Position, p.d.Part, p.d.EntryID, int64(p.n), p.d.Time, levels[i]
		if err := w.add(&m); err != nil {
			return err
		}
	}
	if err := w.close(); err != nil {
		return err
	}
	if err := writeSegment(tx, in, ids, levels, sc); err != nil {
		return err
	}
	return mergeSegments(st)
}

// deleteDocs drops every document of file fid; their ids stay in the word
// index, listed as dead, until a merge drops them.
func deleteDocs(tx *sql.Tx, fid int64) error {
	if _, err := tx.Exec(`WITH RECURSIVE ids(id, hi) AS (SELECT lo, hi FROM docruns WHERE fid=?1
		UNION ALL SELECT id+1, hi FROM ids WHERE id < hi) INSERT OR IGNORE INTO dead(id) SELECT id FROM ids`, fid); err != nil {
		return err
	}
	_, err := tx.Exec(`DELETE FROM docruns WHERE fid=?`, fid)
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
