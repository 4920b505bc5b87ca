package sessions

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/sessiontest"
)

// sameIndex fails unless a and b hold the same index: entries, header,
// diagnostics, tree, labels, name and metadata.
func sameIndex(t *testing.T, a, b *Session) {
	t.Helper()
	if !reflect.DeepEqual(a.Header, b.Header) || a.Size != b.Size || !a.ModTime.Equal(b.ModTime) || a.FirstMessage != b.FirstMessage {
		t.Fatalf("header or sizes differ:\n%+v %d %v\n%+v %d %v", a.Header, a.Size, a.ModTime, b.Header, b.Size, b.ModTime)
	}
	if !reflect.DeepEqual(a.Entries, b.Entries) {
		t.Fatal("entries differ")
	}
	if !reflect.DeepEqual(a.Diags, b.Diags) {
		t.Fatalf("diagnostics differ:\n%v\n%v", a.Diags, b.Diags)
	}
	if !reflect.DeepEqual(a.parent, b.parent) || !reflect.DeepEqual(a.children, b.children) || !reflect.DeepEqual(a.roots, b.roots) ||
		!reflect.DeepEqual(a.labels, b.labels) || a.name != b.name {
		t.Fatal("trees differ")
	}
	if !reflect.DeepEqual(a.tail, b.tail) || !reflect.DeepEqual(a.head, b.head) || a.headOff != b.headOff || a.lines != b.lines {
		t.Fatal("check bytes differ")
	}
	ma, mb := a.Meta(), b.Meta()
	if !reflect.DeepEqual(ma, mb) {
		t.Fatalf("meta differs:\n%+v\n%+v", ma, mb)
	}
}

func TestIndexRoundTrip(t *testing.T) {
	dir := t.TempDir()
	files := []string{filepath.Join("testdata", "branches.jsonl")}
	for i, n := range []int{1, 40, 3000} {
		f := filepath.Join(dir, "gen"+string(rune('a'+i))+".jsonl")
		if _, err := sessiontest.WriteFile(f, int64(i+1), n, sessiontest.Options{}); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// Hand-made oddities: duplicates, orphans, a label, a name, a bad line.
	odd := filepath.Join(dir, "odd.jsonl")
	os.WriteFile(odd, []byte(sessiontest.Lines(
		`{"type":"session","version":3,"id":"odd","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`,
		sessiontest.User("a", "", 1, "hello"),
		sessiontest.Asst("b", "a", 2, "hi"),
		sessiontest.User("b", "a", 3, "dup"),
		sessiontest.User("c", "zz", 4, "orphan"),
		`not json`,
		sessiontest.Entry("label", "d", "b", 5, `"targetId":"a","label":"mark"`),
		sessiontest.Entry("session_info", "e", "d", 6, `"name":"Odd one"`),
	)), 0o644)
	files = append(files, odd)
	for _, f := range files {
		roundTrip(t, f)
	}
}

// roundTrip loads f, reads its index back from MarshalIndex's blob, checks
// the two are the same, and returns the session loaded.
func roundTrip(t *testing.T, f string) *Session {
	t.Helper()
	s, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	r, err := UnmarshalIndex(s.MarshalIndex(), f, "")
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	sameIndex(t, s, r)
	return s
}

func TestIndexRefusesDamage(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "branches.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	blob := s.MarshalIndex()
	for i := range blob {
		b := append([]byte(nil), blob...)
		b[i] ^= 0x40
		if _, err := UnmarshalIndex(b, s.File, ""); err == nil {
			t.Fatalf("byte %d flipped: accepted", i)
		}
	}
	for n := range len(blob) {
		if _, err := UnmarshalIndex(blob[:n], s.File, ""); err == nil {
			t.Fatalf("cut at %d: accepted", n)
		}
	}
	b := append([]byte(nil), blob...)
	b[len(indexMagic)] = indexVersion + 1
	if _, err := UnmarshalIndex(b, s.File, ""); err == nil {
		t.Fatal("another version accepted")
	}
}

// TestRestoreAppended: a restored session whose file grew reads only the
// appended bytes, and ends as a fresh load would.
func TestRestoreAppended(t *testing.T) {
	root := t.TempDir()
	f := filepath.Join(root, "p", "s.jsonl")
	os.MkdirAll(filepath.Dir(f), 0o755)
	if _, err := sessiontest.WriteFile(f, 7, 500, sessiontest.Options{}); err != nil {
		t.Fatal(err)
	}
	lib, err := OpenLibrary(root)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := lib.SnapshotFile(f, true)
	if snap.Index == nil {
		t.Fatal("not persistable")
	}
	add := sessiontest.String(8, 20, sessiontest.Options{NoHeader: true})
	sessiontest.Append(t, f, add)

	lib2 := NewLibrary(root)
	before := BytesRead()
	if _, reused, err := lib2.Restore(f, snap.Index); err != nil || !reused {
		t.Fatal(err)
	}
	if got := BytesRead() - before; got != int64(len(add)) {
		t.Fatalf("read %d bytes, want the %d appended", got, len(add))
	}
	fresh, _ := Load(f)
	lib2.ViewFile(f, func(s *Session) error { sameIndex(t, fresh, s); return nil })

	// A rewritten file (same size, other bytes) is read again.
	data, _ := os.ReadFile(f)
	snap2, _ := lib2.SnapshotFile(f, true)
	copy(data[len(data)-40:], []byte("0123456789012345678901234567890123456789"))
	os.WriteFile(f, data, 0o644)
	lib3 := NewLibrary(root)
	before = BytesRead()
	if _, reused, _ := lib3.Restore(f, snap2.Index); reused {
		t.Fatal("a rewritten file's index was reused")
	}
	if got := BytesRead() - before; got < int64(len(data)) {
		t.Fatalf("a rewritten file read %d bytes, not in full", got)
	}
}

func FuzzUnmarshalIndex(f *testing.F) {
	for _, n := range []int{1, 5, 30} {
		s, err := Parse(strings.NewReader(sessiontest.String(int64(n), n, sessiontest.Options{})), "x.jsonl")
		if err != nil {
			f.Fatal(err)
		}
		s.data = nil
		f.Add(s.MarshalIndex())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := UnmarshalIndex(data, "x.jsonl", "")
		if err != nil {
			return
		}
		// Whatever passes the checksum round-trips.
		again, err := UnmarshalIndex(s.MarshalIndex(), "x.jsonl", "")
		if err != nil || !reflect.DeepEqual(again.Entries, s.Entries) {
			t.Fatal("a valid index does not round-trip")
		}
	})
}

