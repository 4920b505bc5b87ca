package writer

// Writers: the only code in piweb that changes session files. Every change to
// an existing file is one appended line (Label, Rewind); forks and saved
// exports are new files; Upgrade is the one function that replaces a file,
// and only when the user asks for it.
//
// pi appends with appendFileSync and no lock, so another pi process may append
// at any moment. A writer therefore builds its line from the file as it is
// right before it appends (from the library's index only when the file is
// verifiably what it indexed, else by reading it again), and writes only if
// the file did not move in between (see Append). The library runs
// piweb's own writes to one file one at a time, and refreshes its index
// (publishing the change) before the next one starts.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// Guard describes the session state a user's page saw; the zero value checks nothing.
type Guard struct {
	Leaf string // id of the leaf the page showed
	Size int64  // Session.Size the page was rendered from
}

// RewindType is the customType of the record Rewind appends when there is no summary.
const RewindType = "piweb.rewind"

// appendAttempts bounds how often a writer re-reads a file that keeps growing.
const appendAttempts = 50

// Builder makes the line to append from the session as it is now (cur)
// and returns it with the new entry's id, or refuses.
type Builder func(cur *sessions.Session) (line []byte, id string, err error)

// LabelLine builds the label entry setting (or, for a blank label, clearing) the label of targetID.
func LabelLine(targetID, label string) Builder {
	// As pi's tree view does: trim, and write a clear with no label key at all
	// (appendLabelChange(id, undefined)). The entry hangs off the current leaf
	// and adds nothing to the context, so pi resumes with the same context. With
	// an id-less last line there is no leaf to hang it off (pi would omit
	// parentId and resume from nothing), so Label refuses; a Rewind repairs that.
	label = js.Trim(label)
	return func(cur *sessions.Session) ([]byte, string, error) {
		if _, ok := cur.Lookup(targetID); !ok || targetID == "" {
			return nil, "", &sessions.Error{Kind: sessions.ErrNoEntry, Entry: targetID}
		}
		leaf := cur.Entries[cur.Leaf()] // the target exists, so there are entries
		if leaf.ID == "" {
			return nil, "", &sessions.Error{Kind: sessions.ErrNoLeafID, Entry: targetID,
				Detail: fmt.Sprintf("line %d; a label would change where pi resumes: rewind to an entry first", leaf.Line)}
		}
		id := sessions.NewEntryID(taken(cur))
		o := js.Object{{K: "type", V: json.RawMessage(`"label"`)}, {K: "id", V: js.Quote(id)}, {K: "parentId", V: js.Quote(leaf.ID)},
			{K: "timestamp", V: js.Quote(js.NowISO())}, {K: "targetId", V: js.Quote(targetID)}}
		if label != "" {
			o = append(o, js.KV{K: "label", V: js.Quote(label)})
		}
		return o.JSON(), id, nil
	}
}

// RewindLine builds the child of targetID ("" for before the first entry) that makes pi resume there.
func RewindLine(targetID, summary string, guard Guard) Builder {
	// A non-blank summary is written as pi's own branch_summary (branchWithSummary),
	// which puts it into the context. Otherwise a custom RewindType entry records
	// the abandoned leaf and adds nothing. A non-zero guard refuses with ErrStale
	// when the leaf is no longer guard.Leaf or the file shrank below guard.Size:
	// the abandoned leaf (fromId) and the user's summary would describe another state.
	return func(cur *sessions.Session) ([]byte, string, error) {
		parent := json.RawMessage("null")
		if targetID != "" {
			if _, ok := cur.Lookup(targetID); !ok {
				return nil, "", &sessions.Error{Kind: sessions.ErrNoEntry, Entry: targetID}
			}
			parent = js.Quote(targetID)
		}
		if guard != (Guard{}) {
			leaf := cur.LeafID()
			if leaf != guard.Leaf || cur.Size < guard.Size {
				return nil, "", &sessions.Error{Kind: sessions.ErrStale, Entry: targetID, Detail: fmt.Sprintf("the leaf is %q, the page saw %q", leaf, guard.Leaf)}
			}
		}
		from, err := piLeafID(cur)
		if err != nil {
			return nil, "", err
		}
		id := sessions.NewEntryID(taken(cur))
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
	}
}

// Index runs fn with a session's index held still: the caller's own, or the library's under its read lock.
type Index func(fn func(s *sessions.Session))

