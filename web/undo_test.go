package web

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRewindUndo: a rewind's card carries an Undo, a rewind back to the leaf
// before that pi would write itself; it is refused once pi moved on, and
// the answer draws the panel the page shows.
func TestRewindUndo(t *testing.T) {
	lib := openLib(t, demoRoot(t))
	h := newServer(t, lib, nil).Handler()
	rec := postForm(t, h, "/s/"+mainID+"/actions/rewind", url.Values{"entry": {"09b043aa"}, "expectLeaf": {"4638afcc"}})
	body := rec.Body.String()
	m := regexp.MustCompile(`<form class="act-form undo"[^>]*>\s*<input type="hidden" name="entry" value="4638afcc">\s*<input type="hidden" name="expectLeaf" value="([0-9a-f]+)">`).FindStringSubmatch(body)
	if rec.Code != 200 || m == nil || !strings.Contains(body, ">Undo</button>") {
		t.Fatalf("status %d, the rewind's card has no Undo back to 4638afcc:\n%s", rec.Code, body)
	}
	nid := m[1]
	if in := inspectOf(t, lib, mainID, ""); deref(in.LeafID) != nid {
		t.Fatalf("pi resumes from %s, the card undoes %s", deref(in.LeafID), nid)
	}
	undo := url.Values{"entry": {"4638afcc"}, "expectLeaf": {nid}, "undo": {"1"}, "panel": {"09b043aa"}}
	rec = postForm(t, h, "/s/"+mainID+"/actions/rewind", undo)
	body = rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, "Undone: pi resumes from 4638afcc again") || !strings.Contains(body, `id="entry-actions" class="entry-actions" data-ref="09b043aa"`) ||
		strings.Contains(body, ">Undo</button>") {
		t.Fatalf("the undo's answer (status %d):\n%s", rec.Code, body)
	}
	in := inspectOf(t, lib, mainID, "")
	if !slices.Contains(in.Path, "4638afcc") || slices.Contains(in.Path, "09b043aa") {
		t.Errorf("after the undo pi resumes from %s, path %v", deref(in.LeafID), in.Path)
	}
	// The same Undo again: pi moved on since, so it is refused and nothing is written.
	before := in.EntryCount
	rec = postForm(t, h, "/s/"+mainID+"/actions/rewind", undo)
	if !strings.Contains(rec.Body.String(), `class="outcome err"`) {
		t.Errorf("a stale undo was not refused:\n%s", rec.Body.String())
	}
	if after := inspectOf(t, lib, mainID, "").EntryCount; after != before {
		t.Errorf("a stale undo wrote: %d entries, were %d", after, before)
	}
}
