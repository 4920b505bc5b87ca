package store

import (
	"bytes"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/piweb/piweb/search"
)

// bigFile is a file of n entries, one text each: "entry N" plus "common"
// in every one, "rare" in every 997th, "sparse" in every 41st; roles
// alternate user and assistant.
func bigFile(path string, n int, off func(pos int) bool) (*Save, []byte) {
	sv := &Save{File: file(path, int64(100*n))}
	places := make([]byte, (n+3)/4)
	for i := range n {
		text := fmt.Sprintf("entry %d common", i)
		if i%997 == 0 {
			text += " rare"
		}
		if i%41 == 0 {
			text += " sparse"
		}
		role := []string{"user", "assistant"}[i%2]
		d := doc(int64(100*i), 0, fmt.Sprintf("%s#%d", path, i), role, int64(i), text)
		d.Pos = i
		sv.Docs = append(sv.Docs, d)
		if !off(i) {
			places[i/4] |= 1 << (2 * (i % 4))
		}
	}
	sv.Places = places
	return sv, places
}

// pages runs q page by page (the cursor: Below the last candidate) and
// returns every candidate, failing on an id out of order.
func pages(t *testing.T, s *DB, q Query) []Candidate {
	t.Helper()
	var all []Candidate
	for range 10000 {
		got, err := s.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got {
			if len(all) > 0 && c.ID >= all[len(all)-1].ID {
				t.Fatalf("%+v: id %d after %d", q, c.ID, all[len(all)-1].ID)
			}
			all = append(all, c)
		}
		if len(got) < q.Limit {
			return all
		}
		q.Below = got[len(got)-1].ID
	}
	t.Fatalf("%+v: no end", q)
	return nil
}

// want returns the entry ids of docs passing keep, newest (last saved) first.
func want(saves []*Save, keep func(sv *Save, d *Doc) bool) string {
	var out []string
	for _, sv := range saves {
		for i := range sv.Docs {
			if keep(sv, &sv.Docs[i]) {
				out = append(out, sv.Docs[i].EntryID+"/0")
			}
		}
	}
	slices.Reverse(out)
	return strings.Join(out, " ")
}

// TestSearchPages: paged through with the cursor, the windows the engines
// search in (PostgreSQL's scanned windows and then its trigram index;
// SQLite's probe and runs of off-path documents) give every document that
// holds the needles and passes the filters once, newest first: common,
// sparse, rare and absent needles, two at once, with and without a role,
// on and off the path.
func TestSearchPages(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		offA := func(pos int) bool { return pos%1000 >= 990 || pos == 5 } // runs and a lone one
		offB := func(pos int) bool { return false }
		a, _ := bigFile("/r/a.jsonl", 6000, offA)
		b, _ := bigFile("/r/b.jsonl", 3000, offB)
		saves := []*Save{a, b}
		if err := s.SaveMany(ctx, saves); err != nil {
			t.Fatal(err)
		}
		offOf := map[*Save]func(int) bool{a: offA, b: offB}
		for _, c := range []struct {
			needle  string
			role    string
			offPath bool
			onPath  bool
		}{
			{needle: "common"}, {needle: "sparse"}, {needle: "rare"}, {needle: "absent"},
			{needle: "sparse", role: "user"}, {needle: "rare", role: "assistant"},
			{needle: "common", offPath: true}, {needle: "rare", offPath: true}, {needle: "sparse", offPath: true},
			{needle: "sparse", onPath: true}, {offPath: true}, {needle: "common sparse", role: "user"},
		} {
			q := Query{Limit: 50, OffPath: c.offPath, OnPath: c.onPath}
			if c.needle != "" {
				q.Needles = strings.Fields(c.needle)
			}
			if c.role != "" {
				q.Roles = []string{c.role}
			}
			w := want(saves, func(sv *Save, d *Doc) bool {
				off := offOf[sv](d.Pos)
				return !slices.ContainsFunc(strings.Fields(c.needle), func(n string) bool { return !strings.Contains(d.Text, n) }) && (c.role == "" || d.Role == c.role) &&
					(!c.offPath || off) && (!c.onPath || !off)
			})
			if got := ids(held(pages(t, s, q), q.Needles, saves...)); got != w {
				t.Errorf("%+v:\n got %.300s\nwant %.300s", c, got, w)
			}
		}
	})
}

