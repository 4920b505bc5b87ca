package sessions

// Writers: the only code in piweb that changes session files. Every change to
// an existing file is one appended line (Label, Rewind); Upgrade is the one
// function that replaces a file, and only when the user asks for it.
//
// pi appends with appendFileSync and no lock, so another pi process may append
// at any moment. A writer therefore builds its line from the file as it is
// right before it appends (from the caller's index only when the file is
// verifiably what it indexed, else by reading it again), and writes only if
// the file did not move in between (see appendEntry).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"github.com/piweb/piweb/internal/js"
)

// ErrStale is returned when the session moved on since the page the user acted on was rendered.
var ErrStale = errors.New("the session changed since it was shown; reload it and try again")

// ErrReadOnly is returned for writes to version 1 and 2 files, which pi rewrites when it opens them.
var ErrReadOnly = errors.New("the session file uses an old format (version 1 or 2) that pi rewrites on open; upgrade it before changing it")

// ErrBusy is returned when the file kept changing while a writer tried to append to it.
var ErrBusy = errors.New("the session file kept changing while writing; try again")

// Guard describes the session state a user's page saw; the zero value checks nothing.
type Guard struct {
	Leaf string // id of the leaf the page showed
	Size int64  // Session.Size the page was rendered from
}

// RewindType is the customType of the record Rewind appends when there is no summary.
const RewindType = "piweb.rewind"

// appendAttempts bounds how often a writer re-reads a file that keeps growing.
const appendAttempts = 50

// Label appends a label entry setting (or, for a blank label, clearing) the label of entry targetID.
func Label(s *Session, targetID, label string) (string, error) {
	// As pi's tree view does: trim, and write a clear with no label key at all
	// (appendLabelChange(id, undefined)). The entry hangs off the current leaf
	// and adds nothing to the context, so pi resumes with the same context. With
	// an id-less last line there is no leaf to hang it off (pi would omit
	// parentId and resume from nothing), so Label refuses; a Rewind repairs that.
	label = js.Trim(label)
	return appendEntry(s, []string{targetID}, func(cur *Session) ([]byte, string, error) {
		if _, ok := cur.Lookup(targetID); !ok || targetID == "" {
			return nil, "", fmt.Errorf("%w: %q", ErrNoEntry, targetID)
		}
		leaf := cur.Entries[cur.Leaf()] // the target exists, so there are entries
		if leaf.ID == "" {
			return nil, "", fmt.Errorf("%s: the last entry (line %d) has no id, so a label would change where pi resumes; rewind to an entry first",
				cur.File, leaf.Line)
		}
		id := newEntryID(cur.byID)
		o := js.Object{{K: "type", V: json.RawMessage(`"label"`)}, {K: "id", V: js.Quote(id)}, {K: "parentId", V: js.Quote(leaf.ID)},
			{K: "timestamp", V: js.Quote(js.NowISO())}, {K: "targetId", V: js.Quote(targetID)}}
		if label != "" {
			o = append(o, js.KV{K: "label", V: js.Quote(label)})
		}
		return o.JSON(), id, nil
	})
}

// Rewind appends a child of entry targetID ("" for before the first entry) so pi resumes there.
func Rewind(s *Session, targetID, summary string, guard Guard) (string, error) {
	// A non-blank summary is written as pi's own branch_summary (branchWithSummary),
	// which puts it into the context. Otherwise a custom RewindType entry records
	// the abandoned leaf and adds nothing. A non-zero guard refuses with ErrStale
	// when the leaf is no longer guard.Leaf or the file shrank below guard.Size:
	// the abandoned leaf (fromId) and the user's summary would describe another state.
	return appendEntry(s, []string{targetID}, func(cur *Session) ([]byte, string, error) {
		parent := json.RawMessage("null")
		if targetID != "" {
			if _, ok := cur.Lookup(targetID); !ok {
				return nil, "", fmt.Errorf("%w: %q", ErrNoEntry, targetID)
			}
			parent = js.Quote(targetID)
		}
		if guard != (Guard{}) {
			leaf := ""
			if l := cur.Leaf(); l >= 0 {
				leaf = cur.Entries[l].ID
			}
			if leaf != guard.Leaf || cur.Size < guard.Size {
				return nil, "", fmt.Errorf("%w (leaf is %q, the page saw %q)", ErrStale, leaf, guard.Leaf)
			}
		}
		from, err := cur.piLeafID()
		if err != nil {
			return nil, "", err
		}
		id := newEntryID(cur.byID)
		ts := js.Quote(js.NowISO())
		var o js.Object
		if js.Trim(summary) != "" {
			o = js.Object{{K: "type", V: json.RawMessage(`"branch_summary"`)}, {K: "id", V: js.Quote(id)}, {K: "parentId", V: parent},
				{K: "timestamp", V: ts}, {K: "fromId", V: from}, {K: "summary", V: js.Quote(summary)}}
		} else {
			data := js.Object{{K: "fromId", V: from}}
			o = js.Object{{K: "type", V: json.RawMessage(`"custom"`)}, {K: "customType", V: js.Quote(RewindType)}, {K: "data", V: data.JSON()},
				{K: "id", V: js.Quote(id)}, {K: "parentId", V: parent}, {K: "timestamp", V: ts}}
		}
		return o.JSON(), id, nil
	})
}

