package web

// After the JSON API labels and rewinds a session, pi itself (its
// SessionManager, run by conformance/after-write.mjs on a copy of the file)
// must resume from the intended leaf with the intended label, and must not
// need to change a byte of what piweb wrote.
//
// Needs node and the pi package installed by `npm ci` in conformance/.
// Without them the test is skipped, unless PIWEB_REQUIRE_ORACLE=1.

import (
	"os"
	"slices"
	"testing"

	"github.com/piweb/piweb/internal/oracle"
)

func TestOracleAPIWrites(t *testing.T) {
	pi := oracle.AfterWrite(t)
	lib := openLib(t, demoRoot(t))
	srv := newServer(t, lib, nil).Handler()
	api := "/api/sessions/" + mainID
	file := sessionFile(t, lib, mainID)

	var label, rewind struct{ ID string }
	rec := postJSON(t, srv, api+"/label", `{"entryId":"a9522c9f","label":"where it started"}`)
	if rec.Code != 200 {
		t.Fatalf("label: status %d\n%s", rec.Code, rec.Body)
	}
	decode(t, rec, &label)
	rec = postJSON(t, srv, api+"/rewind", `{"entryId":"a9522c9f","summary":"Tried two fixes; starting over.","expectLeaf":"`+label.ID+`"}`)
	if rec.Code != 200 {
		t.Fatalf("rewind: status %d\n%s", rec.Code, rec.Body)
	}
	decode(t, rec, &rewind)

	r := pi(file)
	if deref(r.LeafID) != rewind.ID {
		t.Errorf("pi resumes from %s, want the rewind entry %s", deref(r.LeafID), rewind.ID)
	}
	if n := len(r.Path); n < 2 || r.Path[n-2] != "a9522c9f" {
		t.Errorf("pi's path %v does not end a9522c9f → %s", r.Path, rewind.ID)
	}
	if r.Labels["a9522c9f"] != "where it started" || r.Labels["09b043aa"] != "rejected idea" {
		t.Errorf("pi's labels %v", r.Labels)
	}
	if b, err := os.ReadFile(file); err != nil || r.File != string(b) {
		t.Errorf("pi changed the file when it opened it (%v)", err)
	}
	// piweb's own reading, served by the API, agrees.
	in := inspectOf(t, lib, mainID, "")
	if deref(in.LeafID) != deref(r.LeafID) || !slices.Equal(in.Path, r.Path) {
		t.Errorf("piweb: leaf %s path %v; pi: leaf %s path %v", deref(in.LeafID), in.Path, deref(r.LeafID), r.Path)
	}
}