// TestProjectSpans: a project's searches give every document of its files
// that holds the needles, newest first, however far below the other
// projects' its files lie (SQLite searches the newest texts, then only the
// ranges of the project's files' ids), with appends that leave a file's
// documents in two ranges, a file of the project among others', and a
// row whose numbers are damaged.
func TestProjectSpans(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		if raceOn && s.engine == SQLite {
			t.Skip("one goroutine over 18,000 documents: 150 s on SQLite under the race detector; go test ./... runs it")
		}
		none := func(int) bool { return false }
		mk := func(path, project string, n int) *Save {
			sv, _ := bigFile(path, n, none)
			sv.File.Project = project
			return sv
		}
		old := mk("/r/old.jsonl", "--home-old--", 3000)
		busy := mk("/r/busy.jsonl", "--home-busy--", 6000)
		oldMore := mk("/r/old.jsonl", "--home-old--", 3500)
		oldMore.Docs = oldMore.Docs[3000:] // appended after busy's
		other := mk("/r/other.jsonl", "--home-old--", 200)
		last := mk("/r/last.jsonl", "--home-busy--", 5000)
		newest := mk("/r/newest.jsonl", "--home-old--", 300)
		saves := []*Save{old, busy, oldMore, other, last, newest}
		for _, sv := range saves {
			if err := s.Save(ctx, sv); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			needle, project, notProject, role string
		}{
			{needle: "common", project: "old"}, {needle: "sparse", project: "old"}, {needle: "rare", project: "old"},
			{needle: "common", project: "old", role: "user"}, {needle: "common", project: "busy"},
			{needle: "common", project: "home", notProject: "busy"}, {needle: "absent", project: "old"},
			// Not in the project's newest file (entries 0 to 299): on
			// PostgreSQL the trigram index answers for the rest.
			{needle: "entry 2999", project: "old"}, {needle: "entry 3100", project: "old"}, {needle: "entry 3100 common", project: "old"},
		} {
			q := Query{Needles: []string{c.needle}, Projects: []string{c.project}, Limit: 30}
			if c.notProject != "" {
				q.NotProjects = []string{c.notProject}
			}
			if c.role != "" {
				q.Roles = []string{c.role}
			}
			w := want(saves, func(sv *Save, d *Doc) bool {
				p := sv.File.Project
				return strings.Contains(d.Text, c.needle) && strings.Contains(p, c.project) &&
					(c.notProject == "" || !strings.Contains(p, c.notProject)) && (c.role == "" || d.Role == c.role)
			})
			if got := ids(held(pages(t, s, q), q.Needles, saves...)); got != w {
				t.Errorf("%+v:\n got %.300s\nwant %.300s", c, got, w)
			}
		}
		// A damaged row's numbers are not trusted: its documents say
		// where the file's are.
		if _, err := s.db.ExecContext(ctx, `UPDATE files SET hi = 0 WHERE path = '/r/old.jsonl'`); err != nil {
			t.Fatal(err)
		}
		q := Query{Needles: []string{"common"}, Projects: []string{"old"}, Limit: 500}
		w := want(saves, func(sv *Save, d *Doc) bool { return strings.Contains(sv.File.Project, "old") })
		if got := ids(held(pages(t, s, q), q.Needles, saves...)); got != w {
			t.Errorf("a damaged row:\n got %.300s\nwant %.300s", got, w)
		}
	})
}

