package store

import (
	"bytes"
	"cmp"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	mbits "math/bits"
	"slices"
)

// The full-text index: segments of sorted words with the ids of the
// documents that hold them, written once and merged now and then, as an
// LSM tree does. A Batch's documents become one segment; when fanIn
// segments of one size class exist, they are merged into one. A segment
// is stored as blocks of about blockSize bytes, keyed by their first word:
//
//	block   = { entry }
//	entry   = uvarint(shared) uvarint(len(suffix)) suffix   -- the word, front-coded within the block
//	          uvarint(len(ids)) ids                              -- its documents, skipped in one step
//	ids     = uvarint(2n | bitmap) uvarint(id0) uvarint(last - id0) body
//	          -- n document ids, ascending, from id0 to last
//	body    = { uvarint(id - previous id) }   -- bitmap 0: the n-1 steps
//	        | { byte }                        -- bitmap 1: (last-id0)/8+1 bytes, bit i
//	                                          -- (byte i/8, bit i%8) set for id0+i
//
// A list is stored in whichever body is shorter: a word in more than about
// one document in eight of its range (the most frequent words, most of
// the ids) as the bitmap. Knowing each list's first and last id, a merge of
// segments whose ids do not interleave (the usual case: a batch's ids are
// consecutive) splices the encoded lists instead of decoding them: step
// lists as they are, bitmaps a byte at a time.
//
// A segment also keeps, in segs.levels, the ids of its documents and their
// length levels (ids, then one byte each), which ranking reads instead of
// the documents (docruns).
//
// Looking a word up reads the one block whose first word is the greatest
// not after it; a prefix reads the blocks that can hold words starting
// with it. Deleted documents stay in their segments until a merge drops
// them (the dead table lists them); a search never returns one, since it
// reads each candidate from docruns.

const (
	blockSize = 16 << 10
	fanIn     = 16 // segments of a size class merged at once
	// maxExpansions bounds the words a prefix may stand for; a prefix that
	// starts more words narrows nothing and is left to Match.
	maxExpansions = 20000
)

// Filter words (role:, project:, after:/before: by month): a NUL is never
// part of a word from search.Terms, so they cannot be typed or collide.
func roleWord(role string) string { return "\x00r" + role }
func projectWord(p string) string { return "\x00p" + p }
func monthWord(yyyymm int) string { return fmt.Sprintf("\x00m%06d", yyyymm) }

// sizeClass is the class of a segment of docs documents: the number of
// times fanIn divides into it.
func sizeClass(docs int) int {
	c := 0
	for ; docs >= fanIn; docs /= fanIn {
		c++
	}
	return c
}

var errTooBroad = errors.New("prefix starts too many words")

// segWriter encodes sorted words and their ids into blocks.
type segWriter struct {
	tx     *sql.Tx
	ins    *sql.Stmt
	seg    int64
	buf    []byte
	ids    []byte // one word's encoded ids
	first  []byte
	prev   []byte
	blocks int
}

