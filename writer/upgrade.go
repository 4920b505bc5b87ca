package writer

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

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// Upgrade migrates the version 1 or 2 file at path, which must lie inside
// root, to version 3 as pi would, keeping the original as FILE.v<N>.bak.
func Upgrade(root, path string) (backup string, err error) {
	// Entries keep the ids piweb shows (for v1, Entries[i].ID), so links stay valid.
	// As in pi's migration, blank and unparseable lines go, v1 entries are chained
	// in file order, firstKeptEntryIndex becomes firstKeptEntryId and role
	// hookMessage becomes custom; the other bytes of each line are kept. The backup
	// is created exclusively; the new content is written to a temporary file in
	// the same directory, synced, and renamed over the original. Every name is
	// resolved inside root (see OpenIn).
	rel, err := sessions.RelIn(root, path)
	if err != nil {
		return "", err
	}
	s, err := sessions.LoadIn(root, path)
	if err != nil {
		return "", err
	}
	v := s.Header.Version
	if v >= 3 {
		return "", &sessions.Error{Kind: sessions.ErrNotUpgradable, Version: v, Detail: fmt.Sprintf("%s is already version %d", path, v)}
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
		return "", sessions.Outside(path, err)
	}
	if !os.SameFile(orig, now) || now.Size() != orig.Size() || !now.ModTime().Equal(orig.ModTime()) {
		return "", &sessions.Error{Kind: sessions.ErrChanged, Detail: fmt.Sprintf("upgrading %s: the file changed while it was being upgraded; nothing was replaced", path)}
	}
	if err := r.Rename(tmp, rel); err != nil {
		return "", sessions.Outside(path, err)
	}
	syncDirIn(r, filepath.Dir(rel))
	ok = true
	return bak, nil
}

// copyExclusive copies src, a regular file inside root, to a new file dst
// of r (r is root; dst is relative to it, failing if it exists), syncs it,
// and returns src's file info from the descriptor it copied.
func copyExclusive(r *os.Root, root, src, dst string) (os.FileInfo, error) {
	in, st, err := sessions.OpenIn(root, src, os.O_RDONLY)
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
		return nil, sessions.Outside(name, err)
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
	s, err := sessions.LoadIn(root, path)
	if err != nil {
		return nil, err
	}
	if s.Header.Version != v {
		return nil, &sessions.Error{Kind: sessions.ErrChanged, Detail: fmt.Sprintf("the file changed while it was being upgraded (now version %d)", s.Header.Version)}
	}
	idByLine := make(map[int]string, len(s.Entries))
	for i := range s.Entries {
		idByLine[s.Entries[i].Line] = s.Entries[i].ID
	}

	// Pass 1: the values pi keeps, which v1 firstKeptEntryIndex counts in.
	var kept []keptValue
	f, _, err := sessions.OpenIn(root, path, os.O_RDONLY)
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
			k.session = js.Str(typ) == sessions.TypeSession
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
		val := js.ToValidUTF8(parsedValue(line))
		switch {
		case !kv.object:
		case kv.session:
			val = js.SetMember(val, "version", json.RawMessage("3"))
		default:
			if v < 2 {
				id, ok := idByLine[no]
				if !ok {
					return fmt.Errorf("line %d was not indexed (longer than %d bytes?)", no, sessions.MaxLine)
				}
				val = js.SetMember(val, "id", js.Quote(id))
				val = js.SetMember(val, "parentId", prev)
				prev = js.Quote(id)
				val = migrateFirstKept(val, kept, k, idByLine)
			}
			val = sessions.RenameHookMessage(val)
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
		return nil, &sessions.Error{Kind: sessions.ErrChanged, Detail: "the file changed while it was being upgraded"}
	}
	return out.Bytes(), nil
}

// migrateFirstKept turns a v1 compaction's firstKeptEntryIndex (an index
// into the kept values, header included) into firstKeptEntryId, exactly as
// pi's migrateV1ToV2: entries before or at the compaction already carry
// their new id; later ones still have the id they were written with, if any.
func migrateFirstKept(val []byte, kept []keptValue, k int, idByLine map[int]string) []byte {
	if typ, _ := js.Lookup(val, "type"); js.Str(typ) != sessions.TypeCompaction {
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
