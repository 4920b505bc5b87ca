package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/storetest"
	"github.com/piweb/piweb/search"
)

var ctx = context.Background()

// each runs test against every engine the machine has, each with a new store.
func each(t *testing.T, test func(t *testing.T, s *DB)) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			s, err := Open(ctx, e.DSN, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			test(t, s)
		})
	}
}

func doc(off int64, part int, id, role string, ts int64, text string) Doc {
	return Doc{Off: off, Len: 10, Pos: int(off / 100), Part: part, EntryID: id, Role: role, Time: ts, Text: search.Normalize(text)}
}

func file(path string, size int64) File {
	return File{Path: path, Stamp: Stamp{Size: size, ModTime: 42, Head: 1, Tail: 2}, SessionID: "s-" + path,
		Project: "proj", Modified: 1000, Meta: []byte(`{"key":"` + path + `"}`)}
}

// held keeps the candidates whose docs (in saves) hold every needle, as
// the caller's check on the real text does: the store's index only
// narrows (PostgreSQL's to the docs of runs holding them).
func held(cs []Candidate, needles []string, saves ...*Save) []Candidate {
	var out []Candidate
	for _, c := range cs {
		for _, sv := range saves {
			k := slices.IndexFunc(sv.Docs, func(d Doc) bool { return d.Off == c.Off && d.Part == c.Part })
			if sv.File.Path == c.Path && k >= 0 &&
				!slices.ContainsFunc(needles, func(n string) bool { return !strings.Contains(sv.Docs[k].Text, n) }) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// ids returns the entry ids (with parts) of candidates, in order.
func ids(cs []Candidate) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s/%d", c.EntryID, c.Part))
	}
	return strings.Join(out, " ")
}

func TestSaveAndSearch(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		a := &Save{File: file("/r/a.jsonl", 500), Docs: []Doc{
			doc(0, 0, "a1", "user", 100, "Fix the stale base64 Encoding"),
			doc(100, 0, "a2", "assistant", 200, "the cache\n\tkey handler"),
			doc(100, 1, "a2", "assistant", 200, "thinking about handlers"),
		}, Labels: []Label{{EntryID: "a2", Text: "Before Refactor", Time: 250, Pos: 1}}, Places: []byte{1, 2}}
		b := &Save{File: file("/r/b.jsonl", 300), Docs: []Doc{
			doc(0, 0, "b1", "user", 300, "another encoding question"),
			doc(100, 0, "b2", "tool", 400, "x"),
		}}
		if err := s.SaveMany(ctx, []*Save{a, b}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			q    Query
			want string
		}{
			{Query{Needles: []string{"ncoding"}, Limit: 10}, "b1/0 a1/0"},
			{Query{Needles: []string{"cache key"}, Limit: 10}, "a2/0"},
			{Query{Needles: []string{"handler"}, Limit: 10}, "a2/1 a2/0"},
			{Query{Needles: []string{"handler"}, Limit: 1}, "a2/1"},
			{Query{Needles: []string{"ncoding"}, Roles: []string{"user"}, After: 200, Limit: 10}, "b1/0"},
			{Query{Needles: []string{"ncoding"}, NotRoles: []string{"user"}, Limit: 10}, ""},
			{Query{Needles: []string{"ncoding"}, Before: 300, Limit: 10}, "a1/0"},
			{Query{Needles: []string{"x"}, Limit: 10}, "b2/0 a1/0"},
			{Query{Needles: []string{"zzzq"}, Limit: 10}, ""},
			{Query{Needles: []string{"ncoding"}, Projects: []string{"roj", "zz"}, Limit: 10}, "b1/0 a1/0"},
			{Query{Needles: []string{"ncoding"}, Projects: []string{"zz"}, Limit: 10}, ""},
			{Query{Needles: []string{"ncoding"}, NotProjects: []string{"pro"}, Limit: 10}, ""},
			{Query{Needles: []string{"ncoding"}, Machine: "other", Limit: 10}, ""},
			{Query{Needles: []string{"ncoding"}, Machine: "other", Any: true, Limit: 10}, "b1/0 a1/0"},
		} {
			got, err := s.Search(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			if ids(held(got, c.q.Needles, a, b)) != c.want {
				t.Errorf("%+v: %q, want %q", c.q, ids(got), c.want)
			}
		}
		// A needle too short to narrow by: every doc, for the caller to check.
		if got, _ := s.Search(ctx, Query{Needles: []string{"x"}, Limit: 10}); ids(got) != "b2/0 b1/0 a2/1 a2/0 a1/0" {
			t.Errorf("x: %q", ids(got))
		}
		// The cursor: below the last candidate of the first batch.
		first, _ := s.Search(ctx, Query{Needles: []string{"handler"}, Limit: 1})
		rest, _ := s.Search(ctx, Query{Needles: []string{"handler"}, Limit: 10, Below: first[0].ID})
		if rest = held(rest, []string{"handler"}, a); ids(rest) != "a2/0" || rest[0].Path != "/r/a.jsonl" || rest[0].Off != 100 || rest[0].Time != 200 {
			t.Errorf("after the cursor: %+v", rest)
		}
		files, damaged, err := s.Files(ctx, "")
		if err != nil || damaged != 0 || len(files) != 2 {
			t.Fatalf("Files: %v %d %v", files, damaged, err)
		}
		slices.SortFunc(files, func(x, y File) int { return strings.Compare(x.Path, y.Path) })
		if f := files[0]; f.Stamp != a.File.Stamp || string(f.Meta) != `{"key":"/r/a.jsonl"}` || f.Project != "proj" {
			t.Errorf("file a: %+v", f)
		}
		if f, err := s.Facts(ctx, files[0].ID); err != nil || string(f.Places) != "\x01\x02" || f.Labels["a2"] != "Before Refactor" {
			t.Errorf("facts %+v %v", f, err)
		}
		labels, bad, err := s.Labels(ctx, "")
		if err != nil || len(bad) != 0 || len(labels) != 1 || labels[0].Text != "Before Refactor" || labels[0].Path != "/r/a.jsonl" || labels[0].Pos != 1 {
			t.Errorf("labels %+v %v", labels, err)
		}
	})
}