// TestOffPathFollowsPlaces: the store narrows off-path searches by each
// document's flag, which follows its file's places through appends,
// rewinds, resets and the migration that added it to older stores.
func TestOffPathFollowsPlaces(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		check := func(what string, off func(int) bool, n int) {
			t.Helper()
			var w []string
			for i := n - 1; i >= 0; i-- {
				if off(i) {
					w = append(w, fmt.Sprintf("/r/a.jsonl#%d/0", i))
				}
			}
			for _, needles := range [][]string{nil, {"common"}} {
				if got := ids(pages(t, s, Query{Needles: needles, OffPath: true, Limit: 7})); got != strings.Join(w, " ") {
					t.Errorf("%s, needles %q: off-path %q, want %q", what, needles, got, strings.Join(w, " "))
				}
			}
			on := pages(t, s, Query{Needles: []string{"common"}, OnPath: true, Limit: 100})
			if len(on)+len(w) != n {
				t.Errorf("%s: %d on the path and %d off it, of %d", what, len(on), len(w), n)
			}
		}
		first := func(pos int) bool { return pos >= 20 && pos < 30 }
		sv, _ := bigFile("/r/a.jsonl", 40, first)
		if err := s.Save(ctx, sv); err != nil {
			t.Fatal(err)
		}
		check("saved", first, 40)
		// A rewind to entry 9, and a branch from there: 10–39 leave the
		// path, the new 40–49 are on it.
		rewound := func(pos int) bool { return pos >= 10 && pos < 40 }
		more, _ := bigFile("/r/a.jsonl", 50, rewound)
		more.Docs = more.Docs[40:]
		if err := s.Save(ctx, more); err != nil {
			t.Fatal(err)
		}
		check("after a rewind", rewound, 50)
		// Back to the old leaf (entry 39): 20–29 off again, 40–49 too.
		back := func(pos int) bool { return pos >= 20 && pos < 30 || pos >= 40 }
		_, places := bigFile("/r/a.jsonl", 50, back)
		if err := s.Save(ctx, &Save{File: file("/r/a.jsonl", 5000), Places: places}); err != nil {
			t.Fatal(err)
		}
		check("back to the old leaf", back, 50)
		// Read again from the start.
		reset, _ := bigFile("/r/a.jsonl", 50, first)
		reset.Reset = true
		if err := s.Save(ctx, reset); err != nil {
			t.Fatal(err)
		}
		check("after a reset", first, 50)

		// A store of schema 3 (no flags) gets them from the places
		// (the store starts afresh at schema 9: the file saved again).
		remigrate(t, s, 3)
		afresh(t, s, reset)
		check("migrated", first, 50)
	})
}

// remigrate makes s a store of schema v, its tables as they are, then
// brings it up to date (the index starts afresh: see afresh).
func remigrate(t *testing.T, s *DB, v int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range []string{`DELETE FROM schema_version`, fmt.Sprintf(`INSERT INTO schema_version (version) VALUES (%d)`, v)} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s.ready = false
	if err := s.migrateLocked(ctx); err != nil {
		t.Fatal(err)
	}
}