func newSegWriter(tx *sql.Tx, lv *segLevels) (*segWriter, error) {
	docs := len(lv.ids)
	res, err := tx.Exec(`INSERT INTO segs(class, docs, lo, hi, levels) VALUES(?, ?, ?, ?, ?)`,
		sizeClass(docs), docs, lv.ids[0], lv.ids[docs-1], lv.encode())
	if err != nil {
		return nil, err
	}
	seg, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	ins, err := tx.Prepare(`INSERT INTO blocks(seg, first, data) VALUES(?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	return &segWriter{tx: tx, ins: ins, seg: seg}, nil
}

// encodeIDs appends the encoding of ids (ascending, not empty) to dst.
func encodeIDs(dst []byte, ids []int64) []byte {
	first, last := ids[0], ids[len(ids)-1]
	steps := 0
	for k := 1; k < len(ids); k++ {
		steps += uvarintLen(uint64(ids[k] - ids[k-1]))
	}
	if useBitmap(steps, first, last) {
		dst = appendHead(dst, int64(len(ids)), first, last, true)
		at := len(dst)
		dst = append(dst, make([]byte, bitmapLen(first, last))...)
		bits := dst[at:]
		for _, id := range ids {
			setBit(bits, id-first)
		}
		return dst
	}
	dst = appendHead(dst, int64(len(ids)), first, last, false)
	for k := 1; k < len(ids); k++ {
		dst = binary.AppendUvarint(dst, uint64(ids[k]-ids[k-1]))
	}
	return dst
}

// appendHead appends the header of a list of n ids from first to last.
func appendHead(dst []byte, n, first, last int64, bitmap bool) []byte {
	dst = binary.AppendUvarint(dst, uint64(n)<<1|uint64(b2i(bitmap)))
	dst = binary.AppendUvarint(dst, uint64(first))
	return binary.AppendUvarint(dst, uint64(last-first))
}

// bitmapLen is the length of the bitmap of ids first to last.
func bitmapLen(first, last int64) int { return int((last-first)/8 + 1) }

// useBitmap reports whether a list from first to last whose steps take
// steps bytes is stored as a bitmap (shorter).
func useBitmap(steps int, first, last int64) bool {
	return last-first < math.MaxInt32 && bitmapLen(first, last) < steps
}

func setBit(bits []byte, i int64) { bits[i>>3] |= 1 << (i & 7) }

// idList is an encoded list of ids, its header read: its body is steps,
// or bits when it is a bitmap.
type idList struct {
	n, first, last int64
	steps          []byte
	bits           []byte
}

func parseIDs(raw []byte) (idList, bool) {
	var v [3]uint64
	for i := range v {
		x, k := binary.Uvarint(raw)
		if k <= 0 {
			return idList{}, false
		}
		v[i], raw = x, raw[k:]
	}
	n := v[0] >> 1
	if n == 0 || v[1] > math.MaxInt64/2 || v[2] > math.MaxInt64/2 {
		return idList{}, false
	}
	l := idList{n: int64(n), first: int64(v[1]), last: int64(v[1] + v[2])}
	if v[0]&1 == 0 {
		if n > uint64(len(raw))+1 {
			return idList{}, false
		}
		l.steps = raw
		return l, true
	}
	if v[2] >= math.MaxInt32 || len(raw) != bitmapLen(l.first, l.last) || n > v[2]+1 {
		return idList{}, false
	}
	l.bits = raw
	return l, true
}

// add appends word with its ids (ascending, not empty).
func (w *segWriter) add(word []byte, ids []int64) error {
	w.ids = encodeIDs(w.ids[:0], ids)
	return w.addEncoded(word, w.ids)
}

// addEncoded appends word with its encoded ids.
func (w *segWriter) addEncoded(word, enc []byte) error {
	return w.addSteps(word, enc, nil)
}

// addSteps appends word with its encoded ids, the header of the list
// (head) apart from its steps.
func (w *segWriter) addSteps(word, head, steps []byte) error {
	w.start(word, len(head)+len(steps))
	w.buf = append(w.buf, head...)
	w.buf = append(w.buf, steps...)
	return w.end()
}

// start appends word and the length n of its encoded ids, which the
// caller then appends to w.buf before calling end.
func (w *segWriter) start(word []byte, n int) {
	if len(w.buf) == 0 {
		w.first = append(w.first[:0], word...)
		w.prev = w.prev[:0]
	}
	shared := 0
	for shared < len(word) && shared < len(w.prev) && word[shared] == w.prev[shared] {
		shared++
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(shared))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(word)-shared))
	w.buf = append(w.buf, word[shared:]...)
	w.buf = binary.AppendUvarint(w.buf, uint64(n))
	w.prev = append(w.prev[:0], word...)
}

// end writes the block when it is full.
func (w *segWriter) end() error {
	if len(w.buf) >= blockSize {
		return w.flush()
	}
	return nil
}

func (w *segWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.ins.Exec(w.seg, w.first, w.buf); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	w.blocks++
	return nil
}

func (w *segWriter) close() error {
	err := w.flush()
	if cerr := w.ins.Close(); err == nil {
		err = cerr
	}
	return err
}

// segLevels are the ids of a segment's documents, ascending, and their length levels.
type segLevels struct {
	ids []int64
	lv  []uint8
}

func (l *segLevels) encode() []byte {
	b := binary.AppendUvarint(nil, uint64(len(l.ids)))
	prev := int64(0)
	for _, id := range l.ids {
		b = binary.AppendUvarint(b, uint64(id-prev))
		prev = id
	}
	return append(b, l.lv...)
}

func decodeLevels(b []byte) (*segLevels, error) {
	bad := fmt.Errorf("%w (a segment's levels do not decode)", ErrCorrupt)
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, bad
	}
	b = b[k:]
	l := &segLevels{ids: make([]int64, 0, n)}
	prev := int64(0)
	for range n {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, bad
		}
		b = b[k:]
		prev += int64(d)
		l.ids = append(l.ids, prev)
	}
	if uint64(len(b)) != n {
		return nil, bad
	}
	l.lv = slices.Clone(b)
	return l, nil
}

// level returns the level of document id, if the segment holds it.
func (l *segLevels) level(id int64) (uint8, bool) {
	if len(l.ids) == 0 || id < l.ids[0] || id > l.ids[len(l.ids)-1] {
		return 0, false // most segments hold none of a window's ids
	}
	k, ok := slices.BinarySearch(l.ids, id)
	if !ok {
		return 0, false
	}
	return l.lv[k], true
}

// writeSegment writes a batch's words as a new segment; ids maps batch
// positions to document ids (0 for a document dropped from the batch),
// levels to their length levels.
func writeSegment(tx *sql.Tx, in *inverted, ids, levels []int64, sc *scratch) error {
	lv := &segLevels{ids: make([]int64, 0, len(ids)), lv: make([]uint8, 0, len(ids))}
	every := true // every position has an id: ids[p] is ids[0]+p
	for p, id := range ids {
		if id > 0 {
			lv.ids = append(lv.ids, id)
			lv.lv = append(lv.lv, uint8(levels[p]))
		} else {
			every = false
		}
	}
	if len(lv.ids) == 0 {
		return nil
	}
	w, err := newSegWriter(tx, lv)
	if err != nil {
		return err
	}
	nt := in.nterms()
	buf := sc.ids[:0]
	for _, k := range in.order {
		word := in.word(k.i)
		buf = buf[:0]
		if int(k.i) >= nt {
			for _, p := range in.filters[int(k.i)-nt].pos {
				if id := ids[p]; id > 0 {
					buf = append(buf, id)
				}
			}
		} else {
			ti := &in.tt.terms[k.i]
			steps := in.tt.steps[ti.off : ti.off+ti.len]
			if every { // the steps between positions are those between ids
				first, last := ids[ti.first], ids[ti.last]
				body := steps
				bitmap := useBitmap(len(steps), first, last)
				if bitmap {
					sc.bits, _ = stepBits(clearGrow(sc.bits, bitmapLen(first, last)), 0, steps) // the batch's own
					body = sc.bits
				}
				sc.head = appendHead(sc.head[:0], int64(ti.n), first, last, bitmap)
				if err := w.addSteps(word, sc.head, body); err != nil {
					w.close()
					return err
				}
				continue
			}
			p := int64(ti.first)
			for {
				if id := ids[p]; id > 0 {
					buf = append(buf, id)
				}
				if len(steps) == 0 {
					break
				}
				d, n := binary.Uvarint(steps)
				p, steps = p+int64(d), steps[n:]
			}
		}
		if len(buf) == 0 {
			continue
		}
		if err := w.add(word, buf); err != nil {
			w.close()
			return err
		}
	}
	sc.ids = buf
	return w.close()
}

// blockIter walks the entries of one block; ids decodes the current
// word's documents (only when asked: a lookup skips most words).
type blockIter struct {
	data []byte
	word []byte
	raw  []byte // the current word's encoded ids
	err  error
}

// next moves to the next entry; false at the end or on damage (err set).
func (it *blockIter) next() bool {
	if len(it.data) == 0 {
		return false
	}
	shared, n := binary.Uvarint(it.data)
	if n <= 0 || shared > uint64(len(it.word)) {
		return it.fail()
	}
	it.data = it.data[n:]
	l, n := binary.Uvarint(it.data)
	if n <= 0 || uint64(len(it.data)-n) < l {
		return it.fail()
	}
	it.word = append(it.word[:shared], it.data[n:n+int(l)]...)
	it.data = it.data[n+int(l):]
	l, n = binary.Uvarint(it.data)
	if n <= 0 || uint64(len(it.data)-n) < l {
		return it.fail()
	}
	it.raw = it.data[n : n+int(l)]
	it.data = it.data[n+int(l):]
	return true
}

// ids appends the current word's document ids to dst.
func (it *blockIter) ids(dst []int64) ([]int64, error) {
	l, ok := parseIDs(it.raw)
	if !ok {
		it.fail()
		return dst, it.err
	}
	if l.bits != nil {
		// n is at most the bits' count (parseIDs): dst is grown once.
		start := len(dst)
		dst = slices.Grow(dst, int(l.n))[:start+int(l.n)]
		out, k := dst[start:], 0
		bits, base := l.bits, l.first
		for len(bits) > 0 {
			var x uint64
			if len(bits) >= 8 {
				x, bits = binary.LittleEndian.Uint64(bits), bits[8:]
			} else {
				for j, b := range bits {
					x |= uint64(b) << (8 * j)
				}
				bits = nil
			}
			for ; x != 0; x &= x - 1 {
				if k == len(out) {
					it.fail() // more ids than the list says
					return dst[:start], it.err
				}
				out[k] = base + int64(mbits.TrailingZeros64(x))
				k++
			}
			base += 64
		}
		if k != len(out) || out[0] != l.first || out[k-1] != l.last {
			it.fail()
			return dst[:start], it.err
		}
		return dst, nil
	}
	d := l.steps
	prev := l.first
	dst = append(dst, prev)
	for range l.n - 1 {
		x, n := binary.Uvarint(d)
		if n <= 0 || x == 0 { // ids ascend: a step is never 0
			it.fail()
			return dst, it.err
		}
		d = d[n:]
		prev += int64(x)
		dst = append(dst, prev)
	}
	if len(d) != 0 || prev != l.last {
		it.fail()
		return dst, it.err
	}
	return dst, nil
}

// errBlock reports a block of the word index that does not decode.
var errBlock = fmt.Errorf("%w (a block of the word index does not decode)", ErrCorrupt)

func (it *blockIter) fail() bool {
	it.err = errBlock
	it.data = nil
	return false
}

// lookup returns the ids of the documents holding t (a prefix: any word
// starting with it), in every segment, ascending.
func lookup(tx *sql.Tx, segs []int64, word string, prefix bool) ([]int64, error) {
	w := []byte(word)
	var lists [][]int64
	expansions := 0
	for _, seg := range segs {
		var rows *sql.Rows
		var err error
		if prefix {
			rows, err = tx.Query(`SELECT data FROM blocks WHERE seg=?1
				AND first >= coalesce((SELECT first FROM blocks WHERE seg=?1 AND first <= ?2 ORDER BY first DESC LIMIT 1), x'')
				AND first < ?3 ORDER BY first`, seg, []byte(word), successor(word))
		} else {
			rows, err = tx.Query(`SELECT data FROM blocks WHERE seg=? AND first <= ? ORDER BY first DESC LIMIT 1`, seg, []byte(word))
		}
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var data []byte
			if err := rows.Scan(&data); err != nil {
				rows.Close()
				return nil, err
			}
			it := blockIter{data: data}
			for it.next() {
				if prefix && !bytes.HasPrefix(it.word, w) || !prefix && !bytes.Equal(it.word, w) {
					if bytes.Compare(it.word, w) > 0 {
						break
					}
					continue
				}
				if expansions++; expansions > maxExpansions {
					rows.Close()
					return nil, errTooBroad
				}
				ids, err := it.ids(nil)
				if err != nil {
					rows.Close()
					return nil, err
				}
				lists = append(lists, ids)
				if !prefix {
					break
				}
			}
			if it.err != nil {
				rows.Close()
				return nil, it.err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return union(lists), nil
}

// successor returns the least byte string greater than every string
// starting with p (words are UTF-8, so never hold 0xff).
func successor(p string) []byte {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return b[:i+1]
		}
	}
	return append(b, 0xff)
}

// union merges ascending lists into one, without duplicates: joined
// when they follow one another (a word's lists in segments of batches
// that were not merged together), through a bitmap of their range when
// they are many and long (a prefix that starts many words), else
// pairwise.
func union(lists [][]int64) []int64 {
	total, lo, hi := 0, int64(math.MaxInt64), int64(math.MinInt64)
	for _, l := range lists {
		if len(l) > 0 {
			total += len(l)
			lo, hi = min(lo, l[0]), max(hi, l[len(l)-1])
		}
	}
	if len(lists) > 1 {
		if out, ok := join(lists, total); ok {
			return out
		}
	}
	if len(lists) > 2 && total > 1024 && (hi-lo)/64 < int64(8*total) {
		bits := make([]uint64, (hi-lo)/64+1)
		for _, l := range lists {
			for _, id := range l {
				bits[(id-lo)/64] |= 1 << uint((id-lo)%64)
			}
		}
		out := make([]int64, 0, total)
		for w, x := range bits {
			for x != 0 {
				out = append(out, lo+int64(w)*64+int64(mbits.TrailingZeros64(x)))
				x &= x - 1
			}
		}
		return out
	}
	for len(lists) > 1 {
		var next [][]int64
		for i := 0; i < len(lists); i += 2 {
			if i+1 == len(lists) {
				next = append(next, lists[i])
				break
			}
			next = append(next, merge2(lists[i], lists[i+1]))
		}
		lists = next
	}
	if len(lists) == 0 {
		return nil
	}
	return lists[0]
}

// join returns the ascending lists as one of total ids when, in the
// order of their first ids, each starts after the one before ends.
func join(lists [][]int64, total int) ([]int64, bool) {
	var buf [16][]int64
	ls := buf[:0]
	for _, l := range lists {
		if len(l) > 0 {
			ls = append(ls, l)
		}
	}
	slices.SortFunc(ls, func(a, b []int64) int { return cmp.Compare(a[0], b[0]) })
	for k := 1; k < len(ls); k++ {
		if ls[k][0] <= ls[k-1][len(ls[k-1])-1] {
			return nil, false
		}
	}
	if len(ls) == 1 {
		return ls[0], true
	}
	out := make([]int64, 0, total)
	for _, l := range ls {
		out = append(out, l...)
	}
	return out, true
}

func merge2(a, b []int64) []int64 {
	out := make([]int64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// intersect keeps the ids of a also in b: by binary search in the longer
// when one is much shorter, else by walking both. The ids are written
// over the shorter list's (the caller gives up both).
func intersect(a, b []int64) []int64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	out := a[:0] // written behind where a is read
	if len(a)*16 > len(b) {
		j := 0
		for _, x := range a {
			for j < len(b) && b[j] < x {
				j++
			}
			if j == len(b) {
				break
			}
			if b[j] == x {
				out = append(out, x)
			}
		}
		return out
	}
	for _, x := range a {
		k, found := slices.BinarySearch(b, x)
		if found {
			out = append(out, x)
		}
		b = b[k:]
		if len(b) == 0 {
			break
		}
	}
	return out
}

// subtract keeps the ids of a not in b.
func subtract(a, b []int64) []int64 {
	out := make([]int64, 0, len(a))
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			continue
		}
		out = append(out, x)
	}
	return out
}

// segments lists the segment ids.
func segments(tx *sql.Tx) ([]int64, error) {
	rows, err := tx.Query(`SELECT id FROM segs ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// mergeSegments merges, while some size class holds fanIn segments, those
// segments into one, dropping dead documents.
func mergeSegments(st *txStmts) error {
	tx := st.tx
	for {
		var class int
		err := tx.QueryRow(`SELECT class FROM segs GROUP BY class HAVING count(*) >= ? ORDER BY class LIMIT 1`, fanIn).Scan(&class)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		rows, err := tx.Query(`SELECT id FROM segs WHERE class=? ORDER BY id LIMIT ?`, class, fanIn)
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
		if err := merge(st, ids); err != nil {
			return err
		}
	}
}

// segReader walks a segment's words in order, a block at a time, read
// by one query.
type segReader struct {
	tx   *sql.Tx
	seg  int64
	rows *sql.Rows
	// bufs are the current block and the one before: a merge may still
	// be writing a list of the one before when it reads the next.
	bufs [2][]byte
	it   blockIter
	done bool
}

func (r *segReader) next() (bool, error) {
	for {
		if r.it.next() {
			return true, nil
		}
		if r.it.err != nil || r.done {
			return false, r.it.err
		}
		if r.rows == nil {
			rows, err := r.tx.Query(`SELECT data FROM blocks WHERE seg=? ORDER BY first`, r.seg)
			if err != nil {
				return false, err
			}
			r.rows = rows
		}
		var data sql.RawBytes
		if !r.rows.Next() {
			r.done = true
			return false, r.close()
		}
		if err := r.rows.Scan(&data); err != nil {
			r.close()
			return false, err
		}
		r.bufs[0], r.bufs[1] = append(r.bufs[1][:0], data...), r.bufs[0]
		r.it = blockIter{data: r.bufs[0], word: r.it.word[:0]}
	}
}

// close ends the reader's query.
func (r *segReader) close() error {
	if r.rows == nil {
		return nil
	}
	err := r.rows.Err()
	if cerr := r.rows.Close(); err == nil {
		err = cerr
	}
	r.rows = nil
	return err
}

// merge writes segments ids as one, without the dead documents.
func merge(st *txStmts, ids []int64) error {
	tx := st.tx
	dead := map[int64]bool{}
	rows, err := tx.Query(`SELECT id FROM dead`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		dead[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	lv := &segLevels{}
	for _, id := range ids {
		var b []byte
		if err := tx.QueryRow(`SELECT levels FROM segs WHERE id=?`, id).Scan(&b); err != nil {
			return err
		}
		l, err := decodeLevels(b)
		if err != nil {
			return err
		}
		if lv.ids == nil {
			lv.ids, lv.lv = make([]int64, 0, len(ids)*len(l.ids)), make([]uint8, 0, len(ids)*len(l.ids))
		}
		for k, d := range l.ids {
			if !dead[d] {
				lv.ids = append(lv.ids, d)
				lv.lv = append(lv.lv, l.lv[k])
			}
		}
	}
	if len(lv.ids) == 0 { // every document died: the segments go
		return dropSegments(tx, ids, 0)
	}
	sorted := lv // the usual case: segments in order of their ids do not interleave
	if !slices.IsSorted(lv.ids) {
		order := make([]int, len(lv.ids))
		for k := range order {
			order[k] = k
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(lv.ids[a], lv.ids[b]) })
		sorted = &segLevels{ids: make([]int64, len(order)), lv: make([]uint8, len(order))}
		for k, o := range order {
			sorted.ids[k], sorted.lv[k] = lv.ids[o], lv.lv[o]
		}
	}
	readers := make([]*segReader, len(ids))
	for i, id := range ids {
		readers[i] = &segReader{tx: tx, seg: id}
		defer readers[i].close()
		if _, err := readers[i].next(); err != nil {
			return err
		}
	}
	w, err := newSegWriter(tx, sorted)
	if err != nil {
		return err
	}
	deadIDs := slices.Sorted(maps.Keys(dead))
	hasDead := func(l idList) bool {
		k, _ := slices.BinarySearch(deadIDs, l.first)
		return k < len(deadIDs) && deadIDs[k] <= l.last
	}
	var word, enc, bits []byte
	var lists [][]int64
	var raws []idList
	h := readerHeap{}
	for _, r := range readers {
		if !r.done {
			h.push(r)
		}
	}
	var at []*segReader
	for len(h) > 0 {
		// The least current word, and every reader at it.
		word = append(word[:0], h[0].it.word...)
		at = at[:0]
		for len(h) > 0 && bytes.Equal(h[0].it.word, word) {
			at = append(at, h.pop())
		}
		// Splice the encoded lists when they follow one another and hold
		// no dead document; else decode, unite and drop the dead.
		raws = raws[:0]
		splice := true
		for _, r := range at {
			l, ok := parseIDs(r.it.raw)
			if !ok || hasDead(l) {
				splice = false
			}
			raws = append(raws, l) // steps point into a block no one changes
		}
		slices.SortFunc(raws, func(a, b idList) int { return cmp.Compare(a.first, b.first) })
		for k := 1; splice && k < len(raws); k++ {
			splice = raws[k].first > raws[k-1].last
		}
		lists = lists[:0]
		for _, r := range at {
			if !splice {
				ids, err := r.it.ids(nil)
				if err != nil {
					w.close()
					return err
				}
				lists = append(lists, ids)
			}
			if _, err := r.next(); err != nil {
				w.close()
				return err
			}
			if !r.done {
				h.push(r)
			}
		}
		if splice {
			var ok bool
			if enc, bits, ok = spliceLists(enc[:0], bits, raws); !ok {
				w.close()
				return errBlock
			}
			w.start(word, len(enc))
			w.buf = append(w.buf, enc...)
			if err := w.end(); err != nil {
				w.close()
				return err
			}
			continue
		}
		all := union(lists)
		if len(dead) > 0 {
			all = slices.DeleteFunc(all, func(id int64) bool { return dead[id] })
		}
		if len(all) > 0 {
			if err := w.add(word, all); err != nil {
				w.close()
				return err
			}
		}
	}
	if err := w.close(); err != nil {
		return err
	}
	return dropSegments(tx, ids, w.seg)
}

// spliceLists appends to dst the encoding of lists, which do not
// interleave and are in order: their steps and gaps as they are, or, when
// shorter, a bitmap (built in bits, returned for reuse); false if a list
// does not decode.
func spliceLists(dst, bits []byte, lists []idList) (_, _ []byte, ok bool) {
	first, last := lists[0].first, lists[len(lists)-1].last
	var n int64
	steps, bitmaps := 0, false // the steps' length, unless a list is a bitmap
	most := int64(0)           // the most the steps may take
	for k, l := range lists {
		n += l.n
		if k > 0 {
			gap := uvarintLen(uint64(l.first - lists[k-1].last))
			steps += gap
			most += int64(gap)
		}
		steps += len(l.steps)
		most += int64(len(l.steps))
		if l.bits != nil {
			bitmaps = true
			most += (l.n - 1) * int64(uvarintLen(uint64(l.last-l.first)))
		}
	}
	if !bitmaps && !useBitmap(steps, first, last) || bitmaps && !useBitmap(int(min(most, math.MaxInt32)), first, last) {
		// Steps, surely the shorter: the bitmap is not built (a sparse
		// list may span far more ids than it holds).
		dst = appendHead(dst, n, first, last, false)
		for k, l := range lists {
			if k > 0 {
				dst = binary.AppendUvarint(dst, uint64(l.first-lists[k-1].last))
			}
			if l.bits == nil {
				dst = append(dst, l.steps...)
				continue
			}
			prev, count := int64(-1), int64(0)
			eachBit(l.bits, func(i int64) {
				if prev >= 0 {
					dst = binary.AppendUvarint(dst, uint64(i-prev))
				} else if i != 0 {
					count = -1 << 62 // not its first id
				}
				prev = i
				count++
			})
			if count != l.n || prev != l.last-l.first {
				return dst, bits, false
			}
		}
		return dst, bits, true
	}
	bits = clearGrow(bits, bitmapLen(first, last))
	for _, l := range lists {
		if l.bits != nil {
			if !orBits(bits, l.first-first, l.bits) {
				return dst, bits, false
			}
		} else if _, ok := stepBits(bits, l.first-first, l.steps); !ok {
			return dst, bits, false
		}
	}
	// Steps take a byte at least: a bitmap shorter than n-1 bytes is the
	// shorter. Else the steps' length is counted on the bitmap.
	sure := bitmaps && useBitmap(int(n-1), first, last)
	if bitmaps && !sure {
		steps = 0
		prev := int64(0)
		eachBit(bits, func(i int64) {
			if i > 0 {
				steps += uvarintLen(uint64(i - prev))
			}
			prev = i
		})
	}
	if sure || useBitmap(steps, first, last) {
		dst = appendHead(dst, n, first, last, true)
		return append(dst, bits...), bits, true
	}
	dst = appendHead(dst, n, first, last, false)
	prev := int64(0)
	eachBit(bits, func(i int64) {
		if i > 0 {
			dst = binary.AppendUvarint(dst, uint64(i-prev))
		}
		prev = i
	})
	return dst, bits, true
}

// clearGrow returns b with length n, cleared.
func clearGrow(b []byte, n int) []byte {
	b = grow(b, n)
	clear(b)
	return b
}

// stepBits sets in bits the ids of a list of steps whose first id is at
// bit off, and returns bits; false if the steps do not decode or pass the
// end of bits (a damaged list).
func stepBits(bits []byte, off int64, steps []byte) ([]byte, bool) {
	end := int64(len(bits)) * 8
	if off < 0 || off >= end {
		return bits, false
	}
	setBit(bits, off)
	for i := 0; i < len(steps); {
		if c := steps[i]; c < 0x80 { // most steps
			off += int64(c)
			i++
		} else {
			d, k := binary.Uvarint(steps[i:])
			if k <= 0 || d >= uint64(end) {
				return bits, false
			}
			off += int64(d)
			i += k
		}
		if off >= end {
			return bits, false
		}
		setBit(bits, off)
	}
	return bits, true
}

// orBits sets in bits the bits of src from bit off on; false if src has
// a bit past the end of bits (a damaged list: bits past its last id).
func orBits(bits []byte, off int64, src []byte) bool {
	at, sh := off>>3, uint(off&7)
	if sh == 0 {
		for j, b := range src {
			bits[at+int64(j)] |= b
		}
		return true
	}
	for j, b := range src {
		bits[at+int64(j)] |= b << sh
		if hi := b >> (8 - sh); hi != 0 {
			if at+int64(j)+1 >= int64(len(bits)) {
				return false
			}
			bits[at+int64(j)+1] |= hi
		}
	}
	return true
}

// eachBit calls fn with the index of every set bit, in order.
func eachBit(bits []byte, fn func(i int64)) {
	for j, b := range bits {
		for x := uint(b); x != 0; x &= x - 1 {
			fn(int64(j)*8 + int64(mbits.TrailingZeros(x)))
		}
	}
}

// uvarintLen is the length of x as a uvarint.
func uvarintLen(x uint64) int { return (mbits.Len64(x|1) + 6) / 7 }

// readerHeap orders segment readers by their current word, least first.
type readerHeap []*segReader

func (h *readerHeap) push(r *segReader) {
	*h = append(*h, r)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if bytes.Compare(a[i].it.word, a[p].it.word) >= 0 {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *readerHeap) pop() *segReader {
	a := *h
	r := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && bytes.Compare(a[c+1].it.word, a[c].it.word) < 0 {
			c++
		}
		if bytes.Compare(a[c].it.word, a[i].it.word) >= 0 {
			break
		}
		a[i], a[c] = a[c], a[i]
		i = c
	}
	*h = a
	return r
}

// dropSegments deletes merged segments ids (merged into seg, or 0) and
// forgets the dead documents they held.
func dropSegments(tx *sql.Tx, ids []int64, seg int64) error {
	for _, id := range ids {
		if _, err := tx.Exec(`DELETE FROM blocks WHERE seg=?`, id); err != nil {
			return err
		}
		if _, err := tx.Exec(`DELETE FROM segs WHERE id=?`, id); err != nil {
			return err
		}
	}
	// A document is in one segment. A dead one that no other segment's
	// range covers was in those just merged, which dropped it: forget it.
	_, err := tx.Exec(`DELETE FROM dead WHERE NOT EXISTS
		(SELECT 1 FROM segs WHERE id != ? AND lo <= dead.id AND hi >= dead.id)`, seg)
	return err
}