func TestSaveIdempotent(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		sv := &Save{File: file("/r/a.jsonl", 200), Docs: []Doc{doc(0, 0, "a1", "user", 1, "hello world"), doc(100, 0, "a2", "user", 2, "hello again")}}
		for range 3 { // as two processes indexing the same appended lines would
			if err := s.Save(ctx, sv); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Search(ctx, Query{Needles: []string{"hello"}, Limit: 10})
		if err != nil || ids(got) != "a2/0 a1/0" {
			t.Fatalf("after three saves: %q %v", ids(got), err)
		}
		// Places and labels left as they were when not given.
		s.Save(ctx, &Save{File: file("/r/a.jsonl", 200), Places: []byte{7}, Labels: []Label{{EntryID: "a1", Text: "x"}}})
		s.Save(ctx, &Save{File: file("/r/a.jsonl", 300)})
		files, _, _ := s.Files(ctx, "")
		if f, _ := s.Facts(ctx, files[0].ID); string(f.Places) != "\x07" || files[0].Stamp.Size != 300 {
			t.Errorf("places %q size %d", f.Places, files[0].Stamp.Size)
		}
		if l, _, _ := s.Labels(ctx, ""); len(l) != 1 {
			t.Errorf("labels %+v", l)
		}
		// Reset: the file was read again; its old texts go.
		if err := s.Save(ctx, &Save{File: file("/r/a.jsonl", 50), Reset: true, Docs: []Doc{doc(0, 0, "n1", "user", 5, "hello anew")}}); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Search(ctx, Query{Needles: []string{"hello"}, Limit: 10}); ids(got) != "n1/0" {
			t.Errorf("after a reset: %q", ids(got))
		}
		if got, _ := s.Search(ctx, Query{Needles: []string{"again"}, Limit: 10}); len(got) != 0 {
			t.Errorf("a dropped text is still found: %q", ids(got))
		}
		// No rows are left behind: PostgreSQL's runs of words go with their docs.
		count := func(table string) (n int) {
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		texts := "docs"
		if s.engine == Postgres {
			texts = "texts"
		}
		if d, x := count("docs"), count(texts); d != 1 || x != 1 {
			t.Errorf("after a reset: %d docs, %d rows of texts", d, x)
		}
		if err := s.Remove(ctx, "", "/r/a.jsonl"); err != nil {
			t.Fatal(err)
		}
		if d, x := count("docs"), count(texts); d != 0 || x != 0 {
			t.Errorf("after the removal: %d docs, %d rows of texts", d, x)
		}
		if files, _, _ := s.Files(ctx, ""); len(files) != 0 {
			t.Errorf("removed file listed: %+v", files)
		}
		if got, _ := s.Search(ctx, Query{Needles: []string{"hello"}, Limit: 10}); len(got) != 0 {
			t.Errorf("a removed file's texts are found: %q", ids(got))
		}
	})
}

