package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/piweb/piweb/internal/js"
)

// MaxLine is the longest line the index reads; longer lines are reported
// and skipped, so reading any file takes bounded memory (a file of one
// line of gigabytes, damaged or made by hand, included).
const MaxLine = 128 << 20

// Header is the first line of a session file.
type Header struct {
	ID            string
	Version       int // 1 when the header has none
	Timestamp     string
	Cwd           string
	ParentSession string
	Line          int
	Len           int
}

// Diagnostic reports one problem found while reading a file.
type Diagnostic struct {
	Line   int    `json:"line"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

func (d Diagnostic) String() string { return fmt.Sprintf("line %d: %s: %s", d.Line, d.Kind, d.Detail) }

// Diagnostic kinds.
const (
	DiagMalformed    = "malformed"     // not valid JSON; skipped, as pi does
	DiagUnterminated = "unterminated"  // last line has no newline
	DiagNotObject    = "not-object"    // valid JSON but not an object
	DiagNoID         = "no-id"         // entry without a string id
	DiagDuplicateID  = "duplicate-id"  // id seen before; links resolve to the last one
	DiagOrphan       = "orphan"        // parentId names no entry; shown as a root
	DiagSelfParent   = "self-parent"   // parentId is the entry's own id; shown as a root
	DiagCycle        = "cycle"         // parent links form a loop; broken at its first entry
	DiagExtraHeader  = "extra-header"  // a second session header; ignored, as pi does
	DiagTooLong      = "too-long"      // line longer than MaxLine; skipped
	DiagOldVersion   = "old-version"   // v1/v2 file, migrated in memory only
	DiagBadTimestamp = "bad-timestamp" // timestamp JavaScript's Date cannot parse
)

// Session is the in-memory index of one session file: header, entries in
// file order with their byte offsets, and the tree and labels derived from them.
type Session struct {
	File    string // the file path
	Header  Header
	Entries []Entry
	Diags   []Diagnostic
	// Size is the offset just past the last complete line read.
	Size    int64
	ModTime time.Time
	// FirstMessage is the text of the first user message with text, as pi's session list shows it.
	FirstMessage string

	tail        []byte // last bytes before Size, to notice rewrites
	head        []byte // first bytes of the header line, to notice a replaced file
	headOff     int64
	lines       int // physical lines consumed up to Size
	inter       interner
	strs        idArena
	byID        idIndex
	parent      []int // parent position, -1 for roots
	children    kidTable
	roots       []int
	labels      map[string]int // target id -> position of the label entry in force; shared by snapshots until one adds a label (labelsOwned)
	labelsOwned bool
	name        string
	hasTail     bool // the last entry came from an unterminated line
	meta        *metaCache
	noHeader    bool // the first parsed value was not a header: not a session, even if one follows
	v1prev      string
	v1lines     []v1line     // v1 files: the lines JSON.parse accepts, in order (pi's firstKeptEntryIndex counts them)
	root        string       // the sessions root the file must stay inside ("" when read with Load); see OpenIn
	gen         uint64       // bumped on every change (see Gen)
	epoch       uint64       // the gen at which Entries were last read from the start (see Epoch)
	extended    *atomic.Bool // set when a snapshot made from this one took over its slices (see fork)
}

// gens numbers session states across the process, so that a generation
// never repeats, even for a file removed and indexed again.
var gens atomic.Uint64

// NewGen returns a generation no snapshot has had (see Session.Gen).
func NewGen() uint64 { return gens.Add(1) }

// Gen returns the session's generation: a number that changes on every
// change to the index (entries appended, the file read again) and never
// repeats, in this process, for any session. Caches key on it.
func (s *Session) Gen() uint64 { return s.gen }

// Epoch returns the generation at which the entries were last read from
// the start of the file: while it stays the same, entries were only
// appended, and every entry keeps its position and line.
func (s *Session) Epoch() uint64 { return s.epoch }

// fresh marks the session as newly read from the start.
func (s *Session) fresh() {
	s.gen = NewGen()
	s.epoch = s.gen
	s.cacheMeta()
}

// Load reads and indexes the session file at path.
func Load(path string) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return LoadOpen(f, st, path, "")
}

// LoadOpen indexes the open file f (st is its info) as the session at path,
// kept inside root (see OpenIn), for a reader that keeps f open (the
// writer's pinned reading).
func LoadOpen(f *os.File, st os.FileInfo, path, root string) (*Session, error) {
	s := &Session{File: path, ModTime: st.ModTime(), root: root}
	// Only the bytes st describes, so ModTime and Size agree (see update).
	if size := st.Size(); size <= wholeMax {
		// One read into a recycled buffer; lines are counted in memory.
		buf := getWhole(size)
		defer putWhole(buf)
		n, err := io.ReadFull(f, buf[:size])
		BytesRead.Add(int64(n))
		if err != nil && err != io.ErrUnexpectedEOF { // a file cut short since st is read as it is now
			return nil, err
		}
		ends := lineEnds(buf[:n])
		defer putEnds(ends)
		lines := len(*ends) + 1
		s.Entries = make([]Entry, 0, lines)
		s.strs.next = min(lines*10, 64<<10) // an id of 8 bytes, and the parents that are not the entry before
		s.parseLines(buf[:n], *ends)
	} else {
		if err := s.reserve(f, size); err != nil {
			return nil, err
		}
		if err := s.readSized(io.LimitReader(f, size), 0, size); err != nil {
			return nil, err
		}
	}
	if s.Header.ID == "" {
		return s, s.notSession(path)
	}
	s.rebuild()
	s.fresh()
	return s, nil
}

// notSession is the error of a file that held no session header: why,
// when a line longer than MaxLine was skipped before one could be found.
func (s *Session) notSession(path string) error {
	for _, d := range s.Diags {
		if d.Kind == DiagTooLong {
			return fmt.Errorf("%s: %w (its line %d is longer than %d MB: a damaged or hand-made file)", path, ErrNotSession, d.Line, MaxLine>>20)
		}
	}
	return fmt.Errorf("%s: %w", path, ErrNotSession)
}

// reserve sizes Entries for the file's line count, counted in a first fast
// pass: growing a slice of 100k entries by doubling costs more than parsing.
func (s *Session) reserve(f io.ReaderAt, size int64) error {
	buf := getBuf(size)
	defer putBuf(buf)
	lines := 1
	for off := int64(0); off < size; {
		n, err := f.ReadAt(buf, off)
		BytesRead.Add(int64(n))
		lines += bytes.Count(buf[:n], []byte{'\n'})
		off += int64(n)
		if err == io.EOF || n == 0 {
			break
		}
		if err != nil {
			return err
		}
	}
	s.Entries = make([]Entry, 0, lines)
	return nil
}

// readSized consumes r from offset off (the reader is positioned there),
// indexing every complete line and, at EOF, an unterminated final line;
// hint is how many bytes r holds, so a small append does not allocate a
// full-size buffer.
func (s *Session) readSized(r io.Reader, off int64, hint int64) error {
	if s.inter == nil {
		s.inter = interner{}
	}
	if s.extended == nil {
		s.extended = new(atomic.Bool)
	}
	buf := getBuf(hint + 1)
	defer putBuf(buf)
	lr := newLineReader()
	var carry []byte // a line split across reads
	skipping := false
	for {
		n, err := r.Read(buf)
		BytesRead.Add(int64(n))
		chunk := buf[:n]
		for len(chunk) > 0 {
			nl := bytes.IndexByte(chunk, '\n')
			if nl < 0 {
				if !skipping {
					if len(carry)+len(chunk) > MaxLine {
						skipping = true
						carry = nil // its memory goes: the rest of the line is skipped
					} else {
						if cap(carry)-len(carry) < len(chunk) { // doubling: a long line allocates at most twice its size
							grown := make([]byte, len(carry), min(MaxLine, max(2*cap(carry), len(carry)+len(chunk))))
							copy(grown, carry)
							carry = grown
						}
						carry = append(carry, chunk...)
					}
				}
				off += int64(len(chunk))
				break
			}
			line := chunk[:nl]
			lineStart := off
			if len(carry) > 0 || skipping {
				lineStart = off - int64(len(carry))
				if skipping {
					lineStart = -1
				} else {
					carry = append(carry, line...)
					line = carry
				}
			}
			off += int64(nl + 1)
			s.lines++
			if skipping {
				s.diag(s.lines, DiagTooLong, fmt.Sprintf("line longer than %d bytes skipped", MaxLine))
				skipping = false
			} else {
				s.addLine(lr, line, lineStart, s.lines, false)
			}
			carry = carry[:0]
			chunk = chunk[nl+1:]
			s.Size = off
			s.setTail(line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if skipping {
		s.diag(s.lines+1, DiagTooLong, "unterminated last line too long; skipped")
	} else if len(carry) > 0 {
		// pi parses an unterminated last line too (and then appends "\n"; piweb never writes it).
		start := off - int64(len(carry))
		if s.addLine(lr, carry, start, s.lines+1, true) {
			s.hasTail = true
		}
		if len(bytes.TrimSpace(carry)) > 0 {
			s.diag(s.lines+1, DiagUnterminated, "the last line has no newline (a write in progress, or a crash)")
		}
	}
	return nil
}

// endsPool recycles the line ends of files read in one piece.
var endsPool = sync.Pool{New: func() any { return new([]int32) }}

// lineEnds returns the offsets of the newlines in data (shorter than 2 GiB),
// found in one pass that also tells how many entries to make room for.
func lineEnds(data []byte) *[]int32 {
	ends := endsPool.Get().(*[]int32)
	e := (*ends)[:0]
	for off := 0; ; {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break
		}
		off += nl
		e = append(e, int32(off))
		off++
	}
	*ends = e
	return ends
}

// putEnds offers ends for later files.
func putEnds(ends *[]int32) { endsPool.Put(ends) }

// parseLines indexes data, a whole file whose newlines are at ends: every
// complete line and an unterminated final line. It is read for a file
// read in one piece (no line of it is too long: see MaxLine).
func (s *Session) parseLines(data []byte, ends []int32) {
	if s.inter == nil {
		s.inter = interner{}
	}
	if s.extended == nil {
		s.extended = new(atomic.Bool)
	}
	lr := newLineReader()
	var off int64
	var last []byte // the last complete line
	for _, nl := range ends {
		s.lines++
		last = data[off:nl]
		s.addLine(lr, last, off, s.lines, false)
		off = int64(nl) + 1
	}
	data = data[off:]
	if last != nil {
		s.Size = off
		s.setTail(last)
	}
	if len(data) > 0 {
		// pi parses an unterminated last line too (and then appends "\n"; piweb never writes it).
		if s.addLine(lr, data, off, s.lines+1, true) {
			s.hasTail = true
		}
		if len(bytes.TrimSpace(data)) > 0 {
			s.diag(s.lines+1, DiagUnterminated, "the last line has no newline (a write in progress, or a crash)")
		}
	}
}

// lineReader reads lines into raw, its nested reads made once for all of
// a read's lines.
type lineReader struct {
	raw  rawEntry
	nest []*js.Nested // what reading a line reads in the same pass, into raw
	set  func(js.Member)
}

func newLineReader() *lineReader {
	lr := &lineReader{}
	lr.nest = lr.raw.nested()
	lr.set = lr.raw.set
	return lr
}

// setTail remembers the last bytes before Size, used to notice a rewrite.
func (s *Session) setTail(line []byte) {
	const n = 64
	t := line
	if len(t) > n-1 {
		t = t[len(t)-(n-1):]
	}
	s.tail = append(append(s.tail[:0], t...), '\n')
}

func (s *Session) diag(line int, kind, detail string) {
	s.Diags = append(s.Diags, Diagnostic{Line: line, Kind: kind, Detail: detail})
}

// addLine indexes one physical line; it reports whether an entry was added.
func (s *Session) addLine(lr *lineReader, line []byte, off int64, lineNo int, unterminated bool) bool {
	i := js.SkipWS(line, 0)
	if i == len(line) || len(bytes.TrimSpace(line)) == 0 {
		return false // blank, skipped as pi does
	}
	r := &lr.raw
	*r = rawEntry{}
	end, err := js.EachMemberNested(line, i, lr.set, lr.nest)
	notObject := false
	if err == js.ErrNotObject {
		notObject = true
		end, err = js.ScanValue(line, i)
	}
	if err == nil && js.SkipWS(line, end) != len(line) {
		err = js.ErrAt(js.SkipWS(line, end), "unexpected data after value")
	}
	if err != nil {
		if !unterminated {
			s.diag(lineNo, DiagMalformed, err.Error())
		}
		return false
	}
	if s.Header.Version < 2 && s.Header.ID != "" {
		// pi's v1 firstKeptEntryIndex counts every line JSON.parse accepts.
		pos := -1
		if !isSessionType(r.typ) && (!notObject || js.Truthy(line[i:end])) {
			pos = len(s.Entries)
		}
		s.v1lines = append(s.v1lines, v1line{lineNo, pos})
	}
	if notObject {
		v := line[i:end]
		if !js.Truthy(v) {
			s.diag(lineNo, DiagNotObject, fmt.Sprintf("%s skipped (pi skips falsy values)", v))
			return false
		}
		if s.Header.ID == "" {
			s.noHeader = true // pi takes the first truthy value as the header
			return false
		}
		s.diag(lineNo, DiagNotObject, "a JSON value that is not an object; kept as an entry without id, as pi does")
	}
	if s.Header.ID == "" {
		// The first parsed line must be the header; anything else makes this not a session.
		if s.noHeader || !isSessionType(r.typ) {
			s.noHeader = true
			return false
		}
		id, ok := js.String(r.id)
		if !ok {
			s.noHeader = true
			return false
		}
		s.Header = Header{ID: id, Version: 1, Timestamp: js.Str(r.timestamp), Cwd: js.Str(r.cwd),
			ParentSession: js.Str(r.parentSession), Line: lineNo, Len: len(line)}
		s.head = append([]byte(nil), line[:min(len(line), 128)]...)
		s.headOff = off
		var v float64
		if json.Unmarshal(r.version, &v) == nil && v >= 1 {
			s.Header.Version = int(v)
		}
		if s.Header.Version < 2 {
			s.v1lines = []v1line{{lineNo, -1}} // the header is index 0
		}
		if s.Header.Version < 3 {
			s.diag(lineNo, DiagOldVersion, fmt.Sprintf("version %d file: read as version 3 in memory; the file is not changed", s.Header.Version))
		}
		return false
	}
	e := Entry{Off: off, Len: len(line), Line: lineNo}
	if notObject {
		e.Flags |= FlagNotObject | FlagNoID | FlagNoParentKey
	} else {
		if isSessionType(r.typ) {
			s.diag(lineNo, DiagExtraHeader, "a second session header; ignored, as pi does")
			return false
		}
		e.fill(r, s.inter, &s.strs)
		if s.Header.Version < 2 {
			s.migrateV1(&e, r)
		}
		if s.Header.Version < 3 && e.Role == "hookMessage" {
			e.Role = "custom"
		}
		if e.Flags.Has(FlagNoID) {
			s.diag(lineNo, DiagNoID, "entry has no string id; it cannot be a parent")
		}
		if e.Time == NoTime && e.Type != "" {
			s.diag(lineNo, DiagBadTimestamp, "timestamp is missing or not a date")
		}
		if s.FirstMessage == "" && e.Type == TypeMessage && e.Role == "user" {
			s.FirstMessage = DecodeMessage(r.message).Content.Text(" ") // as pi's session list
		}
	}
	if unterminated {
		e.Flags |= FlagUnterminated
	}
	s.Entries = append(s.Entries, e)
	return true
}

// migrateV1 gives a v1 entry a stable id from its line number and chains it
// to the previous entry, as pi's migration does with random ids.
func (s *Session) migrateV1(e *Entry, r *rawEntry) {
	e.ID = fmt.Sprintf("%08x", e.Line)
	e.Flags &^= FlagNoID | FlagNoParentKey | FlagParentSelf // its own id and parentId are replaced
	e.ParentID = s.v1prev
	s.v1prev = e.ID
	if e.Type == TypeCompaction { // v1 names the first kept entry by its index (its Target, see FirstKept)
		e.Target = ""
		var k float64
		if json.Unmarshal(r.firstKeptIndex, &k) == nil && k == float64(int(k)) {
			e.Target = v1Index + strconv.Itoa(int(k)) // resolved by resolveV1Kept
		}
	}
}

// rebuild derives the id map, parent links, children, roots, labels and
// name from Entries, reporting duplicates, orphans, self-parents and cycles.
func (s *Session) rebuild() {
	s.Diags = dropDerived(s.Diags)
	n := len(s.Entries)
	s.byID = newIDIndex(n)
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.ID == "" {
			continue
		}
		if prev, dup := s.byID.get(e.ID); dup {
			s.diag(e.Line, DiagDuplicateID, fmt.Sprintf("id %q also on line %d; links to it go to this line, as in pi", e.ID, s.Entries[prev].Line))
		}
		s.byID.setBase(e.ID, i)
	}
	if s.Header.Version < 2 {
		s.resolveV1Kept()
	}
	s.parent = make([]int, n)
	s.children = newKidTable(n)
	s.roots = nil
	s.labels, s.labelsOwned = map[string]int{}, true
	s.name = ""
	for i := range s.Entries {
		s.parent[i] = s.resolveParent(i, true)
		s.applyState(i)
	}
	s.breakCycles()
	// Every child list is a window of one array (one allocation, not one
	// per parent), capped at its length so that a child added later moves
	// that list out rather than writing over the next one.
	count := make([]int32, n)
	linked := 0
	for i := range s.Entries {
		if p := s.parent[i]; p >= 0 {
			count[p]++
			linked++
		}
	}
	all := make([]int, linked)
	off := 0
	for p, c := range count {
		if c > 0 {
			s.children.set(p, all[off:off:off+int(c)])
			off += int(c)
		}
	}
	for i := range s.Entries {
		if p := s.parent[i]; p >= 0 {
			s.children.set(p, append(s.children.at(p), i))
		} else {
			s.roots = append(s.roots, i)
		}
	}
	for p := range s.Entries {
		if len(s.children.at(p)) > 1 {
			s.sortChildren(p)
		}
	}
}

// dropDerived removes diagnostics that rebuild recomputes.
func dropDerived(ds []Diagnostic) []Diagnostic {
	out := ds[:0]
	for _, d := range ds {
		switch d.Kind {
		case DiagDuplicateID, DiagOrphan, DiagSelfParent, DiagCycle:
			continue
		}
		out = append(out, d)
	}
	return out
}

// resolveParent finds the parent position of entry i, or -1 for a root.
func (s *Session) resolveParent(i int, report bool) int {
	e := &s.Entries[i]
	if e.ParentID == "" {
		return -1
	}
	if e.Flags.Has(FlagParentSelf) {
		if report {
			s.diag(e.Line, DiagSelfParent, fmt.Sprintf("entry %q is its own parent; shown as a root", e.ID))
		}
		return -1
	}
	p, ok := s.byID.get(e.ParentID)
	if !ok {
		if report {
			s.diag(e.Line, DiagOrphan, fmt.Sprintf("parent %q does not exist; shown as a root", e.ParentID))
		}
		return -1
	}
	return p
}

// applyState replays label and session_info entries in file order.
func (s *Session) applyState(i int) {
	e := &s.Entries[i]
	switch e.Type {
	case TypeLabel:
		if !s.labelsOwned { // shared with the snapshot this one came from
			own := make(map[string]int, len(s.labels)+1)
			for k, v := range s.labels {
				own[k] = v
			}
			s.labels, s.labelsOwned = own, true
		}
		if e.Flags.Has(FlagLabelSet) {
			s.labels[e.Target] = i
		} else {
			delete(s.labels, e.Target)
		}
	case TypeSessionInfo:
		s.name = js.Trim(e.Text)
	}
}

// breakCycles finds parent loops without recursion and turns the first
// entry (in file order) of each loop into a root, so nothing is hidden.
func (s *Session) breakCycles() {
	const (
		unseen = 0
		onPath = 1
		done   = 2
	)
	state := make([]uint8, len(s.Entries))
	var path []int
	for start := range s.Entries {
		if state[start] != unseen {
			continue
		}
		path = path[:0]
		v := start
		for v >= 0 && state[v] == unseen {
			state[v] = onPath
			path = append(path, v)
			v = s.parent[v]
		}
		if v >= 0 && state[v] == onPath {
			// v..end of path is a loop.
			k := len(path) - 1
			for path[k] != v {
				k--
			}
			loop := path[k:]
			first := loop[0]
			for _, x := range loop {
				if x < first {
					first = x
				}
			}
			ids := make([]string, 0, len(loop)+1)
			for _, x := range loop {
				ids = append(ids, s.Entries[x].ID)
			}
			ids = append(ids, s.Entries[loop[0]].ID)
			e := &s.Entries[first]
			s.diag(e.Line, DiagCycle, fmt.Sprintf("parent links loop (%s); entry %q shown as a root", strings.Join(ids, " → "), e.ID))
			s.parent[first] = -1
		}
		for _, x := range path {
			state[x] = done
		}
	}
}

// cmpSiblings orders siblings as pi does: by timestamp, oldest first. A
// timestamp Date cannot parse compares equal to anything, as NaN does in
// pi's comparator; the stable sort then keeps file order.
func (s *Session) cmpSiblings(a, b int) int {
	ta, tb := s.Entries[a].Time, s.Entries[b].Time
	if ta == NoTime || tb == NoTime || ta == tb {
		return 0
	}
	if ta < tb {
		return -1
	}
	return 1
}

func (s *Session) sortChildren(p int) {
	slices.SortStableFunc(s.children.at(p), s.cmpSiblings)
}

// resolveV1Kept maps v1 compactions' firstKeptEntryIndex (an index into the
// file's parsed lines, headers included) to the id that line got.
func (s *Session) resolveV1Kept() {
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Type != TypeCompaction || !strings.HasPrefix(e.Target, v1Index) {
			continue
		}
		k, err := strconv.Atoi(e.Target[len(v1Index):])
		e.Target = ""
		// pi's migration assigns ids in file order, so an index naming a later
		// line finds no id yet: only earlier lines (or the compaction itself) resolve.
		if err == nil && k >= 0 && k < len(s.v1lines) {
			if t := s.v1lines[k].pos; t >= 0 && t <= i {
				e.Target = s.Entries[t].ID // the compaction's FirstKept
			}
		}
	}
}

// v1line is a line of a v1 file that JSON.parse accepts: its line number and
// the position of the entry it made, or -1 (a header, a falsy value).
type v1line struct{ line, pos int }

// v1Index prefixes a not-yet-resolved firstKeptEntryIndex.
const v1Index = "\x00v1:"

// isSessionType reports whether a raw type value is "session", without allocating.
func isSessionType(raw []byte) bool {
	if string(raw) == `"session"` {
		return true
	}
	return js.HasBackslash(raw) && js.Str(raw) == TypeSession
}

// wholeMax is the size up to which a file is read in one piece.
const wholeMax = 32 << 20

// wholePool recycles the buffers of files read in one piece.
var wholePool sync.Pool

// getWhole returns a buffer of at least n bytes, recycled when one is.
func getWhole(n int64) []byte {
	if p, ok := wholePool.Get().(*[]byte); ok && int64(cap(*p)) >= n {
		return (*p)[:cap(*p)]
	}
	return make([]byte, max(n, 64<<10))
}

// putWhole offers b for later reads.
func putWhole(b []byte) { wholePool.Put(&b) }

// bufPool recycles the 1 MiB read buffers of large files across loads.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// getBuf returns a read buffer for about n bytes: small files get a small one.
func getBuf(n int64) []byte {
	if n < 1<<20 {
		return make([]byte, max(n, 4096))
	}
	return *bufPool.Get().(*[]byte)
}

// putBuf returns a full-size buffer to the pool.
func putBuf(b []byte) {
	if cap(b) == 1<<20 {
		b = b[:cap(b)]
		bufPool.Put(&b)
	}
}
