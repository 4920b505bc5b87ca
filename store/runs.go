package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// Documents are stored in runs: a row of docruns packs up to runDocs
// documents of one file with consecutive ids, added by one batch, so that
// a batch writes a few rows per file rather than one per document. The
// row's key is its last id (hi: AUTOINCREMENT then remembers the greatest
// id ever given); lo is its first, tlo and thi the least and greatest
// time, bytes the length of its texts. Its data holds the documents in id
// order, in groups of groupDocs, so that finding one decodes one group:
//
//	data  = { uvarint(len(group)) } { group }     -- the lengths of every group but the last
//	group = { doc }                               -- each coded against the one before in its group
//	doc   = head uvarint(zigzag(pos - previous pos)) uvarint(zigzag(part))
//	        [uvarint(len(entry)) entry]            -- unless head&sameEntry
//	        [uvarint(type) uvarint(role) uvarint(project)] -- unless head&sameNames
//	        uvarint(len) uvarint(zigzag(time - previous time))
//	head  = level | sameEntry | sameNames          -- level: the low lenBits bits
//
// the previous position and time of a group's first document being 0.

// runDocs is the most documents a row packs, groupDocs the documents of a
// group: a lookup decodes at most that many.
const (
	runDocs   = 32
	groupDocs = 8
)

// Flags of a document's head byte, above its level.
const (
	sameEntry = 1 << lenBits       // the entry id of the document before
	sameNames = 1 << (lenBits + 1) // the type, role and project of the document before
	headBits  = sameEntry | sameNames | (1<<lenBits - 1)
)

// docMeta is a document as stored.
type docMeta struct {
	id, fid         int64
	pos, part       int
	entry           string
	typ, role, proj int64
	time, level     int64
	n               int64 // the text's bytes
}

// runWriter packs a batch's documents into rows of docruns, and inserts
// them insertRows at a time.
type runWriter struct {
	st   *txStmts
	rows []byte // the rows not yet inserted, one after another
	args []any  // their columns (data: its end in rows)
	buf  []byte // the groups
	ends []int  // where each group of buf ends
	n    int    // documents in buf
	lo   int64  // first id in buf
	fid  int64
	tlo  int64
	thi  int64
	size int64
	prev docMeta // the document before, in its group
}

// add appends document m (whose id follows the last added), writing the
// run so far first when m belongs to another file or the run is full.
func (w *runWriter) add(m *docMeta) error {
	if w.n > 0 && (m.fid != w.fid || w.n == runDocs) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	if w.n == 0 {
		w.lo, w.fid, w.tlo, w.thi, w.size = m.id, m.fid, m.time, m.time, 0
	}
	first := w.n%groupDocs == 0
	if first {
		w.prev = docMeta{}
		if w.n > 0 {
			w.ends = append(w.ends, len(w.buf))
		}
	}
	head := byte(m.level)
	if !first && m.entry == w.prev.entry {
		head |= sameEntry
	}
	if !first && m.typ == w.prev.typ && m.role == w.prev.role && m.proj == w.prev.proj {
		head |= sameNames
	}
	w.buf = append(w.buf, head)
	w.buf = binary.AppendUvarint(w.buf, zigzag(int64(m.pos-w.prev.pos)))
	w.buf = binary.AppendUvarint(w.buf, zigzag(int64(m.part)))
	if head&sameEntry == 0 {
		w.buf = binary.AppendUvarint(w.buf, uint64(len(m.entry)))
		w.buf = append(w.buf, m.entry...)
	}
	if head&sameNames == 0 {
		w.buf = binary.AppendUvarint(w.buf, uint64(m.typ))
		w.buf = binary.AppendUvarint(w.buf, uint64(m.role))
		w.buf = binary.AppendUvarint(w.buf, uint64(m.proj))
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(m.n))
	w.buf = binary.AppendUvarint(w.buf, zigzag(m.time-w.prev.time))
	w.tlo, w.thi = min(w.tlo, m.time), max(w.thi, m.time)
	w.size += m.n
	w.n++
	w.prev = *m
	return nil
}

// flush ends the run gathered so far as one row.
func (w *runWriter) flush() error {
	if w.n == 0 {
		return nil
	}
	start := 0
	for _, e := range w.ends {
		w.rows = binary.AppendUvarint(w.rows, uint64(e-start))
		start = e
	}
	w.rows = append(w.rows, w.buf...)
	w.args = append(w.args, w.lo+int64(w.n)-1, w.lo, w.fid, w.tlo, w.thi, w.size, len(w.rows))
	w.buf, w.ends, w.n = w.buf[:0], w.ends[:0], 0
	if len(w.args) == insertRows*runColumns {
		return w.insert()
	}
	return nil
}

// insertRows is how many rows of docruns one INSERT writes.
const (
	insertRows = 16
	runColumns = 7
)

const insertRun = "INSERT INTO docruns(hi, lo, fid, tlo, thi, bytes, data) VALUES(?,?,?,?,?,?,?)"

var insertRuns = insertRun + strings.Repeat(",(?,?,?,?,?,?,?)", insertRows-1)

// insert inserts the rows gathered, insertRows at once or one by one.
func (w *runWriter) insert() error {
	start := 0
	for k := runColumns - 1; k < len(w.args); k += runColumns {
		end := w.args[k].(int)
		w.args[k] = w.rows[start:end]
		start = end
	}
	var err error
	if len(w.args) == insertRows*runColumns {
		_, err = w.st.exec(insertRuns, w.args...)
	} else {
		for k := 0; k < len(w.args) && err == nil; k += runColumns {
			_, err = w.st.exec(insertRun, w.args[k:k+runColumns]...)
		}
	}
	clear(w.args)
	w.rows, w.args = w.rows[:0], w.args[:0]
	return err
}