// TestSaveLargeFile: a file of more texts than one statement sends
// (pgChunk) is stored whole, once however often it is saved, and a save
// some of whose docs another process wrote first adds only the others.
func TestSaveLargeFile(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		long := strings.Repeat("padding words ", 2000) // 28 kB a text: 3 MB in all
		var all []Doc
		for i := range 110 {
			d := doc(int64(100*i), i%2, fmt.Sprintf("e%d", i/2*2), "user", int64(i), fmt.Sprintf("text%03d %s", i, long))
			d.Off = int64(100 * (i / 2)) // two parts an entry
			all = append(all, d)
		}
		found := func(want int) {
			t.Helper()
			got := pages(t, s, Query{Needles: []string{"padding words"}, Limit: 50})
			seen := map[string]bool{}
			for _, c := range got {
				seen[fmt.Sprintf("%d/%d", c.Off, c.Part)] = true
			}
			if len(got) != want || len(seen) != want {
				t.Fatalf("%d documents (%d distinct), want %d", len(got), len(seen), want)
			}
			for k := 1; k < len(got); k++ { // numbered in the order of their lines
				if a, b := got[k-1], got[k]; a.Off < b.Off || a.Off == b.Off && a.Part < b.Part {
					t.Fatalf("doc %d/%d numbered before %d/%d", a.Off, a.Part, b.Off, b.Part)
				}
			}
		}
		// Another process saved the first half before this one saves all.
		if err := s.Save(ctx, &Save{File: file("/r/big.jsonl", 100), Docs: all[:54]}); err != nil {
			t.Fatal(err)
		}
		found(54)
		for range 2 {
			if err := s.Save(ctx, &Save{File: file("/r/big.jsonl", 200), Docs: all}); err != nil {
				t.Fatal(err)
			}
			found(110)
		}
		// A row whose numbers are damaged is not trusted: the docs say
		// where the file's are, and the save mends it.
		if _, err := s.db.ExecContext(ctx, `UPDATE files SET hi = lo`); err != nil {
			t.Fatal(err)
		}
		if _, damaged, _ := s.Files(ctx, ""); damaged != 1 {
			t.Errorf("%d damaged rows, want 1", damaged)
		}
		if err := s.Save(ctx, &Save{File: file("/r/big.jsonl", 200), Docs: all}); err != nil {
			t.Fatal(err)
		}
		found(110)
		if files, damaged, _ := s.Files(ctx, ""); damaged != 0 || len(files) != 1 {
			t.Errorf("after the save: %d files, %d damaged", len(files), damaged)
		}
		for _, k := range []int{0, 57, 109} {
			needle := fmt.Sprintf("text%03d", k)
			got := held(pages(t, s, Query{Needles: []string{needle}, Limit: 5}), []string{needle}, &Save{File: file("/r/big.jsonl", 200), Docs: all})
			if len(got) != 1 || got[0].Off != all[k].Off || got[0].Part != all[k].Part {
				t.Errorf("%s: %+v", needle, got)
			}
		}
	})
}