// afresh checks that a store migrated from before schema 9 holds no
// file (it starts afresh), then saves saves again.
func afresh(t *testing.T, s *DB, saves ...*Save) {
	t.Helper()
	if files, _, err := s.Files(ctx, ""); err != nil || len(files) > 0 {
		t.Fatalf("after schema 9: %d files (%v), want none", len(files), err)
	}
	for _, sv := range saves {
		if err := s.Save(ctx, sv); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrationsKeepPushes: a store of schema 3 (the first with pushes
// and tokens) brought up to date keeps every pushed chunk and login token,
// though the index starts afresh: only the index is made again.
func TestMigrationsKeepPushes(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		chunk := []byte("{\"type\":\"session\"}\n")
		for _, q := range []string{
			`INSERT INTO push_files (machine, path, gen, consumed, sent, head, tail, redact, pushed) VALUES ('m', '/p.jsonl', 1, 21, 21, 7, 9, '', 3)`,
			`INSERT INTO push_chunks (file_id, gen, off, data) SELECT id, 1, 0, ? FROM push_files`,
			`INSERT INTO tokens (name, lookup, hash, created, used) VALUES ('alice', 'l', 'h', 1, 2)`,
		} {
			var args []any
			if strings.Contains(q, "?") {
				args = append(args, chunk)
			}
			if _, err := s.db.ExecContext(ctx, s.Rebind(q), args...); err != nil {
				t.Fatal(err)
			}
		}
		var logged bytes.Buffer
		s.log = slog.New(slog.NewTextHandler(&logged, nil))
		remigrate(t, s, 3)
		if n := strings.Count(logged.String(), "up to date, once"); n != 1 || !strings.Contains(logged.String(), fmt.Sprintf("from=3 to=%d", SchemaVersion)) {
			t.Errorf("the upgrade said %d times what it did: %q", n, logged.String())
		}
		var path, name string
		var sent int64
		var data []byte
		err := s.db.QueryRowContext(ctx, `SELECT f.path, f.sent, c.data, t.name FROM push_files f JOIN push_chunks c ON c.file_id = f.id, tokens t`).Scan(&path, &sent, &data, &name)
		if err != nil || path != "/p.jsonl" || sent != 21 || !bytes.Equal(data, chunk) || name != "alice" {
			t.Errorf("after the migrations: %q %d %q %q %v", path, sent, data, name, err)
		}
	})
}

// TestTextsMigrate: a store of schema 4 (PostgreSQL: texts in a table of
// their own) starts afresh at schema 9 and finds the same once the
// files are saved again.
func TestTextsMigrate(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		off := func(pos int) bool { return pos%3 == 0 }
		var saves []*Save
		for _, p := range []string{"/r/a.jsonl", "/r/b.jsonl"} {
			sv, _ := bigFile(p, 2000, off)
			if err := s.Save(ctx, sv); err != nil {
				t.Fatal(err)
			}
			saves = append(saves, sv)
		}
		queries := []Query{{Needles: []string{"common"}, Limit: 500}, {Needles: []string{"rare"}, Limit: 3},
			{Needles: []string{"sparse", "entry 1"}, OffPath: true, Limit: 7}, {Roles: []string{"user"}, Limit: 900}}
		found := func(q Query) string { return ids(pages(t, s, q)) } // numbered afresh
		var before []string
		for _, q := range queries {
			before = append(before, found(q))
		}
		remigrate(t, s, 4)
		afresh(t, s, saves...)
		for k, q := range queries {
			if got := found(q); got != before[k] {
				t.Errorf("%+v after the migration:\n got %.300s\nwant %.300s", q, got, before[k])
			}
		}
		// New texts are numbered after the old and found first (entries 0,
		// 997 and 1994 of each file are rare, and now c's 0 and 2).
		more, _ := bigFile("/r/c.jsonl", 3, off)
		more.Docs[2].Text = "entry common rare"
		if err := s.Save(ctx, more); err != nil {
			t.Fatal(err)
		}
		got := held(pages(t, s, Query{Needles: []string{"rare"}, Limit: 3}), []string{"rare"}, append(saves, more)...)
		if len(got) != 8 || got[0].Path != "/r/c.jsonl" || got[0].EntryID != "/r/c.jsonl#2" {
			t.Errorf("rare after a save: %+v", got)
		}
	})
}

