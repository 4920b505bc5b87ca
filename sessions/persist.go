package sessions

// The serialised form of a session's index, so that a restart need not
// read every file again (the catalog keeps it in the index store), and
// the library's side of restoring one.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/piweb/piweb/internal/js"
)

// indexMagic starts every serialised index; indexVersion is raised
// whenever the format or the meaning of a field changes (an index of a
// version this reader does not know is refused, and the file read again).
const (
	indexMagic = "PWIX"
	// 2: one Target holds a compaction's firstKeptEntryId and a branch
	// summary's fromId too. Version 1 indexes still read: they held those
	// two in fields 3 and 4, which read into Target (the types never share).
	indexVersion = 2
)

// ErrBadIndex is returned by UnmarshalIndex for data that is not a valid
// index of this version: damaged, truncated, foreign or older.
var ErrBadIndex = errors.New("not a valid session index")

// readBytes counts the bytes of session files read to index them (full
// reads and appended bytes), for tests and benchmarks: see BytesRead.
var readBytes atomic.Int64

// BytesRead returns how many bytes of session files this process has read
// to index them so far (the line counting pass of a full read included).
func BytesRead() int64 { return readBytes.Load() }

// Persistable reports whether MarshalIndex keeps s: a current-format file
// whose last line is complete. Others are simply read again.
func (s *Session) Persistable() bool {
	return s.data == nil && s.Header.ID != "" && s.Header.Version >= 3 && !s.hasTail && !s.noHeader
}