func TestCopies(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		s.Save(ctx, &Save{File: file("/r/a.jsonl", 200), Docs: []Doc{doc(0, 0, "e1", "user", 7, "shared text")}})
		fork := &Save{File: file("/r/fork.jsonl", 300), Docs: []Doc{doc(40, 0, "e1", "user", 7, "shared text"), doc(140, 0, "e2", "user", 8, "own")}}
		s.Save(ctx, fork)
		cs, err := s.Copies(ctx, "e1", 0, 7)
		if err != nil || len(cs) != 2 || cs[0].Path != "/r/a.jsonl" || cs[1].Path != "/r/fork.jsonl" || cs[1].Off != 40 {
			t.Errorf("copies %+v %v", cs, err)
		}
		if cs, err := s.Copies(ctx, "e2", 0, 8); err != nil || len(cs) != 1 || cs[0].Path != "/r/fork.jsonl" {
			t.Errorf("an entry of one file: copies %+v %v", cs, err)
		}
	})
}

// TestDamagedRow: a row whose columns no longer agree with its checksum is
// left out, and counted, rather than trusted.
func TestDamagedRow(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		s.Save(ctx, &Save{File: file("/r/a.jsonl", 200), Places: []byte{1}})
		s.Save(ctx, &Save{File: file("/r/b.jsonl", 200)})
		s.Save(ctx, &Save{File: file("/r/c.jsonl", 200), Docs: []Doc{doc(0, 0, "c1", "user", 1, "one"), doc(100, 0, "c2", "user", 2, "two")}})
		for _, damage := range []string{`UPDATE files SET meta = '{"key":"evil"}' WHERE path = '/r/a.jsonl'`,
			`UPDATE files SET places = ? WHERE path = '/r/b.jsonl'`, `UPDATE files SET lo = hi WHERE path = '/r/c.jsonl'`} {
			err := s.Use(ctx, func(db *sql.DB) error {
				var args []any
				if strings.Contains(damage, "?") {
					args = append(args, []byte{9})
				}
				_, err := db.Exec(s.Rebind(damage), args...)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		files, damaged, err := s.Files(ctx, "")
		if err != nil || damaged != 3 || len(files) != 0 {
			t.Errorf("Files: %+v, %d damaged, %v", files, damaged, err)
		}
		idOf := func(path string) int64 { // a file's number, its row damaged or not
			var id int64
			if err := s.Use(ctx, func(db *sql.DB) error {
				return db.QueryRow(s.Rebind(`SELECT id FROM files WHERE path = ?`), path).Scan(&id)
			}); err != nil {
				t.Fatal(err)
			}
			return id
		}
		id := idOf("/r/b.jsonl")
		if f, err := s.Facts(ctx, id); err != nil || !f.Damaged || f.Places != nil {
			t.Errorf("Facts of a damaged row: %+v %v; want none, and Damaged", f, err)
		}
		if f, err := s.Facts(ctx, id+1000); err != nil || f.Damaged {
			t.Errorf("Facts of no row: %+v %v; want none, not Damaged", f, err)
		}
		// A label's row changed: its file's labels are none of them given,
		// and the file is named.
		s.Save(ctx, &Save{File: file("/r/d.jsonl", 200), Labels: []Label{{EntryID: "d1", Text: "one"}, {EntryID: "d2", Text: "two", Time: 5}}})
		s.Save(ctx, &Save{File: file("/r/e.jsonl", 200), Labels: []Label{{EntryID: "e1", Text: "one too"}}})
		if err := s.Use(ctx, func(db *sql.DB) error {
			_, err := db.Exec(`UPDATE labels SET label = 'evil' WHERE entry_id = 'd2'`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		ls, bad, err := s.Labels(ctx, "")
		kept := slices.ContainsFunc(ls, func(l FileLabel) bool { return l.Path == "/r/e.jsonl" && l.Text == "one too" })
		fromD := slices.ContainsFunc(ls, func(l FileLabel) bool { return l.Path == "/r/d.jsonl" })
		if err != nil || !kept || fromD || !slices.Equal(bad, []string{"/r/d.jsonl"}) {
			t.Errorf("Labels with a damaged row: %+v, damaged %v, %v", ls, bad, err)
		}
		if f, err := s.Facts(ctx, idOf("/r/d.jsonl")); err != nil || !f.Damaged || f.Labels != nil {
			t.Errorf("Facts of a file with a damaged label row: %+v %v", f, err)
		}
	})
}

// TestPathCharacters: a store path with characters that mean something in
// a URI lands exactly there, and nothing is made outside its folder.
func TestPathCharacters(t *testing.T) {
	for _, name := range []string{"a?b", "a#b", "a%41b", "a b", "victim?mode=ro", "x&_pragma=journal_mode(DELETE)"} {
		parent := t.TempDir()
		dir := filepath.Join(parent, name)
		if err := os.WriteFile(filepath.Join(parent, "a"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(ctx, "sqlite:"+filepath.Join(dir, "index.db"), Options{})
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if err := s.Save(ctx, &Save{File: file("/r/a.jsonl", 1)}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if st, err := os.Stat(filepath.Join(dir, "index.db")); err != nil || st.Size() == 0 {
			t.Errorf("%q: the store is not in its folder: %v", name, err)
		}
		entries, _ := os.ReadDir(parent)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if strings.Join(names, "|") != "a|"+name && strings.Join(names, "|") != name+"|a" {
			t.Errorf("%q: the parent folder holds %q", name, names)
		}
		if st, _ := os.Stat(filepath.Join(parent, "a")); st.Size() != 0 {
			t.Errorf("%q: a file outside the folder was written", name)
		}
	}
}

// TestDeletedWhileOpen: the cache folder removed under an open store; the
// next operation makes it again, empty, and says so.
func TestDeletedWhileOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	s, err := Open(ctx, "sqlite:"+filepath.Join(dir, "index.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reset := make(chan struct{}, 4)
	s.OnReset(func() { reset <- struct{}{} })
	s.Save(ctx, &Save{File: file("/r/a.jsonl", 1), Docs: []Doc{doc(0, 0, "a", "user", 1, "hello")}})
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	files, _, err := s.Files(ctx, "")
	if err != nil || len(files) != 0 {
		t.Fatalf("after the folder went: %+v %v", files, err)
	}
	<-reset
	if err := s.Save(ctx, &Save{File: file("/r/b.jsonl", 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.db")); err != nil {
		t.Errorf("the store was not made again: %v", err)
	}
}

// TestForeignFile: a file that is not piweb's store (garbage, or an older
// piweb's) is replaced by a new store.
func TestForeignFile(t *testing.T) {
	for _, content := range []string{"not a database at all", ""} {
		p := filepath.Join(t.TempDir(), "index.db")
		os.WriteFile(p, []byte(content), 0o600)
		s, err := Open(ctx, "sqlite:"+p, Options{})
		if err != nil {
			t.Fatalf("%q: %v", content, err)
		}
		if err := s.Save(ctx, &Save{File: file("/r/a.jsonl", 1)}); err != nil {
			t.Error(err)
		}
		s.Close()
	}
	p := filepath.Join(t.TempDir(), "index.db")
	db, _ := sql.Open("sqlite", p)
	db.Exec(`CREATE TABLE segments (id INTEGER)`) // an older piweb's store
	db.Close()
	s, err := Open(ctx, "sqlite:"+p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Files(ctx, ""); err != nil {
		t.Error(err)
	}
}

// TestNewerSchema: a store made by a newer piweb is left alone.
func TestNewerSchema(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		err := s.Use(ctx, func(db *sql.DB) error {
			_, err := db.Exec(s.Rebind(`INSERT INTO schema_version (version) VALUES (?)`), SchemaVersion+1)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		s.ready = false
		err = s.migrateLocked(ctx)
		s.mu.Unlock()
		if !errors.Is(err, errNewer) {
			t.Errorf("a newer store: %v", err)
		}
	})
}

func TestParseDSN(t *testing.T) {
	for _, c := range []struct{ dsn, engine, err string }{
		{"sqlite:/x/y.db", SQLite, ""},
		{"postgres://u@h/db", Postgres, ""},
		{"postgresql://u:secret@h/db", Postgres, ""},
		{"sqlite:", "", "needs a file path"},
		{"mysql://u:secret@h/db", "", "mysql://u:***@h/db"},
	} {
		engine, _, err := ParseDSN(c.dsn)
		if engine != c.engine || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %q %v", c.dsn, engine, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the password is in the message %v", c.dsn, err)
		}
	}
}

// TestOwnSchema: a PostgreSQL store in a schema of its own, pg_trgm in
// another schema (public) that is not on the search path, is made and
// indexed as any other.
func TestOwnSchema(t *testing.T) {
	dsn, ok := storetest.Postgres(t)
	if !ok {
		t.Skip("no PostgreSQL")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	own, _, _ := strings.Cut(q.Get("search_path"), ",")
	q.Set("search_path", own)
	u.RawQuery = q.Encode()
	s, err := Open(ctx, u.String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var trgm string
	if err := s.db.QueryRowContext(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'pg_trgm'`).Scan(&trgm); err != nil || trgm == own {
		t.Fatalf("pg_trgm in %q (%v); the test wants it outside the store's schema %q", trgm, err, own)
	}
	if err := s.TextIndex(ctx, false); err != nil {
		t.Fatal(err)
	}
	sv, _ := bigFile("/r/a.jsonl", 3000, func(int) bool { return false })
	if err := s.Save(ctx, sv); err != nil {
		t.Fatal(err)
	}
	if err := s.TextIndex(ctx, true); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname = 'texts_trgm'`, own).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the trigram index in %s: %d (%v)", own, n, err)
	}
	if got := ids(held(pages(t, s, Query{Needles: []string{"rare"}, Limit: 2}), []string{"rare"}, sv)); got != "/r/a.jsonl#2991/0 /r/a.jsonl#1994/0 /r/a.jsonl#997/0 /r/a.jsonl#0/0" {
		t.Errorf("rare: %q", got)
	}
}

// TestUpgradeOwnSchema: a PostgreSQL store brought up to date drops its
// index's tables in its own schema only, never a table of that name in a
// schema further along its search path (another store's).
func TestUpgradeOwnSchema(t *testing.T) {
	other, ok := storetest.Postgres(t)
	if !ok {
		t.Skip("no PostgreSQL")
	}
	mine, _ := storetest.Postgres(t)
	schema := func(dsn string) string {
		u, _ := url.Parse(dsn)
		s, _, _ := strings.Cut(u.Query().Get("search_path"), ",")
		return s
	}
	o, err := Open(ctx, other, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := o.Save(ctx, &Save{File: file("/r/o.jsonl", 100), Docs: []Doc{doc(0, 0, "o1", "user", 1, "kept")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.db.ExecContext(ctx, `CREATE TABLE doc_text (id BIGINT)`); err != nil { // (as stores before schema 5 had)
		t.Fatal(err)
	}
	u, _ := url.Parse(mine)
	q := u.Query()
	q.Set("search_path", schema(mine)+","+schema(other)+",public")
	u.RawQuery = q.Encode()
	s, err := Open(ctx, u.String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	remigrate(t, s, 3)
	var n int
	if err := o.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename IN ('doc_text', 'docs', 'files')`,
		schema(other)).Scan(&n); err != nil || n != 3 {
		t.Errorf("the other store's tables: %d of 3 left (%v)", n, err)
	}
	if got, err := o.Search(ctx, Query{Needles: []string{"kept"}, Limit: 5}); err != nil || ids(got) != "o1/0" {
		t.Errorf("the other store finds %q (%v)", ids(got), err)
	}
}

// TestStampAt: a file's stamp up to a size holds after appends, and not
// after its first or last bytes up to that size changed.
func TestStampAt(t *testing.T) {
	base := strings.Repeat("a line of a session\n", 500) // 10 kB: head and tail apart
	at := func(content string, size int64) Stamp {
		st, err := StampAt(strings.NewReader(content), size, time.Unix(0, 7))
		if err != nil || st.Size != size || st.ModTime != 7 {
			t.Fatalf("%+v %v", st, err)
		}
		return st
	}
	n := int64(len(base))
	was := at(base, n)
	for _, c := range []struct {
		name    string
		content string
		same    bool
	}{
		{"appended", base + "more\n", true},
		{"head rewritten", "A" + base[1:], false},
		{"tail rewritten", base[:n-2] + "!\n", false},
	} {
		if got := at(c.content, n); (got == was) != c.same {
			t.Errorf("%s: %+v against %+v", c.name, got, was)
		}
	}
	if empty := at("", 0); empty.Head != empty.Tail {
		t.Errorf("an empty file: %+v", empty)
	}
}