// piLeafID returns what pi's branchWithSummary records as fromId: its
// leafId after opening the file (the last entry's id as written), or "root"
// when that is null or undefined (no entries, or a last line without id).
func (s *Session) piLeafID() (json.RawMessage, error) {
	root := json.RawMessage(`"root"`)
	l := s.Leaf()
	if l < 0 {
		return root, nil
	}
	if id := s.Entries[l].ID; id != "" {
		return js.Quote(id), nil
	}
	if s.Entries[l].Flags.Has(FlagNotObject) {
		return root, nil
	}
	raw, err := s.Raw(l)
	if err != nil {
		return nil, err
	}
	if v, ok := js.Lookup(raw, "id"); ok && !js.IsNull(v) {
		return v, nil // an id pi keeps but piweb cannot link to (not a string)
	}
	return root, nil
}

// newEntryID returns an id as pi's generateId makes one: the first 8 hex
// digits of a random UUID not in taken, or a whole UUID after 100 collisions.
func newEntryID[V any](taken map[string]V) string {
	for range 100 {
		id := uuid.NewString()[:8]
		if _, dup := taken[id]; !dup {
			return id
		}
	}
	return uuid.NewString()
}

// errNotFile is returned when a writer gets a session that was not read from a file.
var errNotFile = errors.New("the session was not read from a file")

// appendEntry appends the line built by build to s's file as one whole line.
//
// It builds from the file as it is now: from s's own index when the file
// still holds exactly what s indexed (see verified; ids names the entries
// build relies on), else by reading the file again. build checks its
// preconditions and makes the line from that state, and the line is
// appended only if the file has not changed since: when another writer
// appended meanwhile, the file is read again and build runs again, so
// parentId and the checks always describe the file the line lands in.
// s itself is only read: it may be a library's session, held under its read
// lock while appendEntry runs.
func appendEntry(s *Session, ids []string, build func(cur *Session) (line []byte, id string, err error)) (string, error) {
	if s == nil || s.data != nil || s.File == "" {
		return "", errNotFile
	}
	var snap *snapshot
	defer func() {
		if snap != nil {
			snap.close()
		}
	}()
	root := s.writeRoot()
	fast := s.verified(root, ids)
	for range appendAttempts {
		var err error
		switch {
		case fast != nil:
			snap, fast = fast, nil
		case snap != nil && snap.borrowed:
			snap.close() // never catch up into s: read the file afresh
			snap = nil
			fallthrough
		default:
			if snap, err = snap.refresh(root, s.File); err != nil {
				return "", err
			}
		}
		cur := snap.s
		if cur.Header.Version < 3 {
			return "", fmt.Errorf("%w (%s is version %d)", ErrReadOnly, s.File, cur.Header.Version)
		}
		line, id, err := build(cur)
		if err != nil {
			return "", err
		}
		done, err := snap.appendLine(line)
		if err != nil {
			return "", err
		}
		if done {
			return id, nil
		}
	}
	return "", fmt.Errorf("%s: %w", s.File, ErrBusy)
}

// snapshot is a session read from exactly the first size bytes of an open file.
type snapshot struct {
	s        *Session
	f        *os.File
	size     int64
	root     string // the folder the file must lie in (see openIn)
	borrowed bool   // s is the caller's index, only to be read
}