// TestIndexVersion1 reads an index kept by version 1 (written by piweb
// before a compaction's firstKeptEntryId and a branch summary's fromId
// shared Target): it is the index of its file as read today.
func TestIndexVersion1(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "index-v1", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(f, data, 0o644)
	mt := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC) // the file's time when the index was kept
	os.Chtimes(f, mt, mt)
	s, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := os.ReadFile(filepath.Join("testdata", "index-v1", "index.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if blob[len(indexMagic)] != 1 {
		t.Fatalf("the fixture is of version %d", blob[len(indexMagic)])
	}
	r, err := UnmarshalIndex(blob, f, "")
	if err != nil {
		t.Fatal(err)
	}
	sameIndex(t, s, r)
	for id, want := range map[string]string{"a3": "a1", "a4": "a2", "a6": "a5", "a7": "a2"} {
		i, _ := r.Lookup(id)
		if e := &r.Entries[i]; e.Target != want {
			t.Errorf("%s: Target %q, want %q", id, e.Target, want)
		}
	}
	if i, _ := r.Lookup("a4"); r.Entries[i].FirstKept() != "a2" {
		t.Error("the compaction lost its first kept entry")
	}
	if i, _ := r.Lookup("a6"); r.Entries[i].FromID() != "a5" {
		t.Error("the branch summary lost its fromId")
	}
	for v, ok := range map[byte]bool{0: false, 1: true, indexVersion: true, indexVersion + 1: false} {
		b := append([]byte(nil), blob[:len(blob)-4]...)
		b[len(indexMagic)] = v
		b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b)) // a sound checksum: only the version differs
		if _, err := UnmarshalIndex(b, f, ""); (err == nil) != ok {
			t.Errorf("an index marked version %d: %v", v, err)
		}
	}
	if _, err := UnmarshalIndex(blob[:len(blob)-1], f, ""); err != ErrBadIndex {
		t.Errorf("an index of a later version: %v, want ErrBadIndex", err)
	}
}

// TestIndexPoolShared: every id, parent id and target goes to the pool
// once, however it is found again (the previous entry, the tree's
// parent, an entry further back, a duplicated id); the index still reads
// back to the same session.
func TestIndexPoolShared(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen.jsonl")
	if _, err := sessiontest.WriteFile(gen, 11, 2000, sessiontest.Options{}); err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(dir, "odd.jsonl")
	os.WriteFile(odd, []byte(sessiontest.Lines(
		`{"type":"session","version":3,"id":"odd","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`,
		sessiontest.User("aaaa", "", 1, "hello"),
		sessiontest.Asst("bbbb", "aaaa", 2, "hi"),
		sessiontest.User("cccc", "aaaa", 3, "a branch"),
		sessiontest.User("bbbb", "cccc", 4, "a duplicated id"),
		sessiontest.User("dddd", "bbbb", 5, "child of the duplicate"),
		sessiontest.User("eeee", "zzzz", 6, "orphan"),
		sessiontest.User("ffff", "ffff", 7, "its own parent"),
		sessiontest.User("gggg", "hhhh", 8, "parent later"),
		sessiontest.User("hhhh", "gggg", 9, "a cycle"),
		sessiontest.Entry("label", "iiii", "hhhh", 10, `"targetId":"cccc","label":"mark"`),
		sessiontest.Entry("label", "jjjj", "iiii", 11, `"targetId":"kkkk","label":"ahead"`),
		sessiontest.User("kkkk", "jjjj", 12, "labeled before it came"),
	)), 0o644)
	for _, f := range []string{gen, odd} {
		s := roundTrip(t, f)
		blob := s.MarshalIndex()
		// The pool holds no more than each distinct string once (the
		// header's and check bytes' strings counted apart).
		distinct := map[string]bool{}
		want := len(s.Header.ID) + len(s.Header.Timestamp) + len(s.Header.Cwd) + len(s.Header.ParentSession) +
			len(s.FirstMessage) + len(s.tail) + len(s.head) + len(s.v1prev)
		for _, d := range s.Diags {
			want += len(d.Kind) + len(d.Detail)
		}
		for i := range s.Entries {
			en := &s.Entries[i]
			for _, v := range []string{en.ID, en.ParentID, en.Type, en.Role, en.Target, en.Text} {
				if !distinct[v] {
					distinct[v] = true
					want += len(v)
				}
			}
		}
		pool, n := binary.Uvarint(blob[len(indexMagic)+1:])
		if n <= 0 || int(pool) > want {
			t.Errorf("%s: a pool of %d bytes, want at most %d", f, pool, want)
		}
	}
}

func BenchmarkMarshalIndex(b *testing.B) {
	f := filepath.Join(b.TempDir(), "s.jsonl")
	if _, err := sessiontest.WriteFile(f, 3, 20000, sessiontest.Options{}); err != nil {
		b.Fatal(err)
	}
	s, err := Load(f)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.MarshalIndex()
	}
}