// close inserts what is left.
func (w *runWriter) close() error {
	if err := w.flush(); err != nil {
		return err
	}
	return w.insert()
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// errRun reports a row of docruns that does not decode.
var errRun = fmt.Errorf("%w (a row of documents does not decode)", ErrCorrupt)

// runReader walks the documents of one row of docruns in id order.
type runReader struct {
	lo, hi int64
	docs   []byte                   // the groups
	ends   [runDocs / groupDocs]int // where each group ends in docs
	data   []byte                   // the rest of the current group
	m      docMeta                  // the current document, but for its entry
	entry  []byte                   // the current document's entry id, in data
	err    error
}

// newRunReader starts reading the row of ids lo to hi of file fid.
func newRunReader(lo, hi, fid int64, data []byte) runReader {
	r := runReader{lo: lo, hi: hi, m: docMeta{id: lo - 1, fid: fid}}
	if lo < 1 || hi < lo || hi-lo >= runDocs {
		r.err = errRun
		return r
	}
	groups := int((hi-lo)/groupDocs) + 1
	end := 0
	for g := range groups - 1 {
		l, k := binary.Uvarint(data)
		if k <= 0 || l == 0 || l > uint64(len(data)) {
			r.err = errRun
			return r
		}
		data = data[k:]
		end += int(l)
		r.ends[g] = end
	}
	if end >= len(data) {
		r.err = errRun // the last group would be empty
		return r
	}
	r.docs, r.ends[groups-1] = data, len(data)
	return r
}

// next moves to the next document; false at the end or on damage (err set).
func (r *runReader) next() bool {
	if r.err != nil || r.m.id == r.hi {
		return false
	}
	k := r.m.id + 1 - r.lo // the document's place in the row
	first := k%groupDocs == 0
	if first {
		g := int(k / groupDocs)
		start := 0
		if g > 0 {
			start = r.ends[g-1]
		}
		r.data = r.docs[start:r.ends[g]]
		r.m.pos, r.m.time = 0, 0
	}
	d := r.data
	if len(d) == 0 {
		return r.fail()
	}
	head := d[0]
	if head&^headBits != 0 || first && head&(sameEntry|sameNames) != 0 {
		return r.fail() // unknown flags, or a group's first document like the one before
	}
	dpos, d, ok := uvarint(d[1:])
	part, d, ok2 := uvarint(d)
	pos := int64(r.m.pos) + unzigzag(dpos)
	if !ok || !ok2 {
		return r.fail()
	}
	if head&sameEntry == 0 {
		var l uint64
		if l, d, ok = uvarint(d); !ok || l > uint64(len(d)) {
			return r.fail()
		}
		r.entry, d = d[:l:l], d[l:]
	}
	if head&sameNames == 0 {
		var typ, role, proj uint64
		var ok3 bool
		typ, d, ok = uvarint(d)
		role, d, ok2 = uvarint(d)
		proj, d, ok3 = uvarint(d)
		if !ok || !ok2 || !ok3 || typ > math.MaxInt64 || role > math.MaxInt64 || proj > math.MaxInt64 {
			return r.fail()
		}
		r.m.typ, r.m.role, r.m.proj = int64(typ), int64(role), int64(proj)
	}
	n, d, ok := uvarint(d)
	dt, d, ok2 := uvarint(d)
	if !ok || !ok2 || n > math.MaxInt64 {
		return r.fail()
	}
	if ((k+1)%groupDocs == 0 || r.m.id+1 == r.hi) && len(d) != 0 {
		return r.fail() // the group holds more than its documents
	}
	r.data = d
	r.m.id++
	r.m.level = int64(head & (1<<lenBits - 1))
	r.m.pos, r.m.part, r.m.n = int(pos), int(unzigzag(part)), int64(n)
	r.m.time += unzigzag(dt)
	return true
}

// uvarint reads a uvarint off d; ok is false if d does not start with one.
func uvarint(d []byte) (v uint64, rest []byte, ok bool) {
	if len(d) > 0 && d[0] < 0x80 {
		return uint64(d[0]), d[1:], true
	}
	return longUvarint(d)
}

// longUvarint is uvarint for any length.
func longUvarint(d []byte) (uint64, []byte, bool) {
	v, k := binary.Uvarint(d)
	if k <= 0 {
		return 0, d, false
	}
	return v, d[k:], true
}

func (r *runReader) fail() bool {
	r.err, r.data = errRun, nil
	return false
}

// meta returns the current document, its entry id copied out of the row.
func (r *runReader) meta() docMeta {
	m := r.m
	m.entry = string(r.entry)
	return m
}

// find returns document id (lo <= id <= hi), decoding the whole of its
// group: a damaged one is an error.
func (r *runReader) find(id int64) (docMeta, error) {
	k := id - r.lo
	if r.err != nil || k < 0 || id > r.hi {
		return docMeta{}, errRun
	}
	r.m.id = r.lo + k - k%groupDocs - 1 // the group's first is next
	last := min(r.hi, r.m.id+groupDocs)
	var m docMeta
	for r.m.id < last {
		if !r.next() {
			return docMeta{}, errRun
		}
		if r.m.id == id {
			m = r.meta()
		}
	}
	return m, nil
}