// verified returns a snapshot that reads s's own index, when the file at
// s.File is still exactly what s indexed: the same size and modification
// time, the same header and last indexed bytes, and the lines of the last
// entry and of the entries named by ids (when s has them) where s has them,
// with those ids. Otherwise, or when s holds no index, it returns nil and
// the writer reads the file again. pi only appends; a rewrite of the same
// size moves the modification time, which Update also relies on.
func (s *Session) verified(root string, ids []string) *snapshot {
	if len(s.Entries) == 0 || s.hasTail || s.Header.ID == "" || len(s.head) == 0 || s.byID == nil {
		return nil
	}
	f, st, err := openIn(root, s.File, os.O_RDONLY)
	if err != nil {
		return nil
	}
	ok := st.Size() == s.Size && st.ModTime().Equal(s.ModTime) && s.sameBytes(f, st.Size())
	check := []int{len(s.Entries) - 1}
	for _, id := range ids {
		if i, found := s.byID[id]; found {
			check = append(check, i)
		}
	}
	r := &Reader{s: s, f: f}
	for k := 0; ok && k < len(check); k++ {
		_, err := r.Raw(check[k]) // the line still parses, with the id s has for it
		ok = err == nil
	}
	if !ok {
		f.Close()
		return nil
	}
	return &snapshot{s: s, f: f, size: s.Size, root: root, borrowed: true}
}

// readSnapshot opens path, a regular file inside root, and indexes the bytes it holds now.
func readSnapshot(root, path string) (*snapshot, error) {
	f, st, err := openIn(root, path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	s, err := loadOpen(f, st, path, root) // exactly st.Size() bytes
	if err != nil {
		f.Close()
		return nil, err
	}
	return &snapshot{s: s, f: f, size: st.Size(), root: root}, nil
}

// refresh brings the snapshot up to date with the file at path: lines
// appended since are read incrementally; anything else re-reads the file.
// A nil snapshot reads the file afresh. The old snapshot must not be used after.
func (p *snapshot) refresh(root, path string) (*snapshot, error) {
	if p == nil {
		return readSnapshot(root, path)
	}
	if p.catchUp(path) {
		return p, nil
	}
	p.close()
	return readSnapshot(root, path)
}

// catchUp reads the lines appended to the snapshot's file since it was
// taken. It reports false when the file changed in any other way (replaced,
// truncated, or its last line was unterminated), which needs a full read.
func (p *snapshot) catchUp(path string) bool {
	st, err := p.f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	if err != nil || !os.SameFile(st, now) || st.Size() <= p.size || p.s.hasTail || p.s.Size != p.size {
		return false
	}
	size := st.Size()
	if err := p.s.read(io.NewSectionReader(p.f, p.size, size-p.size), p.size); err != nil {
		return false
	}
	p.s.rebuild()
	p.size = size
	return true
}

func (p *snapshot) close() { p.f.Close() }

// appendLine appends line (without its newline) to the snapshot's file as one
// write(2) with O_APPEND, unless the file changed since the snapshot was
// taken, in which case it reports false and writes nothing. A last line
// without its newline is repaired by prefixing "\n" in the same write; the
// file is never truncated or rewritten, and never created.
func (p *snapshot) appendLine(line []byte) (bool, error) {
	path := p.s.File
	w, _, err := openIn(p.root, path, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return false, err
	}
	defer w.Close()
	st, err := p.f.Stat()
	if err != nil {
		return false, err
	}
	wst, err := w.Stat()
	if err != nil {
		return false, err
	}
	if !os.SameFile(st, wst) || st.Size() != p.size {
		return false, nil // replaced or appended to since the snapshot: read again
	}
	buf := make([]byte, 0, len(line)+2)
	if p.size > 0 {
		var last [1]byte
		if _, err := p.f.ReadAt(last[:], p.size-1); err != nil {
			return false, fmt.Errorf("%s: reading the last byte: %w", path, err)
		}
		if last[0] != '\n' {
			// Another writer may be in the middle of its write: give it time to
			// finish, and repair only a last line that stays unterminated.
			if !settled(p.f, p.size) {
				return false, nil
			}
			buf = append(buf, '\n')
		}
	}
	buf = append(append(buf, line...), '\n')
	n, err := w.Write(buf)
	if err != nil {
		if n > 0 {
			return false, fmt.Errorf("%s: only %d of %d bytes appended: %w", path, n, len(buf), err)
		}
		return false, fmt.Errorf("%s: appending: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return false, fmt.Errorf("%s: appending: %w", path, err)
	}
	return true, nil
}

// settled reports whether f keeps its size for a short grace period.
func settled(f *os.File, size int64) bool {
	for range 10 {
		time.Sleep(10 * time.Millisecond)
		st, err := f.Stat()
		if err != nil || st.Size() != size {
			return false
		}
	}
	return true
}

// Upgrade migrates a version 1 or 2 file to version 3 as pi would, keeping the original as FILE.v<N>.bak.
func Upgrade(path string) (backup string, err error) {
	return upgradeIn(filepath.Dir(path), path)
}

// upgradeIn is Upgrade for a file that must lie inside root.
func upgradeIn(root, path string) (backup string, err error) {
	// Entries keep the ids piweb shows (for v1, Entries[i].ID), so links stay valid.
	// As in pi's migration, blank and unparseable lines go, v1 entries are chained
	// in file order, firstKeptEntryIndex becomes firstKeptEntryId and role
	// hookMessage becomes custom; the other bytes of each line are kept. The backup
	// is created exclusively; the new content is written to a temporary file in
	// the same directory, synced, and renamed over the original. Every name is
	// resolved inside root (see openIn).
	rel, err := relIn(root, path)
	if err != nil {
		return "", err
	}
	s, err := loadIn(root, path)
	if err != nil {
		return "", err
	}
	v := s.Header.Version
	if v >= 3 {
		return "", fmt.Errorf("%s is already version %d; nothing to upgrade", path, v)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	bak := fmt.Sprintf("%s.v%d.bak", path, v)
	relBak := fmt.Sprintf("%s.v%d.bak", rel, v)
	orig, err := copyExclusive(r, root, path, relBak)
	if err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			r.Remove(relBak) // ours: created above
		}
	}()
	// Migrate from the backup: it holds exactly the bytes that were copied.
	data, err := migrateFile(root, bak, v)
	if err != nil {
		return "", fmt.Errorf("upgrading %s: %w", path, err)
	}
	tmp, err := writeTempIn(r, filepath.Dir(rel), ".piweb-upgrade-", data, orig.Mode().Perm())
	if err != nil {
		return "", err
	}
	defer r.Remove(tmp) // a no-op once renamed
	now, err := r.Lstat(rel)
	if err != nil {
		return "", outside(path, err)
	}
	if !os.SameFile(orig, now) || now.Size() != orig.Size() || !now.ModTime().Equal(orig.ModTime()) {
		return "", fmt.Errorf("upgrading %s: the file changed while it was being upgraded; nothing was replaced", path)
	}
	if err := r.Rename(tmp, rel); err != nil {
		return "", outside(path, err)
	}
	syncDirIn(r, filepath.Dir(rel))
	ok = true
	return bak, nil
}

// copyExclusive copies src, a regular file inside root, to a new file dst
// of r (r is root; dst is relative to it, failing if it exists), syncs it,
// and returns src's file info from the descriptor it copied.
func copyExclusive(r *os.Root, root, src, dst string) (os.FileInfo, error) {
	in, st, err := openIn(root, src, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	name := filepath.Join(root, dst)
	out, err := r.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("backup %s already exists; move it away first: %w", name, err)
		}
		return nil, outside(name, err)
	}
	_, err = io.Copy(out, io.NewSectionReader(in, 0, st.Size()))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Remove(dst)
		return nil, fmt.Errorf("writing backup %s: %w", name, err)
	}
	return st, nil
}

