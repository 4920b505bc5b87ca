package share

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/piweb/piweb/internal/readtest"
)

func TestLabelOrder(t *testing.T) {
	lines := []string{
		`{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"}`,
		`{"type":"message","id":"A","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}`,
		`{"type":"message","id":"B","parentId":"A","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"b","timestamp":2}}`,
		`{"type":"message","id":"C","parentId":"B","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"c","timestamp":3}}`,
		`{"type":"label","id":"l1","parentId":"C","timestamp":"2025-01-01T00:00:04.000Z","targetId":"B","label":"b1"}`,
		`{"type":"label","id":"l2","parentId":"l1","timestamp":"2025-01-01T00:00:05.000Z","targetId":"A","label":"a1"}`,
		`{"type":"label","id":"l3","parentId":"l2","timestamp":"2025-01-01T00:00:06.000Z","targetId":"B","label":"b2"}`,
		`{"type":"label","id":"l4","parentId":"l3","timestamp":"2025-01-01T00:00:07.000Z","targetId":"A"}`,
		`{"type":"label","id":"l5","parentId":"l4","timestamp":"2025-01-01T00:00:08.000Z","targetId":"C","label":"c1"}`,
		`{"type":"label","id":"l6","parentId":"l5","timestamp":"2025-01-01T00:00:09.000Z","targetId":"A","label":"a2"}`,
		`{"type":"label","id":"l7","parentId":"l6","timestamp":"2025-01-01T00:00:10.000Z","targetId":"Z","label":""}`,
	}
	s, err := readtest.Parse(t, []byte(strings.Join(lines, "\n")+"\n"), "order")
	if err != nil {
		t.Fatal(err)
	}
	// B keeps its first place through its re-set; A's clear sends it to the back.
	if got, want := labelOrder(s), []string{"B", "C", "A"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	b, err := Branch(s, "C", Redact{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range b.Labels {
		got = append(got, l.Label)
	}
	if want := []string{"b2", "c1", "a2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("recreated labels %v, want %v", got, want)
	}
	if b.Entries[0].Label != "a2" || b.Entries[1].Label != "b2" || b.Entries[2].Label != "c1" {
		t.Errorf("entry labels %+v", b.Entries)
	}
}

func TestPiCwd(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	wd, _ := os.Getwd()
	tests := []struct{ in, want string }{
		{"/home/u/proj", "/home/u/proj"},
		{"/home/u/proj/", "/home/u/proj"},
		{"/home/u/a/../proj", "/home/u/proj"},
		{"~", home},
		{"~/proj", filepath.Join(home, "proj")},
		{"rel", filepath.Join(wd, "rel")},
		{"", wd},
	}
	for _, tt := range tests {
		if got, err := piCwd(tt.in); err != nil || got != tt.want {
			t.Errorf("piCwd(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
