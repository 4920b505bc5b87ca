package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/piweb/piweb/search"
)

// conn returns the store's database, for tests that look inside it.
func (s *Store) conn() *sql.DB { return s.db.Load().db }

func openT(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestOpenCreatesAndReopens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "index.db")
	s := openT(t, path)
	recs := []Record{
		{File: "/r/p/2.jsonl", Size: 20, ModTime: 2000, Stamp: []byte("st2"), Blob: []byte("blob two")},
		{File: "/r/p/1.jsonl", Size: 10, ModTime: 1000, Blob: bytes.Repeat([]byte{7}, 100000)},
	}
	if err := s.PutMany(recs); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, path)
	all, err := s.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].File != "/r/p/1.jsonl" || all[1].Size != 20 || all[1].ModTime != 2000 ||
		string(all[1].Stamp) != "st2" || all[0].Blob != nil || all[1].Blob != nil {
		t.Fatalf("All = %+v", all)
	}
	r, ok, err := s.Get("/r/p/1.jsonl")
	if err != nil || !ok || !bytes.Equal(r.Blob, recs[1].Blob) || r.Size != 10 {
		t.Fatalf("Get = %v %v %v", len(r.Blob), ok, err)
	}
	if _, ok, err := s.Get("/r/p/none.jsonl"); ok || err != nil {
		t.Fatalf("Get(missing) = %v %v", ok, err)
	}
}

func TestRecords(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "index.db"))
	put := func(f string, size int64, blob string) {
		t.Helper()
		var b []byte
		if blob != "" {
			b = []byte(blob)
		}
		if err := s.PutMany([]Record{{File: f, Size: size, ModTime: size * 10, Blob: b}}); err != nil {
			t.Fatal(err)
		}
	}
	put("c", 3, "cc")
	put("a", 1, "a1")
	put("b", 2, "")
	put("a", 11, "a2") // replaces
	var got []string
	err := s.Blobs([]string{"c", "b", "a", "zz"}, func(f string, blob []byte) error {
		got = append(got, f+"="+string(blob))
		return nil
	})
	if err != nil || strings.Join(got, ",") != "c=cc,a=a2" {
		t.Fatalf("Blobs = %v %v", got, err)
	}
	stop := errors.New("stop")
	if err := s.Blobs([]string{"a", "c"}, func(string, []byte) error { return stop }); err != stop {
		t.Fatalf("Blobs error = %v", err)
	}
	if err := s.Delete("c"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Retain([]string{"a", "elsewhere"}); n != 1 || err != nil {
		t.Fatalf("Retain = %d %v", n, err)
	}
	all, _ := s.All()
	if len(all) != 1 || all[0].File != "a" || all[0].Size != 11 || all[0].ModTime != 110 {
		t.Fatalf("All = %+v", all)
	}
	if n, err := s.Retain([]string{"a"}); n != 0 || err != nil {
		t.Fatalf("Retain again = %d %v", n, err)
	}
}