// keptValue is one line pi keeps when it loads a file (it parsed and is truthy).
type keptValue struct {
	line    int
	session bool            // type === "session"
	object  bool            // a JSON object (others are kept as they are)
	id      json.RawMessage // the id member as written, nil when absent
}

// eachLine calls fn for every physical line of r (newline removed), numbered from 1.
func eachLine(r io.Reader, fn func(no int, line []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for no := 1; ; no++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if ferr := fn(no, bytes.TrimSuffix(line, []byte("\n"))); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// parsedValue returns the trimmed JSON value of a line as pi's loader keeps
// it, or nil for a line pi skips (blank, not JSON, or a falsy value).
func parsedValue(line []byte) []byte {
	v := js.TrimSpace(line)
	if len(v) == 0 {
		return nil
	}
	end, err := js.ScanValue(v, 0)
	if err != nil || end != len(v) || !js.Truthy(v) {
		return nil
	}
	return v
}

// migrateFile returns the version 3 content of the version v file at path (inside root),
// as pi's migrateToCurrentVersion followed by its rewrite would produce it.
func migrateFile(root, path string, v int) ([]byte, error) {
	s, err := loadIn(root, path)
	if err != nil {
		return nil, err
	}
	if s.Header.Version != v {
		return nil, fmt.Errorf("the file changed while it was being upgraded (now version %d)", s.Header.Version)
	}
	idByLine := make(map[int]string, len(s.Entries))
	for i := range s.Entries {
		idByLine[s.Entries[i].Line] = s.Entries[i].ID
	}

	// Pass 1: the values pi keeps, which v1 firstKeptEntryIndex counts in.
	var kept []keptValue
	f, _, err := openIn(root, path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	err = eachLine(f, func(no int, line []byte) error {
		val := parsedValue(line)
		if val == nil {
			return nil
		}
		k := keptValue{line: no, object: val[0] == '{'}
		if k.object {
			typ, _ := js.Lookup(val, "type")
			k.session = js.Str(typ) == TypeSession
			k.id, _ = js.Lookup(val, "id")
		} else if v < 2 && len(kept) > 0 {
			return fmt.Errorf("line %d is not a JSON object; pi's version 1 migration fails on it", no)
		}
		kept = append(kept, k)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(kept) == 0 || kept[0].line != s.Header.Line {
		return nil, fmt.Errorf("the header is not where it was read")
	}

	// Pass 2: migrate each kept line.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	k := 0
	prev := json.RawMessage("null")
	err = eachLine(f, func(no int, line []byte) error {
		if k >= len(kept) || kept[k].line != no {
			return nil
		}
		kv := kept[k]
		val := bytes.ToValidUTF8(parsedValue(line), []byte("\uFFFD"))
		switch {
		case !kv.object:
		case kv.session:
			val = js.SetMember(val, "version", json.RawMessage("3"))
		default:
			if v < 2 {
				id, ok := idByLine[no]
				if !ok {
					return fmt.Errorf("line %d was not indexed (longer than %d bytes?)", no, MaxLine)
				}
				val = js.SetMember(val, "id", js.Quote(id))
				val = js.SetMember(val, "parentId", prev)
				prev = js.Quote(id)
				val = migrateFirstKept(val, kept, k, idByLine)
			}
			val = renameHookMessage(val)
		}
		out.Write(val)
		out.WriteByte('\n')
		k++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if k != len(kept) {
		return nil, fmt.Errorf("the file changed while it was being upgraded")
	}
	return out.Bytes(), nil
}

// migrateFirstKept turns a v1 compaction's firstKeptEntryIndex (an index
// into the kept values, header included) into firstKeptEntryId, exactly as
// pi's migrateV1ToV2: entries before or at the compaction already carry
// their new id; later ones still have the id they were written with, if any.
func migrateFirstKept(val []byte, kept []keptValue, k int, idByLine map[int]string) []byte {
	if typ, _ := js.Lookup(val, "type"); js.Str(typ) != TypeCompaction {
		return val
	}
	raw, ok := js.Lookup(val, "firstKeptEntryIndex")
	if !ok || len(raw) == 0 || !(raw[0] == '-' || js.IsDigit(raw[0])) {
		return val // not a number: pi leaves it alone
	}
	var idx float64
	if json.Unmarshal(raw, &idx) == nil && idx >= 0 && idx == math.Trunc(idx) && idx < float64(len(kept)) {
		t := kept[int(idx)]
		if !t.session {
			var id json.RawMessage
			if int(idx) <= k {
				id = js.Quote(idByLine[t.line])
			} else {
				id = t.id
			}
			if id == nil {
				val = js.DelMember(val, "firstKeptEntryId") // assigned undefined: dropped by JSON.stringify
			} else {
				val = js.SetMember(val, "firstKeptEntryId", id)
			}
		}
	}
	return js.DelMember(val, "firstKeptEntryIndex")
}

// renameHookMessage renames a message entry's role hookMessage to custom (pi's v2 → v3 step).
func renameHookMessage(val []byte) []byte {
	if typ, _ := js.Lookup(val, "type"); js.Str(typ) != TypeMessage {
		return val
	}
	msg, ok := js.Lookup(val, "message")
	if !ok || len(msg) == 0 || msg[0] != '{' {
		return val
	}
	if role, _ := js.Lookup(msg, "role"); js.Str(role) != "hookMessage" {
		return val
	}
	return js.SetMember(val, "message", js.SetMember(msg, "role", json.RawMessage(`"custom"`)))
}

// v3Line returns entry i's line as it reads in version 3: for older files,
// the in-memory migration piweb applies (ids for v1, hookMessage renamed).
func (s *Session) v3Line(i int, raw []byte) []byte {
	line := js.TrimSpace(raw)
	v := s.Header.Version
	if v >= 3 || len(line) == 0 || line[0] != '{' {
		return line
	}
	e := &s.Entries[i]
	if v < 2 {
		line = js.SetMember(line, "id", js.Quote(e.ID))
		parent := json.RawMessage("null")
		if e.ParentID != "" {
			parent = js.Quote(e.ParentID)
		}
		line = js.SetMember(line, "parentId", parent)
		if e.Type == TypeCompaction {
			if raw, ok := js.Lookup(line, "firstKeptEntryIndex"); ok && len(raw) > 0 && (raw[0] == '-' || js.IsDigit(raw[0])) {
				if e.FirstKept != "" {
					line = js.SetMember(line, "firstKeptEntryId", js.Quote(e.FirstKept))
				}
				line = js.DelMember(line, "firstKeptEntryIndex")
			}
		}
	}
	return renameHookMessage(line)
}
