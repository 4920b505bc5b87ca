package web

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/pitree"
	"github.com/piweb/piweb/sessions"
)

// searchRows returns the positions of the rows a tree search shows (the
// queries here match fewer rows than a window holds).
func searchRows(t testing.TB, h http.Handler, id, q string) []int {
	t.Helper()
	rec := get(t, h, "/s/"+id+"/rows?filter=all&q="+url.QueryEscape(q))
	if rec.Code != 200 {
		t.Errorf("search %q: status %d: %s", q, rec.Code, rec.Body)
		return nil
	}
	out := []int{}
	for _, m := range rowPos.FindAllStringSubmatch(rec.Body.String(), -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	if total, _ := strconv.Atoi(rec.Header().Get("X-Tree-Total")); total != len(out) {
		t.Errorf("search %q: %d rows of %d in the window", q, len(out), total)
	}
	return out
}

// wantRows lays the session out for q without a search index: the truth.
func wantRows(t testing.TB, lib *library.Library, id, q string) []int {
	t.Helper()
	out := []int{}
	err := lib.View(id, func(s *sessions.Session) error {
		r, err := s.Open()
		if err != nil {
			return err
		}
		defer r.Close()
		l, err := pitree.New(s, r, pitree.Options{Leaf: s.Leaf(), Filter: pitree.FilterAll, Search: q})
		if err != nil {
			return err
		}
		for _, row := range l.Rows(0, l.Len()) {
			out = append(out, row.Pos)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// appendUser appends a user message under parent to file.
func appendUser(t testing.TB, file, id, parent, text string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, `{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-02-01T00:00:00.000Z","message":{"role":"user","content":%q,"timestamp":1}}`+"\n",
		id, parent, text); err != nil {
		t.Fatal(err)
	}
}

// TestSearchIndexes searches a session as the page does while it grows and
// is rewritten: the answers are always those of a search that reads the
// file, the index is kept across appends, and only a few sessions keep one.
func TestSearchIndexes(t *testing.T) {
	root := t.TempDir()
	id, leaf := writeBigSession(t, root, 3000)
	file := filepath.Join(root, "--home-dev-big--", "2026-01-01T00-00-00-000Z_big.jsonl")
	lib := openLib(t, root)
	srv := newServer(t, lib, nil)
	h := srv.Handler()
	check := func(what, q string) {
		t.Helper()
		got, want := searchRows(t, h, id, q), wantRows(t, lib, id, q)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: search %q shows rows %v, want %v", what, q, got, want)
		}
	}
	for _, q := range []string{"question 12", "ANSWER 299", "Lorem 1234", "needle"} {
		check("first", q)
	}
	// The searches kept an index for the session (that it fills is pitree's test).
	x := srv.layouts.search.get(file)
	if x == nil {
		t.Fatal("no index after searches")
	}

	// Appended entries are searched, through the same index.
	appendUser(t, file, "n1", leaf, "the NEEDLE in the haystack")
	if c, err := lib.Refresh(file); err != nil || c.Kind == library.KindReload {
		t.Fatalf("Refresh: %+v, %v", c, err)
	}
	check("after an append", "needle")
	check("after an append", "question 12")
	if srv.layouts.searchIndex(file) != x {
		t.Error("an append replaced the session's index")
	}

	// A file rewritten in place (same size) is searched as it is now.
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bytes.ReplaceAll(b, []byte("question 2"), []byte("qqqqqqqq 2")), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	if c, err := lib.Refresh(file); err != nil || c.Kind != library.KindReload {
		t.Fatalf("Refresh after a rewrite: %+v, %v", c, err)
	}
	check("after a rewrite", "qqqqqqqq 29")
	check("after a rewrite", "question 29")
	check("after a rewrite", "needle")

	// Only the most recently searched sessions keep an index.
	for k := range searchedSessions + 1 {
		srv.layouts.searchIndex(fmt.Sprintf("other-%d", k))
	}
	if got := len(srv.layouts.search.m); got != searchedSessions {
		t.Errorf("%d sessions keep an index, want %d", got, searchedSessions)
	}
	if srv.layouts.searchIndex(file) == x {
		t.Error("the least recently searched session kept its index")
	}
}

// TestSearchIndexesConcurrent searches one session from several requests
// while entries are appended (run with -race).
func TestSearchIndexesConcurrent(t *testing.T) {
	root := t.TempDir()
	id, leaf := writeBigSession(t, root, 1500)
	file := filepath.Join(root, "--home-dev-big--", "2026-01-01T00-00-00-000Z_big.jsonl")
	lib := openLib(t, root)
	h := newServer(t, lib, nil).Handler()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 15 {
				q := fmt.Sprintf("question %d", 300+3*(20*g+k)) // a user message
				if got := searchRows(t, h, id, q); len(got) == 0 {
					t.Errorf("search %q found nothing", q)
				}
			}
		})
	}
	wg.Go(func() {
		parent := leaf
		for k := range 20 {
			n := fmt.Sprintf("x%d", k)
			appendUser(t, file, n, parent, "question appended "+n)
			if _, err := lib.Refresh(file); err != nil {
				t.Error(err)
				return
			}
			parent = n
		}
	})
	wg.Wait()
	got, want := searchRows(t, h, id, "appended"), wantRows(t, lib, id, "appended")
	if !slices.Equal(got, want) || len(got) != 20 {
		t.Errorf("after the appends: rows %v, want %v (20)", got, want)
	}
}