// TestWordSets: PostgreSQL's trigram index covers each text's distinct
// words (a store of schema 5 starts afresh), and a needle narrows by its
// words of three characters or more (a phrase too: the store keeps no
// texts); SQLite narrows by some of a needle's trigrams. The caller checks
// the rest.
func TestWordSets(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", ""}, {"one", "one"}, {"a b a c b", "a b c"}, {" x  y x ", "x y"},
		{"ls -la ls -la: ok", "ls -la -la: ok"},
	} {
		if got := wordsOf(c.text); got != c.want {
			t.Errorf("addWords(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	for _, c := range []struct{ needles, words []string }{
		{[]string{"go test", "test ./...", "tests"}, []string{"test", "./...", "tests"}},
		{[]string{"is a", "ab"}, nil}, // no word to narrow by
		{[]string{"of the kind"}, []string{"the", "kind"}},
	} {
		if w := pgNeedles(c.needles); !slices.Equal(w, c.words) {
			t.Errorf("pgNeedles(%q) = %q; want %q", c.needles, w, c.words)
		}
	}
	each(t, func(t *testing.T, s *DB) {
		sv := &Save{File: file("/r/w.jsonl", 400)}
		for i, text := range []string{
			"the encoding is base64, the digest() returns base64",
			"base64 first, then the encoding",
			"nothing of the kind",
			"encoding encoding encoding",
		} {
			d := doc(int64(100*i), 0, fmt.Sprintf("e%d", i), "user", int64(i), text)
			d.Pos = i
			sv.Docs = append(sv.Docs, d)
		}
		for k := range sv.Docs { // a save a doc: a run of texts each (see TestTextRuns)
			one := *sv
			one.Docs = sv.Docs[:k+1]
			if err := s.Save(ctx, &one); err != nil {
				t.Fatal(err)
			}
		}
		stored := func() []string {
			var out []string
			rows, err := s.db.QueryContext(ctx, `SELECT words FROM texts ORDER BY hi`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var x string
				if err := rows.Scan(&x); err != nil {
					t.Fatal(err)
				}
				out = append(out, x)
			}
			return out
		}
		want := []string{"the encoding is base64, digest() returns base64", "base64 first, then the encoding", "nothing of the kind", "encoding"}
		if s.engine == Postgres {
			if got := stored(); !slices.Equal(got, want) {
				t.Errorf("stored %q, want %q", got, want)
			}
		}
		for _, c := range []struct {
			needles          []string
			sqlite, postgres []string
		}{
			{[]string{"ncoding is"}, []string{"e0"}, []string{"e3", "e1", "e0"}}, // PostgreSQL: by "ncoding"
			{[]string{"the encoding"}, []string{"e1", "e0"}, []string{"e1", "e0"}},
			{[]string{"encoding", "base64"}, []string{"e1", "e0"}, []string{"e1", "e0"}},
			{[]string{"4, the dig"}, []string{"e0"}, []string{"e0"}},
			{[]string{"base64 first"}, []string{"e1"}, []string{"e1"}},
			{[]string{"encoding base64"}, []string{"e0"}, []string{"e1", "e0"}}, // SQLite: some of its trigrams are in e0
			{[]string{"of the"}, []string{"e2"}, []string{"e2", "e1", "e0"}},
			{[]string{"kinds"}, nil, nil},
		} {
			want := c.sqlite
			if s.engine == Postgres {
				want = c.postgres
			}
			var got []string
			for _, x := range pages(t, s, Query{Needles: c.needles, Limit: 10}) {
				got = append(got, x.EntryID)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%q: %q, want %q", c.needles, got, want)
			}
		}
		if s.engine == Postgres {
			remigrate(t, s, 5)
			if got := stored(); len(got) > 0 {
				t.Errorf("after the migration: %q, want none", got)
			}
			afresh(t, s, sv) // one save: one run
			if got, want := stored(), []string{"the encoding is base64, digest() returns base64 first, then nothing of kind"}; !slices.Equal(got, want) {
				t.Errorf("saved again after the migration: %q, want %q", got, want)
			}
		}
	})
}

// TestTextIndexLater: a first build adds its texts without PostgreSQL's
// trigram index, made once they are in; searches find the same either
// way, and a store that holds texts keeps its index.
func TestTextIndexLater(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		indexed := func() bool {
			var n int
			if s.engine == SQLite {
				return false
			}
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema()
				AND indexname = 'texts_trgm'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n == 1
		}
		if err := s.TextIndex(ctx, false); err != nil || indexed() {
			t.Fatalf("an empty store: %v, indexed %v", err, indexed())
		}
		sv, _ := bigFile("/r/a.jsonl", 3000, func(int) bool { return false })
		if err := s.Save(ctx, sv); err != nil {
			t.Fatal(err)
		}
		q := Query{Needles: []string{"rare"}, Limit: 2}
		without := ids(held(pages(t, s, q), q.Needles, sv))
		if err := s.TextIndex(ctx, true); err != nil || indexed() != (s.engine == Postgres) {
			t.Fatalf("made: %v, indexed %v", err, indexed())
		}
		if s.engine == Postgres { // analyzed once made: the planner knows the texts
			var n int
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stats WHERE schemaname = current_schema()
				AND tablename = 'docs'`).Scan(&n); err != nil || n == 0 {
				t.Errorf("docs' statistics: %d columns (%v)", n, err)
			}
		}
		if got := ids(held(pages(t, s, q), q.Needles, sv)); got != without || got != "/r/a.jsonl#2991/0 /r/a.jsonl#1994/0 /r/a.jsonl#997/0 /r/a.jsonl#0/0" {
			t.Errorf("rare: %q indexed, %q before", got, without)
		}
		if err := s.TextIndex(ctx, false); err != nil || indexed() != (s.engine == Postgres) {
			t.Fatalf("a store holding texts: %v, indexed %v", err, indexed())
		}
	})
}

// wordsOf returns a text's word set, as addWords writes it.
func wordsOf(text string) string {
	var b strings.Builder
	addWords(&b, text, map[string]struct{}{})
	return b.String()
}

// TestTextRuns: PostgreSQL's rows of texts hold runs of at most textDocs
// docs numbered within textSpan, each run's distinct words once; every
// doc is in exactly one run, which its run gives.
func TestTextRuns(t *testing.T) {
	docs := make([]Doc, 20)
	ids := make([]int64, 20)
	for i := range docs {
		docs[i].Text = fmt.Sprintf("w%d shared", i%3)
		ids[i] = int64(100 + i)
	}
	ids[12], ids[13], ids[14] = 112, 300, 301 // another process's docs numbered between
	for i := 15; i < 20; i++ {
		ids[i] = int64(287 + i)
	}
	los, his, words, runs := textRuns(docs, ids)
	wantLo, wantHi := []int64{100, 108, 300}, []int64{107, 112, 306}
	if !slices.Equal(los, wantLo) || !slices.Equal(his, wantHi) {
		t.Fatalf("runs %v–%v, want %v–%v", los, his, wantLo, wantHi)
	}
	if words[0] != "w0 shared w1 w2" || words[2] != "w1 shared w2 w0" {
		t.Errorf("words %q", words)
	}
	for i, d := range docs {
		in := 0
		for k := range los {
			if los[k] <= ids[i] && ids[i] <= his[k] && strings.Contains(words[k], strings.Fields(d.Text)[0]) {
				in++
				if ids[i]+int64(runs[i]) != his[k] {
					t.Errorf("doc %d (%d): run %d, its run ends at %d", i, ids[i], runs[i], his[k])
				}
			}
		}
		if in != 1 {
			t.Errorf("doc %d (%d) in %d runs holding its words", i, ids[i], in)
		}
	}
	// Long texts: a run grows while its words are under textWords bytes.
	long := strings.Repeat("x", textWords/2)
	docs = []Doc{{Text: long + "a"}, {Text: long + "b"}, {Text: long + "c"}, {Text: "short"}, {Text: long + "d"}, {Text: "end"}}
	los, his, _, _ = textRuns(docs, []int64{1, 2, 3, 4, 5, 6})
	if wantLo, wantHi = []int64{1, 3, 6}, []int64{2, 5, 6}; !slices.Equal(los, wantLo) || !slices.Equal(his, wantHi) {
		t.Errorf("long texts: runs %v–%v, want %v–%v", los, his, wantLo, wantHi)
	}
}

// FuzzWordSet: every word pgNeedles gives for a substring of a normalized
// text is within the text's word set (so PostgreSQL's index finds it),
// and the set holds each word once.
func FuzzWordSet(f *testing.F) {
	for _, s := range []string{"the encoding is base64, the digest() returns base64", "a  b\tc\u00a0a", "ÉTÉ été x\x00y", "ls -la ls"} {
		f.Add(s, uint(0), uint(9))
	}
	f.Fuzz(func(t *testing.T, raw string, i, j uint) {
		text := PGText(search.Normalize(raw))
		if len(text) == 0 {
			return
		}
		a, b := int(i%uint(len(text))), int(j%uint(len(text)+1))
		if a > b {
			a, b = b, a
		}
		if !utf8.RuneStart(text[a]) || b < len(text) && !utf8.RuneStart(text[b]) {
			return
		}
		set := wordsOf(text)
		for _, w := range pgNeedles([]string{text[a:b]}) {
			if !strings.Contains(set, w) {
				t.Fatalf("%q holds %q, its word set %q does not hold %q", text, text[a:b], set, w)
			}
		}
		seen := map[string]bool{}
		for _, w := range strings.Split(set, " ") {
			if w == "" && set != "" || seen[w] {
				t.Fatalf("word set %q of %q: %q empty or twice", set, text, w)
			}
			seen[w] = true
		}
		for _, w := range strings.Fields(text) {
			if !seen[w] {
				t.Fatalf("word set %q of %q misses %q", set, text, w)
			}
		}
	})
}

// TestConcurrentSaves: files saved at once (PostgreSQL may number their
// docs in turn, so that runs of texts see other files' numbers between
// theirs) are each found whole, every doc once, by scans and by the
// trigram index alike.
func TestConcurrentSaves(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		none := func(int) bool { return false }
		var saves []*Save
		for k := range 4 {
			sv, _ := bigFile(fmt.Sprintf("/r/c%d.jsonl", k), 1500, none)
			saves = append(saves, sv)
		}
		errs := make(chan error, len(saves))
		for _, sv := range saves {
			go func() {
				var err error
				for start := 0; start < len(sv.Docs) && err == nil; start += 100 { // appends: many saves each
					one := *sv
					one.Docs = sv.Docs[:start+100]
					err = s.Save(ctx, &one)
				}
				errs <- err
			}()
		}
		for range saves {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if err := s.TextIndex(ctx, true); err != nil {
			t.Fatal(err)
		}
		for _, needle := range []string{"common", "sparse", "rare", "entry 1499"} {
			q := Query{Needles: []string{needle}, Any: true, Limit: 40}
			w := want(saves, func(_ *Save, d *Doc) bool { return strings.Contains(d.Text, needle) })
			got := held(pages(t, s, q), q.Needles, saves...)
			slices.SortFunc(got, func(a, b Candidate) int { return strings.Compare(a.EntryID, b.EntryID) })
			gotIDs, wantIDs := strings.Fields(ids(got)), strings.Fields(w)
			slices.Sort(wantIDs)
			if !slices.Equal(gotIDs, wantIDs) {
				t.Errorf("%s: %d found, want %d", needle, len(gotIDs), len(wantIDs))
			}
		}
	})
}

// TestSchemaSteps: a new store is at the latest schema and runs no step;
// stores of schema 10 and 11 start afresh on both engines (step 12's
// label checksums) and find again what is saved again.
func TestSchemaSteps(t *testing.T) {
	each(t, func(t *testing.T, s *DB) {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM schema_version`).Scan(&n); err != nil || n != SchemaVersion || SchemaVersion != 12 {
			t.Fatalf("a new store at %d (%v), want %d = 12", n, err, SchemaVersion)
		}
		sv, _ := bigFile("/r/a.jsonl", 1000, func(int) bool { return false })
		sv.Labels = []Label{{EntryID: "/r/a.jsonl#3", Text: "kept", Pos: 3}}
		for _, from := range []int{10, 11} {
			if err := s.Save(ctx, sv); err != nil {
				t.Fatal(err)
			}
			remigrate(t, s, from)
			afresh(t, s, sv)
			q := Query{Needles: []string{"rare"}, Limit: 10}
			if got := ids(held(pages(t, s, q), q.Needles, sv)); got != "/r/a.jsonl#997/0 /r/a.jsonl#0/0" {
				t.Errorf("rare after schema %d: %q", from, got)
			}
			if ls, bad, err := s.Labels(ctx, ""); err != nil || len(bad) != 0 || len(ls) != 1 || ls[0].Text != "kept" {
				t.Errorf("labels after schema %d: %+v %v %v", from, ls, bad, err)
			}
		}
	})
}

// TestUpgradeGivesBackRoom: an SQLite store whose index an upgrade makes
// again gives the old index's room back to the disk (the file shrinks).
func TestUpgradeGivesBackRoom(t *testing.T) {
	s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "index.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sv, _ := bigFile("/r/a.jsonl", 20000, func(int) bool { return false })
	if err := s.Save(ctx, sv); err != nil {
		t.Fatal(err)
	}
	full, err := s.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	remigrate(t, s, 9) // older than schemaBase: the index is made again, empty
	afresh(t, s)
	empty, err := s.Size(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if empty*4 > full {
		t.Errorf("the store takes %d bytes after the upgrade, %d before it: the old index's room was kept", empty, full)
	}
}