// MarshalIndex serialises what indexing s learned: the header, every
// entry's index record, the diagnostics and what Update needs to check the
// file and read only what was appended. The tree is derived again on
// UnmarshalIndex. The form is versioned and checksummed.
func (s *Session) MarshalIndex() []byte {
	e := indexEncoder{refs: map[string]uint64{}}
	e.fields = make([]byte, 0, 64+len(s.Entries)*24)
	ids := 256
	for i := range s.Entries {
		ids += len(s.Entries[i].ID)
	}
	e.pool = make([]byte, 0, ids)
	e.str(s.Header.ID)
	e.int(int64(s.Header.Version))
	e.str(s.Header.Timestamp)
	e.str(s.Header.Cwd)
	e.str(s.Header.ParentSession)
	e.int(int64(s.Header.Line))
	e.int(int64(s.Header.Len))
	e.int(s.Size)
	e.int(s.ModTime.UnixNano())
	e.str(s.FirstMessage)
	e.str(string(s.tail))
	e.str(string(s.head))
	e.int(s.headOff)
	e.int(int64(s.lines))
	var flags uint64
	if s.hasTail {
		flags |= 1
	}
	if s.noHeader {
		flags |= 2
	}
	e.uint(flags)
	e.str(s.v1prev)
	e.uint(uint64(len(s.v1lines)))
	for _, v := range s.v1lines {
		e.int(int64(v.line))
		e.int(int64(v.pos))
	}
	e.uint(uint64(len(s.Diags)))
	for _, d := range s.Diags {
		e.int(int64(d.Line))
		e.str(d.Kind)
		e.str(d.Detail)
	}
	e.uint(uint64(len(s.Entries)))
	// Ids are mostly unique: each goes to the pool without a look-up, and
	// its offset is kept by position, where a parent id or a target (an
	// id the tree already resolved to an earlier entry) finds it.
	idOff := make([]uint32, len(s.Entries))
	var prevEnd int64
	prevLine := 0
	for i := range s.Entries {
		en := &s.Entries[i]
		idOff[i] = e.fresh(en.ID)
		e.idRef(en.ParentID, s.earlier(i, en.ParentID, idOff))
		e.interned(en.Type)
		e.int(en.Time)
		e.int(en.Off - prevEnd)
		e.int(int64(en.Len))
		e.int(int64(en.Line - prevLine))
		prevEnd, prevLine = en.Off+int64(en.Len)+1, en.Line
		var has uint64
		for k, v := range []bool{en.Role != "", en.Target != "", en.Text != "", false, false, en.Tokens != 0, en.Cost != 0} {
			if v {
				has |= 1 << k
			}
		}
		e.uint(has)
		e.uint(uint64(en.Flags))
		if has&1 != 0 {
			e.interned(en.Role)
		}
		if has&2 != 0 {
			e.idRef(en.Target, s.earlier(i, en.Target, idOff))
		}
		if has&4 != 0 {
			e.str(en.Text)
		}
		if en.Tokens != 0 {
			e.int(en.Tokens)
		}
		if en.Cost != 0 {
			e.uint(math.Float64bits(en.Cost))
		}
	}
	out := make([]byte, 0, len(indexMagic)+1+binary.MaxVarintLen64+len(e.pool)+len(e.fields)+4)
	out = append(out, indexMagic...)
	out = append(out, indexVersion)
	out = binary.AppendUvarint(out, uint64(len(e.pool)))
	out = append(out, e.pool...)
	out = append(out, e.fields...)
	return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

// earlier returns the pool offset of id when it is the id of an entry
// before i, as the tree resolved it (the parent of i, or what byID
// holds), else noOff: idOff holds the offsets of the ids before i.
func (s *Session) earlier(i int, id string, idOff []uint32) uint32 {
	if id == "" {
		return noOff
	}
	if i > 0 && s.Entries[i-1].ID == id { // the usual parent
		return idOff[i-1]
	}
	p := -1
	if i < len(s.parent) {
		p = s.parent[i]
	}
	if p < 0 || p >= i || s.Entries[p].ID != id {
		var ok bool
		if p, ok = s.byID[id]; !ok || p < 0 || p >= i || s.Entries[p].ID != id {
			return noOff
		}
	}
	return idOff[p]
}

// indexEncoder writes fields, with every string kept once in a pool
// (ids by position, see MarshalIndex; other short strings by refs).
type indexEncoder struct {
	pool   []byte
	fields []byte
	refs   map[string]uint64 // short strings already in the pool, by offset
	recent [8]recentStr      // the last strings of refs written
	next   uint8
}

// recentStr is a string of the pool by its address and length.
type recentStr struct {
	p   *byte
	n   int
	off uint64
}

// noOff marks an id with no offset of its own: "" or one past 4 GB of pool.
const noOff = math.MaxUint32

// fresh writes s, an id, to the pool without looking it up, and returns
// its offset (noOff for "", or an offset past what 32 bits hold).
func (e *indexEncoder) fresh(s string) uint32 {
	e.uint(uint64(len(s)))
	if s == "" {
		return noOff
	}
	off := uint64(len(e.pool))
	e.pool = append(e.pool, s...)
	e.uint(off)
	if off >= noOff {
		return noOff
	}
	return uint32(off)
}

// idRef writes s, which is at pool offset off unless off is noOff.
func (e *indexEncoder) idRef(s string, off uint32) {
	if off == noOff {
		e.str(s)
		return
	}
	e.uint(uint64(len(s)))
	e.uint(uint64(off))
}

func (e *indexEncoder) uint(v uint64) { e.fields = binary.AppendUvarint(e.fields, v) }
func (e *indexEncoder) int(v int64)   { e.fields = binary.AppendVarint(e.fields, v) }

func (e *indexEncoder) str(s string) {
	e.uint(uint64(len(s)))
	if s == "" {
		return
	}
	e.uint(e.ref(s))
}

// ref returns the pool offset of s, adding it to the pool unless there.
func (e *indexEncoder) ref(s string) uint64 {
	off, ok := e.refs[s]
	if !ok {
		off = uint64(len(e.pool))
		e.pool = append(e.pool, s...)
		if len(s) <= 256 {
			e.refs[s] = off
		}
	}
	return off
}

// interned is str of a string the session interned (an entry's type or
// role): the same few strings, found again by their address before the
// map is asked (the address is kept, so it is not another string's).
func (e *indexEncoder) interned(s string) {
	e.uint(uint64(len(s)))
	if s == "" {
		return
	}
	p := unsafe.StringData(s)
	for k := range e.recent {
		if r := &e.recent[k]; r.p == p && r.n == len(s) {
			e.uint(r.off)
			return
		}
	}
	off := e.ref(s)
	e.recent[e.next%uint8(len(e.recent))] = recentStr{p, len(s), off}
	e.next++
	e.uint(off)
}

// indexDecoder reads what indexEncoder wrote; the first error sticks.
type indexDecoder struct {
	pool string
	b    []byte
	err  error
}

func (d *indexDecoder) fail() {
	if d.err == nil {
		d.err = ErrBadIndex
	}
	d.b = nil
}

func (d *indexDecoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *indexDecoder) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// small reads an int that must lie in [lo, hi].
func (d *indexDecoder) small(lo, hi int64) int {
	v := d.int()
	if v < lo || v > hi {
		d.fail()
		return 0
	}
	return int(v)
}

// count reads a number of items, each taking at least one byte.
func (d *indexDecoder) count() int {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *indexDecoder) str() string {
	n := d.uint()
	if n == 0 {
		return ""
	}
	off := d.uint()
	if d.err != nil || off > uint64(len(d.pool)) || n > uint64(len(d.pool))-off {
		d.fail()
		return ""
	}
	return d.pool[off : off+n] // shares the pool: no allocation per string
}

// UnmarshalIndex rebuilds a session from MarshalIndex's output, as the
// file at path inside root (root "" for none). It does not look at the
// file: Update (or Library.Restore) checks the session against it. Data
// that is damaged or of another version gives ErrBadIndex.
func UnmarshalIndex(data []byte, path, root string) (*Session, error) {
	const fixed = len(indexMagic) + 1 + 4
	if len(data) < fixed || string(data[:len(indexMagic)]) != indexMagic || data[len(indexMagic)] < 1 || data[len(indexMagic)] > indexVersion {
		return nil, ErrBadIndex
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, ErrBadIndex
	}
	d := &indexDecoder{b: body[len(indexMagic)+1:]}
	pl := d.uint()
	if d.err != nil || pl > uint64(len(d.b)) {
		return nil, ErrBadIndex
	}
	d.pool, d.b = string(d.b[:pl]), d.b[pl:]
	const maxInt = math.MaxInt32
	s := &Session{File: path, root: root}
	s.Header.ID = d.str()
	s.Header.Version = d.small(1, maxInt)
	s.Header.Timestamp = d.str()
	s.Header.Cwd = d.str()
	s.Header.ParentSession = d.str()
	s.Header.Line = d.small(0, maxInt)
	s.Header.Len = d.small(0, maxInt)
	s.Size = int64(d.small(0, math.MaxInt64))
	s.ModTime = time.Unix(0, d.int())
	s.FirstMessage = d.str()
	s.tail = []byte(d.str())
	s.head = []byte(d.str())
	s.headOff = int64(d.small(0, math.MaxInt64))
	s.lines = d.small(0, maxInt)
	flags := d.uint()
	s.hasTail, s.noHeader = flags&1 != 0, flags&2 != 0
	s.v1prev = d.str()
	if n := d.count(); n > 0 {
		s.v1lines = make([]v1line, n)
		for i := range s.v1lines {
			s.v1lines[i] = v1line{d.small(0, maxInt), d.small(-1, maxInt)}
		}
	}
	if n := d.count(); n > 0 {
		s.Diags = make([]Diagnostic, n)
		for i := range s.Diags {
			s.Diags[i] = Diagnostic{Line: d.small(0, maxInt), Kind: d.str(), Detail: d.str()}
		}
	}
	n := d.count()
	s.Entries = make([]Entry, n)
	var prevEnd int64
	prevLine := 0
	for i := range s.Entries {
		en := &s.Entries[i]
		en.ID, en.ParentID, en.Type = d.str(), d.str(), d.str()
		en.Time = d.int()
		en.Off = prevEnd + d.int()
		en.Len = d.small(0, maxInt)
		en.Line = prevLine + d.small(-maxInt, maxInt)
		if en.Off < 0 {
			d.fail()
		}
		prevEnd, prevLine = en.Off+int64(en.Len)+1, en.Line
		has := d.uint()
		en.Flags = Flags(d.uint())
		for k, p := range []*string{&en.Role, &en.Target, &en.Text, &en.Target, &en.Target} { // 3 and 4: version 1's
			if has&(1<<k) != 0 {
				*p = d.str()
			}
		}
		if has&(1<<5) != 0 {
			en.Tokens = d.int()
		}
		if has&(1<<6) != 0 {
			en.Cost = math.Float64frombits(d.uint())
		}
		if d.err != nil {
			return nil, d.err
		}
	}
	if d.err != nil || len(d.b) != 0 || s.Header.ID == "" {
		return nil, ErrBadIndex
	}
	s.inter = interner{}
	s.rebuild()
	s.fresh()
	return s, nil
}

// Restore adds the session of file from blob (MarshalIndex's output, kept
// from an earlier run) after checking it against the file as Update does:
// when the file is what was indexed (same size, modification time, first
// and last bytes) nothing is read; when it only grew, only the appended
// bytes are; otherwise (a bad blob, a rewritten or replaced file) the file
// is read again in full. reused reports that the blob was used (the file
// holds the entries it describes, maybe more). A file the library already
// holds is left to Refresh. It publishes the change and returns it.
func (l *Library) Restore(file string, blob []byte) (c Change, reused bool, err error) {
	l.mu.RLock()
	_, known := l.files[file]
	l.mu.RUnlock()
	if known {
		c, err = l.Refresh(file)
		return c, false, err
	}
	s, err := UnmarshalIndex(blob, file, l.Root)
	if err != nil || s.File != file {
		c, err = l.Refresh(file)
		return c, false, err
	}
	d, err := s.update(true)
	if err != nil {
		c, err = l.Refresh(file) // gone, unreadable or no longer a session: as Refresh says
		return c, false, err
	}
	l.mu.Lock()
	if cur, ok := l.files[file]; ok { // indexed meanwhile
		c := Change{Key: l.key[cur], File: file, Gen: cur.gen}
		l.mu.Unlock()
		return c, false, nil
	}
	all := l.putLocked(file, s, nil)
	l.mu.Unlock()
	l.publish(all...)
	return own(all, file), !d.Reloaded, nil
}

// Snapshot is what the catalog persists of one session file.
type Snapshot struct {
	Key     string
	Gen     uint64
	Epoch   uint64
	Entries int   // entries indexed
	Size    int64 // bytes indexed
	ModTime time.Time
	Project string
	Index   []byte // MarshalIndex's output; nil when the session is not Persistable
}

// SnapshotFile returns the session of file as the catalog persists it; ok
// is false when the library does not hold file. With index false, Index
// is left nil (the cheap fields only).
func (l *Library) SnapshotFile(file string, index bool) (snap Snapshot, ok bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s, ok := l.files[file]
	if !ok {
		return Snapshot{}, false
	}
	snap = Snapshot{Key: l.key[s], Gen: s.gen, Epoch: s.epoch, Entries: len(s.Entries), Size: s.Size, ModTime: s.ModTime,
		Project: s.Meta().Project}
	if index && s.Persistable() {
		snap.Index = s.MarshalIndex()
	}
	return snap, true
}

// noMap makes ReadLines read files rather than map them (for tests and benchmarks).
var noMap bool

// mapMin is the least span of lines ReadLines maps: fewer bytes (a few
// lines pi appended) are read, which costs less than a mapping.
var mapMin int64 = 256 << 10

// lineBufs keeps ReadLines' line buffers between files.
var lineBufs = sync.Pool{New: func() any { return new([]byte) }}

// ReadLines reads the lines of file's entries from position from onward,
// in file order, calling fn with each entry's position, index record and
// line (fn must not keep line). It reads the file outside the library's
// lock; epoch is the session's epoch when the entries were taken (if the
// session's Epoch differs afterwards, the file was read again meanwhile
// and what fn saw may be stale). An entry whose line changed is skipped;
// a file cut short while it is read ends the read with ErrChanged. Where
// it can, it maps the file into memory rather than copy its lines.
func (l *Library) ReadLines(file string, from int, fn func(pos int, e *Entry, line []byte) error) (epoch uint64, err error) {
	return l.readLines(file, from, false, fn)
}

// ReadLinesAsWritten is ReadLines giving the lines as written, not
// decoded as pi decodes them: a line may hold invalid UTF-8, which pi
// reads as js.ToValidUTF8 does. For readers that meet every byte of what
// they keep anyway, and so can do without a pass to check each line.
func (l *Library) ReadLinesAsWritten(file string, from int, fn func(pos int, e *Entry, line []byte) error) (epoch uint64, err error) {
	return l.readLines(file, from, true, fn)
}

func (l *Library) readLines(file string, from int, asWritten bool, fn func(pos int, e *Entry, line []byte) error) (epoch uint64, err error) {
	l.mu.RLock()
	s, ok := l.files[file]
	if !ok {
		l.mu.RUnlock()
		return 0, fs.ErrNotExist
	}
	from = max(0, from)
	snap := &Session{File: s.File, root: s.root, data: s.data, Header: s.Header}
	if from < len(s.Entries) {
		snap.Entries = slices.Clone(s.Entries[from:])
	}
	epoch = s.epoch
	l.mu.RUnlock()
	if len(snap.Entries) == 0 {
		return epoch, nil
	}
	r, err := snap.Open()
	if err != nil {
		return epoch, err
	}
	defer r.Close()
	first, last := &snap.Entries[0], &snap.Entries[len(snap.Entries)-1]
	if end := last.Off + int64(last.Len); end-first.Off >= mapMin && !noMap {
		if m, unmap, ok := r.mapped(first.Off, end); ok {
			defer unmap()
			return epoch, readMapped(m, from, asWritten, fn)
		}
	}
	r = r.Sequential()
	defer r.release()
	// fn does not keep line: one buffer serves every line, kept for the
	// next file unless a long line made it large.
	bp := lineBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	defer func() {
		if cap(buf) <= 4<<20 {
			*bp = buf[:0]
			lineBufs.Put(bp)
		}
	}()
	return epoch, eachEntryLine(r, from, asWritten, &buf, fn)
}

// eachEntryLine calls fn with the line of each of r's entries (the first at
// position from), reading into *buf, and keeping there the longest line so
// far, when buf is not nil. The library's index validated each line's
// JSON when it read it: a line that still holds the entry's id is the
// entry's (as the ledger reads lines), else Raw's full check applies; a
// line that changed is skipped.
func eachEntryLine(r *Reader, from int, asWritten bool, buf *[]byte, fn func(pos int, e *Entry, line []byte) error) error {
	var into []byte
	for k := range r.s.Entries {
		if buf != nil {
			into = *buf
		}
		line, err := r.lineInto(into, k, true, asWritten)
		if err != nil {
			if errors.Is(err, ErrChanged) {
				continue
			}
			return err
		}
		if err := fn(from+k, &r.s.Entries[k], line); err != nil {
			return err
		}
		if buf != nil && cap(line) > cap(*buf) {
			*buf = line[:0]
		}
	}
	return nil
}

// within reports whether addr is the address of a byte of b.
func within(b []byte, addr uintptr) bool {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return addr >= start && addr-start < uintptr(len(b))
}

// readMapped is eachEntryLine over a file mapped into memory, no line copied.
// A line the file lost since it was mapped (truncated by another program)
// faults; the fault is taken as the file having changed: ErrChanged.
func readMapped(r *Reader, from int, asWritten bool, fn func(pos int, e *Entry, line []byte) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			f, fault := p.(interface{ Addr() uintptr })
			if !fault || !within(r.m, f.Addr()) {
				panic(p)
			}
			err = ErrChanged
		}
	}()
	return eachEntryLine(r, from, asWritten, nil, fn)
}