// validDB returns the bytes of a working store's database with one record.
func validDB(t *testing.T) []byte {
	path := filepath.Join(t.TempDir(), "v.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutMany([]Record{{File: "x", Size: 1}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpenRebuilds(t *testing.T) {
	good := validDB(t)
	foreign := func(path string) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES('mine')`); err != nil {
			t.Fatal(err)
		}
	}
	version := func(v int) func(string) {
		return func(path string) {
			if err := os.WriteFile(path, good, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name  string
		make  func(path string)
		empty bool
	}{
		{"garbage", func(p string) { os.WriteFile(p, bytes.Repeat([]byte("not a database "), 1000), 0o600) }, true},
		{"empty file", func(p string) { os.WriteFile(p, nil, 0o600) }, true},
		{"truncated", func(p string) { os.WriteFile(p, good[:len(good)/3], 0o600) }, true},
		{"header only", func(p string) { os.WriteFile(p, good[:100], 0o600) }, true},
		{"zeroed pages", func(p string) {
			b := slices.Clone(good)
			clear(b[4096:])
			os.WriteFile(p, b, 0o600)
		}, true},
		{"foreign", foreign, true},
		{"newer version", version(SchemaVersion + 1), true},
		{"older version", version(SchemaVersion - 1), true},
		{"stale wal", func(p string) {
			os.WriteFile(p, good, 0o600)
			os.WriteFile(p+"-wal", bytes.Repeat([]byte{0xAB}, 5000), 0o600)
		}, false},
		{"valid", func(p string) { os.WriteFile(p, good, 0o600) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "index.db")
			c.make(path)
			s := openT(t, path)
			all, err := s.All()
			if err != nil {
				t.Fatalf("All after Open: %v", err)
			}
			if want := map[bool]int{true: 0, false: 1}[c.empty]; len(all) != want {
				t.Fatalf("%d records, want %d", len(all), want)
			}
			if err := s.PutMany([]Record{{File: "y", Size: 2}}); err != nil {
				t.Fatalf("the rebuilt store does not take records: %v", err)
			}
			if err := s.AddDocs("y", []Doc{{EntryID: "e", Text: "hello"}}); err != nil {
				t.Fatalf("nor documents: %v", err)
			}
		})
	}
}

func TestOpenFails(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o600)
	if _, err := Open(filepath.Join(file, "index.db")); err == nil {
		t.Error("Open under a regular file succeeded")
	}
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(filepath.Join(sub, "keep"), 0o700)
	if _, err := Open(sub); err == nil {
		t.Error("Open of a directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(sub, "keep")); err != nil {
		t.Errorf("the directory was touched: %v", err)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if p, err := DefaultPath(); err != nil || p != "/x/cache/piweb/index.db" {
		t.Errorf("DefaultPath = %q %v", p, err)
	}
	t.Setenv("XDG_CACHE_HOME", "relative") // ignored, as the spec says
	t.Setenv("HOME", "/home/u")
	if p, err := DefaultPath(); err != nil || !strings.HasSuffix(p, "/piweb/index.db") || strings.HasPrefix(p, "relative") {
		t.Errorf("DefaultPath = %q %v", p, err)
	}
}

func TestReset(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "index.db"))
	s.PutMany([]Record{{File: "a"}})
	s.AddDocs("a", []Doc{{EntryID: "e", Text: "word", Role: "user"}})
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats()
	if err != nil || st.Files != 0 || st.Docs != 0 {
		t.Fatalf("after Reset: %+v %v", st, err)
	}
	if err := s.AddDocs("a", []Doc{{EntryID: "e", Text: "word", Role: "user"}}); err != nil {
		t.Fatal(err)
	}
}

// TestResetWhileSearching resets the store while searches run on it (as
// the catalog does when the store turns out damaged): each search finds
// what it found before or nothing, or fails with ErrClosed because it
// started during the Reset. None reads the old database and the new one
// mixed, nor the new one's files damaged by the old one's closing (both
// failed this test before Reset waited for the searches under way); the
// store is empty and usable after.
func TestResetWhileSearching(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "index.db"))
	text := func(*Hit) (string, error) { return "wombat words", nil }
	add := func() {
		if err := s.AddDocs("a", []Doc{{EntryID: "e", Text: "wombat words", Role: "user"}}); err != nil {
			t.Fatal(err)
		}
	}
	add()
	q, err := search.Parse("wombat")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var searched, failed atomic.Int64
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				p, err := s.Search(context.Background(), q, SearchOptions{Text: text})
				switch {
				case err != nil:
					failed.Add(1)
					if !errors.Is(err, ErrClosed) {
						t.Errorf("a search during Reset: %v", err)
					}
				case len(p.Hits) > 1:
					t.Errorf("%d hits of one document", len(p.Hits))
				}
				searched.Add(1)
			}
		})
	}
	for range 5 {
		for n := searched.Load(); searched.Load() < n+3; {
			runtime.Gosched() // some searches between resets, whatever the machine's speed
		}
		if err := s.Reset(); err != nil {
			t.Fatal(err)
		}
		add()
	}
	close(stop)
	wg.Wait()
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Stats(); err != nil || st.Docs != 0 {
		t.Fatalf("after Reset: %+v %v", st, err)
	}
	p, err := s.Search(context.Background(), q, SearchOptions{Text: text})
	if err != nil || len(p.Hits) != 0 {
		t.Fatalf("a search of the reset store: %+v %v", p, err)
	}
	t.Logf("%d searches, %d failed", searched.Load(), failed.Load())
}

// TestResetByAnotherProcess: after one process resets the store, the
// other moves to the new database at its next operation, with none of
// the old one's names or ids: its writes reach the database both read
// (before, they went to the deleted file), and its searches find them.
func TestResetByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	a, b := openT(t, path), openT(t, path)
	texts := map[string]string{}
	text := func(h *Hit) (string, error) { return texts[h.File+h.EntryID], nil }
	add := func(s *Store, file, entry, role, project, words string) {
		t.Helper()
		texts[file+entry] = words
		if err := s.AddDocs(file, []Doc{{EntryID: entry, Role: role, Project: project, Text: words}}); err != nil {
			t.Fatal(err)
		}
	}
	add(b, "/r/b/1.jsonl", "e1", "user", "pb", "wombat words")
	if err := a.Reset(); err != nil {
		t.Fatal(err)
	}
	// The new database interns other names first: ids that differ.
	add(a, "/r/a/1.jsonl", "e1", "assistant", "pa", "numbat words")
	add(b, "/r/b/2.jsonl", "e2", "user", "pb", "quokka words")
	for _, s := range []*Store{a, b} {
		for _, tc := range []struct{ q, want string }{
			{"quokka project:pb role:user", "/r/b/2.jsonl e2 user pb"},
			{"numbat project:pa role:assistant", "/r/a/1.jsonl e1 assistant pa"},
			{"wombat", ""},
		} {
			q, err := search.Parse(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Search(context.Background(), q, SearchOptions{Text: text})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range p.Hits {
				got = append(got, h.File+" "+h.EntryID+" "+h.Role+" "+h.Project)
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("%s: %q: %q, want %q", map[*Store]string{a: "a", b: "b"}[s], tc.q, got, tc.want)
			}
		}
		if st, err := s.Stats(); err != nil || st.Docs != 2 {
			t.Errorf("stats %+v %v, want 2 documents", st, err)
		}
	}
}

// TestTwoProcesses writes from two Stores on one database at once, as two
// piweb servers would, and checks the database afterwards.
func TestTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	a, b := openT(t, path), openT(t, path)
	const rounds = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*rounds)
	for k, s := range []*Store{a, b} {
		wg.Go(func() {
			for i := range rounds {
				file := fmt.Sprintf("/root/p%d/%03d.jsonl", k, i)
				bt := s.Batch()
				bt.Put(Record{File: file, Size: int64(i), Blob: bytes.Repeat([]byte{byte(i)}, 3000)})
				var docs []Doc
				for j := range 50 {
					docs = append(docs, Doc{EntryID: fmt.Sprintf("e%d", j), Position: j, Role: "user", Project: fmt.Sprintf("p%d", k),
						Time: int64(1_700_000_000_000 + j), Text: fmt.Sprintf("shared words and unique%d_%d_%d", k, i, j)})
				}
				bt.AddDocs(file, docs)
				if i%5 == 4 {
					bt.DeleteDocs(fmt.Sprintf("/root/p%d/%03d.jsonl", k, i-1))
				}
				errs <- bt.Commit()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var check string
	if err := a.conn().QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q %v", check, err)
	}
	checkIndex(t, a)
	st, err := b.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * (rounds - rounds/5) * 50; st.Files != 2*rounds || st.Docs != want {
		t.Fatalf("%+v, want %d files and %d docs", st, 2*rounds, want)
	}
}

// checkIndex decodes every block of the word index and checks it: words
// in order within each segment, ids ascending, every document indexed
// (under its role word) exactly once, and no id of a live document missing.
func checkIndex(t *testing.T, s *Store) {
	t.Helper()
	tx, err := s.conn().Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	segs, err := segments(tx)
	if err != nil {
		t.Fatal(err)
	}
	roleIDs := map[int64]int{}
	for _, seg := range segs {
		r := &segReader{tx: tx, seg: seg}
		var prev []byte
		for {
			ok, err := r.next()
			if err != nil {
				t.Fatalf("segment %d: %v", seg, err)
			}
			if !ok {
				break
			}
			if prev != nil && bytes.Compare(prev, r.it.word) >= 0 {
				t.Fatalf("segment %d: %q after %q", seg, r.it.word, prev)
			}
			prev = append(prev[:0], r.it.word...)
			ids, err := r.it.ids(nil)
			if err != nil || !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
				t.Fatalf("segment %d, %q: ids %v %v", seg, r.it.word, ids, err)
			}
			if bytes.HasPrefix(r.it.word, []byte("\x00r")) {
				for _, id := range ids {
					roleIDs[id]++
				}
			}
		}
	}
	for _, m := range storedDocs(t, tx) {
		if roleIDs[m.id] != 1 {
			t.Fatalf("document %d is indexed %d times", m.id, roleIDs[m.id])
		}
	}
}

// storedRun is a row of docruns.
type storedRun struct {
	hi, lo, fid int64
	data        []byte
}

// storedDocs decodes every row of docruns, checking that the rows do not
// overlap, and returns the documents in id order.
func storedDocs(t *testing.T, q interface {
	Query(string, ...any) (*sql.Rows, error)
}) []docMeta {
	t.Helper()
	rows, err := q.Query(`SELECT hi, lo, fid, data FROM docruns ORDER BY hi`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []docMeta
	for rows.Next() {
		var sr storedRun
		if err := rows.Scan(&sr.hi, &sr.lo, &sr.fid, &sr.data); err != nil {
			t.Fatal(err)
		}
		if len(out) > 0 && sr.lo <= out[len(out)-1].id {
			t.Fatalf("row %d-%d overlaps the one before", sr.lo, sr.hi)
		}
		rd := newRunReader(sr.lo, sr.hi, sr.fid, sr.data)
		for rd.next() {
			out = append(out, rd.meta())
		}
		if rd.err != nil {
			t.Fatalf("row %d-%d: %v", sr.lo, sr.hi, rd.err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBatchRetry commits a batch that fails (another process holds the
// write lock past the busy timeout is hard to stage; a closed store
// fails the same way) and then commits it again on a working store.
func TestBatchRetry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	s := openT(t, path)
	b := s.Batch()
	b.AddDocs("f", []Doc{{EntryID: "e", Role: "user", Text: "retried words"}})
	b.Put(Record{File: "f", Size: 1})
	s.conn().Close()
	if err := b.Commit(); err == nil {
		t.Fatal("commit on a closed database succeeded")
	}
	s2 := openT(t, path)
	b.s = s2
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err := s2.Stats()
	if err != nil || st.Docs != 1 || st.Files != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	checkIndex(t, s2)
}

// TestDeleteUnknownThenPut: dropping a file the store does not know does
// not end the batch: what follows it is written.
func TestDeleteUnknownThenPut(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "index.db"))
	b := s.Batch()
	b.DeleteDocs("/new.jsonl")
	b.Delete("/other.jsonl")
	b.Put(Record{File: "/new.jsonl", Size: 1, ModTime: 2, Blob: []byte("x")})
	b.AddDocs("/new.jsonl", []Doc{{EntryID: "a", Text: "hello", Role: "user"}})
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Get("/new.jsonl"); !ok || err != nil {
		t.Fatalf("record not written: %v", err)
	}
	if st, _ := s.Stats(); st.Docs != 1 {
		t.Fatalf("%d documents", st.Docs)
	}
}

// TestDocIDs: documents are numbered in the order added, several rows'
// worth in one batch, and an id is never given again, even once the
// documents holding the greatest ones are deleted.
func TestDocIDs(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "index.db"))
	ids := func() []int64 {
		var out []int64
		for _, m := range storedDocs(t, s.conn()) {
			out = append(out, m.id)
		}
		return out
	}
	docs := func(n int, word string) []Doc {
		var out []Doc
		for k := range n {
			out = append(out, Doc{EntryID: fmt.Sprint(k), Position: k, Role: "user", Text: word})
		}
		return out
	}
	b := s.Batch()
	b.AddDocs("a", docs(runDocs*2+5, "alpha"))
	b.AddDocs("b", docs(3, "beta"))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	got := ids()
	if len(got) != runDocs*2+8 || got[0] != 1 || got[len(got)-1] != int64(len(got)) {
		t.Fatalf("ids %v", got)
	}
	if err := s.DeleteDocs("b"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddDocs("c", docs(2, "gamma")); err != nil {
		t.Fatal(err)
	}
	got = ids()
	if n := len(got); got[n-2] != runDocs*2+9 || got[n-1] != runDocs*2+10 {
		t.Fatalf("after deleting the last documents, new ones have ids %v", got[n-2:])
	}
	checkIndex(t, s)
}