// piLeafID returns what pi's branchWithSummary records as fromId: its
// leafId after opening the file (the last entry's id as written), or "root"
// when that is null or undefined (no entries, or a last line without id).
func piLeafID(s *sessions.Session) (json.RawMessage, error) {
	root := json.RawMessage(`"root"`)
	l := s.Leaf()
	if l < 0 {
		return root, nil
	}
	if id := s.Entries[l].ID; id != "" {
		return js.Quote(id), nil
	}
	if s.Entries[l].Flags.Has(sessions.FlagNotObject) {
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

// taken returns whether s holds an entry with id.
func taken(s *sessions.Session) func(id string) bool {
	return func(id string) bool {
		_, ok := s.Lookup(id)
		return ok
	}
}

// errNotFile is returned when a writer gets a session that was not read from a file.
var errNotFile = &sessions.Error{Kind: sessions.ErrReadOnly, Detail: "the session was not read from a file"}

// Append appends the line built by build to file (inside root) as one whole line.
//
// It builds from the file as it is now: on the first try from the index
// (idx, when given) if the file still holds exactly what it indexed (see
// verified; ids names the entries build relies on), else by reading the file
// again. build checks its preconditions and makes the line from that
// state, and the line is appended only if the file has not changed since:
// when another writer appended meanwhile, the file is read again and build
// runs again, so parentId and the checks always describe the file the line
// lands in. The index is only read, and only while idx holds it still; the
// append itself runs outside it.
func Append(root, file string, idx Index, ids []string, build Builder) (string, error) {
	if idx == nil || file == "" {
		return "", errNotFile
	}
	var snap *pinned
	defer func() {
		if snap != nil {
			snap.Close()
		}
	}()
	for attempt := range appendAttempts {
		var (
			at        *os.File // the file as the line was built for it, and its size then
			size      int64
			line      []byte
			id        string
			err       error
			fromIndex bool
		)
		if attempt == 0 {
			idx(func(s *sessions.Session) {
				if at, size = s.Verified(root, ids); at != nil {
					fromIndex = true
					if err = checkWritable(s); err == nil {
						line, id, err = build(s)
					}
				}
			})
			if at != nil {
				defer at.Close()
			}
		}
		if !fromIndex {
			if snap, err = snap.Advance(root, file); err != nil {
				return "", err
			}
			at, size = snap.File, snap.Size
			if err = checkWritable(snap.Session); err == nil {
				line, id, err = build(snap.Session)
			}
		}
		if err != nil {
			return "", err
		}
		done, err := appendLine(root, file, at, size, line)
		if err != nil {
			return "", err
		}
		if done {
			return id, nil
		}
	}
	return "", &sessions.Error{Kind: sessions.ErrBusy, Detail: file}
}

// checkWritable refuses files in a format piweb does not append to:
// versions 1 and 2, which pi rewrites when it opens them, and versions
// newer than 3 (pi's experimental formats), which piweb cannot vouch for.
func checkWritable(s *sessions.Session) error {
	if v := s.Header.Version; v != 3 {
		return &sessions.Error{Kind: sessions.ErrReadOnly, Version: v, Detail: fmt.Sprintf("%s is version %d", s.File, v)}
	}
	return nil
}

// writeFile writes b to f in one write(2); tests replace it to see a full disk.
var writeFile = func(f *os.File, b []byte) (int, error) { return f.Write(b) }

// reserve makes sure n bytes can be appended to f at offset off: it
// allocates them on disk without changing the file's size, so the write
// that follows cannot run out of space half-way. Where the file system
// cannot allocate ahead, it checks the free space instead.
func reserve(f *os.File, off, n int64) error {
	err := fallocate(f, off, n)
	if err == nil {
		return nil
	}
	if noSpace(err) {
		return &sessions.Error{Kind: sessions.ErrNoSpace, Err: err, Detail: f.Name()}
	}
	if free, ok := freeSpace(f); ok && free < n+64<<10 {
		return &sessions.Error{Kind: sessions.ErrNoSpace, Detail: f.Name()}
	}
	return nil // allocating ahead is not supported here: the free space will do
}

// fallocate allocates n bytes at off in f, keeping its size; tests replace it.
var fallocate = allocate

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

// noSpace reports whether err is the disk or the quota running out.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// appendLine appends line (without its newline) to path as one write(2)
// with O_APPEND, unless the file is no longer at (the open file the line
// was built for) or no longer size bytes long, in which case it reports
// false and writes nothing. A last line without its newline is repaired by
// prefixing "\n" in the same write; the file is never truncated or
// rewritten, and never created. The space is reserved first, so a full
// disk fails before a byte is written (ErrNoSpace) instead of leaving a
// piece of a line for pi to glue its next line onto.
func appendLine(root, path string, at *os.File, size int64, line []byte) (bool, error) {
	w, _, err := sessions.OpenIn(root, path, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return false, err
	}
	defer w.Close()
	st, err := at.Stat()
	if err != nil {
		return false, err
	}
	wst, err := w.Stat()
	if err != nil {
		return false, err
	}
	if !os.SameFile(st, wst) || wst.Size() != size {
		return false, nil // replaced or appended to since the line was built: read again
	}
	buf := make([]byte, 0, len(line)+2)
	if size > 0 {
		var last [1]byte
		if _, err := at.ReadAt(last[:], size-1); err != nil {
			return false, fmt.Errorf("%s: reading the last byte: %w", path, err)
		}
		if last[0] != '\n' {
			// Another writer may be in the middle of its write: give it time to
			// finish, and repair only a last line that stays unterminated.
			if !settled(at, size) {
				return false, nil
			}
			buf = append(buf, '\n')
		}
	}
	buf = append(append(buf, line...), '\n')
	if err := reserve(w, size, int64(len(buf))); err != nil {
		return false, err
	}
	n, err := writeFile(w, buf)
	if err != nil {
		if noSpace(err) && n == 0 {
			return false, &sessions.Error{Kind: sessions.ErrNoSpace, Err: err, Detail: path}
		}
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
