package writer

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/readtest"
	"github.com/piweb/piweb/internal/sessiontest"
	"github.com/piweb/piweb/sessions"
)

// TestVerifiedIndex: a writer starts from the caller's index only when the
// file is still exactly what it indexed; any other change makes it read the
// file again, and the line it appends is right either way.
func TestVerifiedIndex(t *testing.T) {
	base := sessiontest.Lines(sessiontest.Header, sessiontest.User("a1", "", 1, "hi"), sessiontest.Asst("a2", "a1", 2, "yo"), sessiontest.User("a3", "a2", 3, "more"))
	later := func(t *testing.T, s *sessions.Session, p string) {
		at := s.ModTime.Add(time.Second)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	inPlace := func(old, new string) func(*testing.T, *sessions.Session, string) {
		return func(t *testing.T, s *sessions.Session, p string) {
			b := sessiontest.ReadFile(t, p)
			if len(old) != len(new) || !strings.Contains(string(b), old) {
				t.Fatalf("bad edit %q -> %q", old, new)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			later(t, s, p)
		}
	}
	// sneaky makes the same edit but puts the modification time back, so
	// only the line checks can notice it.
	sneaky := func(old, new string) func(*testing.T, *sessions.Session, string) {
		return func(t *testing.T, s *sessions.Session, p string) {
			inPlace(old, new)(t, s, p)
			if err := os.Chtimes(p, s.ModTime, s.ModTime); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		change func(*testing.T, *sessions.Session, string)
		fast   bool
		leaf   string // the parentId the label must get
	}{
		{"unchanged", func(*testing.T, *sessions.Session, string) {}, true, "a3"},
		{"appended since", func(t *testing.T, _ *sessions.Session, p string) {
			sessiontest.Append(t, p, sessiontest.User("a4", "a3", 4, "new")+"\n")
		}, false, "a4"},
		{"touched", later, false, "a3"},
		{"last line's id edited", inPlace(`"id":"a3"`, `"id":"b3"`), false, "b3"},
		{"target's id edited", inPlace(`"id":"a1"`, `"id":"b1"`), false, ""},
		{"header edited", inPlace(`"id":"s1"`, `"id":"s2"`), false, "a3"},
		{"last line's id edited, time kept", sneaky(`"id":"a3"`, `"id":"b3"`), false, "b3"},
		{"target's id edited, time kept", sneaky(`"id":"a1"`, `"id":"b1"`), false, ""},
		{"header edited, time kept", sneaky(`"id":"s1"`, `"id":"s2"`), false, "a3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, p := readtest.Load(t, base)
			tt.change(t, s, p)
			if got, _ := s.Verified(rootOf(s), []string{"a1"}); (got != nil) != tt.fast {
				t.Errorf("verified: %v, want %v", got != nil, tt.fast)
			} else if got != nil {
				got.Close()
			}
			entries, size := len(s.Entries), s.Size
			nid, err := label(s, "a1", "mark")
			if tt.leaf == "" {
				if err == nil {
					t.Fatalf("label on an id that is gone from the file: %s", nid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Entries) != entries || s.Size != size {
				t.Error("Label changed the caller's index")
			}
			fresh, err := sessions.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			i, ok := fresh.Lookup(nid)
			if !ok || fresh.Entries[i].ParentID != tt.leaf || fresh.LabelOf(readtest.Lookup(fresh, "a1")) != "mark" {
				t.Errorf("appended label %s: parent %q, label %q; want parent %q", nid, fresh.Entries[i].ParentID, fresh.LabelOf(readtest.Lookup(fresh, "a1")), tt.leaf)
			}
		})
	}
}