// ViewFile calls fn with the session of file under the library's read
// lock, as View does by key.
func (l *Library) ViewFile(file string, fn func(s *Session) error) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s, ok := l.files[file]
	if !ok {
		return &Error{Kind: ErrNoSession, Key: file}
	}
	return fn(s)
}

// Stat returns the size and modification time of file, for deciding
// whether a record is worth restoring.
func Stat(file string) (size int64, mod time.Time, err error) {
	fi, err := os.Stat(file)
	if err != nil {
		return 0, time.Time{}, err
	}
	if !fi.Mode().IsRegular() {
		return 0, time.Time{}, fmt.Errorf("%s: not a regular file", file)
	}
	return fi.Size(), fi.ModTime(), nil
}

// EntryOf returns a copy of entry pos of file when the library holds it
// there with that id; checkID says whether its line holds that id (not
// in a version 1 file, whose ids piweb made).
func (l *Library) EntryOf(file string, pos int, id string) (e Entry, checkID, ok bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s, found := l.files[file]
	if !found || pos < 0 || pos >= len(s.Entries) || s.Entries[pos].ID != id {
		return Entry{}, false, false
	}
	return s.Entries[pos], s.Header.Version >= 2, true
}

// OpenRead opens file for reading, inside the library's root.
func (l *Library) OpenRead(file string) (*os.File, error) {
	if l.Root == "" {
		return os.Open(file)
	}
	f, _, err := openIn(l.Root, file, os.O_RDONLY)
	return f, err
}

// ReadLine reads entry e's line from f, checking (with checkID) the line
// is still e's; ErrChanged when it is not.
func ReadLine(f io.ReaderAt, e *Entry, checkID bool) ([]byte, error) {
	line := make([]byte, e.Len)
	if _, err := f.ReadAt(line, e.Off); err != nil {
		if err == io.EOF {
			return nil, ErrChanged
		}
		return nil, err
	}
	if e.ID != "" && checkID {
		var got rawEntry
		if _, err := js.EachMember(line, 0, got.set); err != nil || js.Str(got.id) != e.ID {
			return nil, ErrChanged
		}
	}
	return js.ToValidUTF8(line), nil
}
