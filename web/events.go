package web

import (
	"context"
	"errors"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/piweb/piweb/library"
	"github.com/piweb/piweb/sessions"
	"github.com/piweb/piweb/views"
)

// maxDeltaRows bounds a live tree change; a bigger one makes the page reload its rows.
const maxDeltaRows = 1000

// follow runs a live stream: it subscribes to the events, calls start once
// subscribed (so nothing is missed), then handle for each event, and sends
// heartbeats until the client leaves or the server closes.
func (s *Server) follow(c echo.Context, start func(*stream) error, handle func(*stream, library.Change) error) error {
	ch, cancel := s.lib.Subscribe()
	defer cancel()
	s.streams.Add(1)
	defer s.streams.Add(-1)
	w := startStream(c, s.opt.WriteIdle)
	if err := start(w); err != nil {
		return s.streamEnd(c, err)
	}
	tick := time.NewTicker(s.opt.Heartbeat)
	defer tick.Stop()
	ctx := c.Request().Context()
	for {
		select {
		case <-ctx.Done():
			return s.streamEnd(c, w.out.err) // nil, or the write that failed (which ends the request too)
		case <-s.quit:
			return nil
		case <-tick.C:
			if err := w.comment("ping"); err != nil {
				return s.streamEnd(c, err)
			}
		case ev, ok := <-ch:
			if !ok {
				return nil // the watcher stopped
			}
			if err := handle(w, ev); err != nil {
				return s.streamEnd(c, err)
			}
		}
	}
}

// streamEnd logs why a stream stopped; a client that left is no error.
func (s *Server) streamEnd(c echo.Context, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		s.log.Warn("a client read nothing of a live stream for a while: dropped", "path", c.Request().URL.Path, "idle", s.opt.WriteIdle)
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, io.ErrClosedPipe) || c.Request().Context().Err() != nil {
		return nil
	}
	s.log.Warn("event stream ended", "path", c.Request().URL.Path, "err", err)
	return nil
}

// listEvents streams changes to the sessions page: a session row to add or
// redraw ("row"), or the id of a row to drop ("gone"), each followed by the
// header of its project with the project's new totals ("group"; every
// project's after a drop, whose project the stream may not know).
func (s *Server) listEvents(c echo.Context) error {
	p := s.listQuery(c)
	ctx := c.Request().Context()
	heads := func(w *stream, group *string) error {
		for _, g := range s.groupHeads(p, group) {
			html, err := htmlOf(ctx, views.ProjectHead(g))
			if err != nil {
				return err
			}
			if err := w.send("group", html); err != nil {
				return err
			}
		}
		return nil
	}
	return s.follow(c, func(*stream) error { return nil }, func(w *stream, ev library.Change) error {
		if ev.Key == "" {
			return nil
		}
		gone := domID("s", ev.Key)
		if ev.Kind == library.KindRemove {
			if err := w.send("gone", gone); err != nil {
				return err
			}
			return heads(w, nil)
		}
		if ev.Kind == library.KindError {
			return nil
		}
		item, found := s.listItem(p, ev.Key)
		if !found || !p.matches(&item.meta) {
			if err := w.send("gone", gone); err != nil {
				return err
			}
			return heads(w, nil)
		}
		html, err := htmlOf(ctx, views.SessionRow(item.view))
		if err != nil {
			return err
		}
		if err := w.send("row", html); err != nil {
			return err
		}
		group := p.group(&item.meta)
		return heads(w, &group)
	})
}

type listEntry struct {
	meta sessions.Meta
	view views.SessionItem
}

// listItem returns the sessions page row of the session with key.
func (s *Server) listItem(p listParams, key string) (listEntry, bool) {
	m, err := s.lib.Meta(key)
	if err != nil {
		return listEntry{}, false
	}
	byKey := map[string]*sessions.Meta{}
	if pm, err := s.lib.Meta(m.ParentKey); err == nil && m.ParentKey != "" {
		byKey[pm.Key] = &pm
	}
	return listEntry{meta: m, view: p.item(&m, byKey)}, true
}

// sessionEvents streams changes to one session's tree as it is shown with
// the page's state: "delta" (rows to drop, redraw and insert), "reset"
// (reload the rows), "stats" (the header counts) and "gone".
func (s *Server) sessionEvents(c echo.Context) error {
	id := sessionKey(c)
	st, err := treeState(c)
	if err != nil {
		return err
	}
	if err := s.lib.View(id, func(*sessions.Session) error { return nil }); err != nil {
		return err
	}
	ctx := c.Request().Context()
	var snap snapshot
	start := func(w *stream) error {
		var ver string
		var stats views.SessionStats
		err := s.view(id, func(ss *sessions.Session, r *sessions.Reader) error {
			t, err := s.layout(ss, r, st)
			if err != nil {
				return err
			}
			snap, ver, stats = takeSnapshot(t), version(ss), s.sessionHeader(id, ss).Stats
			snap.gen = ss.Gen()
			return s.statsHeader(&stats, ss, r)
		})
		if err != nil {
			return err
		}
		if c.QueryParam("v") == ver {
			return w.send("hello", ver)
		}
		// It changed since the page was drawn (or since a hidden tab let go of
		// its stream): new counts, then the rows again.
		if html, err := htmlOf(ctx, views.SessionStatsView(stats)); err != nil {
			return err
		} else if err := w.send("stats", html); err != nil {
			return err
		}
		return w.send("reset", ver)
	}
	state := stateKey(st)
	return s.follow(c, start, func(w *stream, ev library.Change) error {
		if ev.Key != id || ev.Kind == library.KindError {
			return nil
		}
		if ev.Kind == library.KindRemove {
			return w.send("gone", "")
		}
		// Every stream with this state at this version gets the same answer
		// to this change: the first to ask computes it, the others share it.
		k := liveKey{key: id, state: state, from: snap.gen, append: ev.Kind == library.KindAppend}
		step := s.steps.getOrPut(k, func() *liveStep { return &liveStep{} })
		step.once.Do(func() { step.compute(context.Background(), s, id, st, &snap, ev.Kind == library.KindAppend) }) // not the asking stream's context: the others share the answer
		s.steps.setCost(k, step.bytes())
		var pe *pageError
		switch {
		case errors.As(step.err, &pe) && pe.status == http.StatusNotFound:
			return w.send("gone", "") // the session, or the state's leaf, is no longer there
		case step.err != nil:
			return step.err
		}
		snap = *step.snap
		if err := w.send("stats", step.stats); err != nil {
			return err
		}
		switch {
		case step.reset:
			return w.send("reset", step.ver)
		case step.delta == "":
			return nil
		}
		return w.send("delta", step.delta)
	})
}

// liveKey names one change as a stream sees it: the session, the tree's
// state, the version the stream showed and whether the change was an append.
type liveKey struct {
	key, state string
	from       uint64
	append     bool
}

// liveStep is the answer to one change for every stream that showed the
// same state at the same version: computed once.
type liveStep struct {
	once  sync.Once
	err   error
	snap  *snapshot // the rows after the change
	ver   string
	stats string // the header's counts, as HTML
	delta string // the rows that changed, as HTML; "" for none
	reset bool   // the page reloads its rows instead
}

// compute lays the tree out after the change and diffs it with the rows
// the streams showed (old).
func (step *liveStep) compute(ctx context.Context, s *Server, id string, st views.TreeState, old *snapshot, isAppend bool) {
	var delta *views.TreeDelta
	var stats views.SessionStats
	step.err = s.view(id, func(ss *sessions.Session, r *sessions.Reader) error {
		t, err := s.layout(ss, r, st)
		if err != nil {
			return err
		}
		next := takeSnapshot(t)
		next.gen = ss.Gen()
		if isAppend {
			if delta, err = t.delta(r, *old, next); err != nil {
				return err
			}
		}
		step.snap, step.ver, stats = &next, version(ss), s.sessionHeader(id, ss).Stats
		return s.statsHeader(&stats, ss, r)
	})
	if step.err != nil {
		return
	}
	if step.stats, step.err = htmlOf(ctx, views.SessionStatsView(stats)); step.err != nil {
		return
	}
	switch {
	case delta == nil:
		step.reset = true
	case len(delta.Remove)+len(delta.Replace)+len(delta.Insert) > 0:
		step.delta, step.err = htmlOf(ctx, views.TreeDeltaView(*delta))
	}
}

// liveKept is how many answers the server keeps for the streams that
// have not asked yet, and liveBudget how many bytes they may take (a step
// keeps the rows of its layout: 1.6 MB for a 100k-entry tree, whose
// appends would otherwise keep 256 of them): a stream asks within moments
// of the change, so only the latest few matter.
const (
	liveKept   = 256
	liveBudget = 32 << 20
)

// bytes estimates what a computed step keeps.
func (step *liveStep) bytes() int64 {
	n := 256 + int64(len(step.delta)+len(step.stats)+len(step.ver))
	if step.snap != nil {
		n += 16 * int64(len(step.snap.rows))
	}
	return n
}

// stateKey is a tree state as one string, for keys.
func stateKey(st views.TreeState) string {
	return st.Filter + "\x00" + st.Search + "\x00" + strings.Join(st.Folds, ",") + "\x00" + st.Leaf + "\x00" + strings.Join(st.Open, ",")
}

// snapshot is the rows a page draws (a closed run of settings rows as its
// first row), each with a hash of how it looks.
type snapshot struct {
	rows  []rowSig
	leaf  int    // entry of the row marked "← active", -1 for none
	gen   uint64 // the session's generation it was taken at
	total int    // rows in the layout (the tree's count)
}

type rowSig struct {
	pos int32
	row int32 // its row in the layout
	sig uint64
}

func takeSnapshot(t *tree) snapshot {
	n := t.lay.Len()
	rows := t.lay.Rows(0, n)
	out := make([]rowSig, 0, n)
	h := fnv.New64a()
	var buf []byte
	for k := 0; k < n; k = t.next(k) {
		r := &rows[k]
		parent := -1
		if p := t.lay.Parent(k); p >= 0 {
			parent = rows[p].Pos
		}
		buf = buf[:0]
		buf = strconv.AppendInt(buf, int64(parent), 10)
		buf = strconv.AppendInt(append(buf, ' '), int64(len(t.lay.Children(k))), 10)
		buf = strconv.AppendInt(append(buf, ' '), int64(len(t.s.Children(r.Pos))), 10)
		buf = strconv.AppendBool(append(buf, ' '), r.Active)
		buf = strconv.AppendBool(append(buf, ' '), k == t.leafRow)
		buf = strconv.AppendBool(append(buf, ' '), k == t.resumeRow)
		buf = strconv.AppendBool(append(buf, ' '), r.Foldable)
		buf = append(append(buf, ' '), r.Prefix()...)
		buf = append(append(buf, 0), r.Label...)
		if sp, _ := spent(t.s, t.ledger, r.Pos, parent); sp != "" {
			buf = append(append(buf, 0), sp...) // what a branch cost grows as pi appends to it
		}
		if l := t.s.LabelEntry(t.s.Entries[r.Pos].ID); r.Labeled && l >= 0 {
			buf = strconv.AppendInt(append(buf, 0), int64(l), 10) // a label set again, maybe to the same text, has a new time
		}
		if run, ok := t.lay.RunAt(k); ok && run.Start == k {
			buf = strconv.AppendInt(append(buf, 0), int64(run.Len()), 10) // a run's count grows as pi appends to it
			buf = strconv.AppendBool(buf, run.Model)
		}
		h.Reset()
		h.Write(buf)
		out = append(out, rowSig{pos: int32(r.Pos), row: int32(k), sig: h.Sum64()})
	}
	leaf := -1
	if t.leafRow >= 0 {
		leaf = rows[t.drawn(t.leafRow)].Pos
	}
	return snapshot{rows: out, leaf: leaf, total: n}
}

// delta computes the change from snapshot old to cur as rows to drop, redraw
// and insert; nil when the rows moved around or too many changed.
func (t *tree) delta(r *sessions.Reader, old, cur snapshot) (*views.TreeDelta, error) {
	idx := make([]int32, len(t.s.Entries))
	for i := range idx {
		idx[i] = -1
	}
	for k, row := range cur.rows {
		idx[row.pos] = int32(k)
	}
	seen := make([]bool, len(cur.rows))
	d := &views.TreeDelta{OldLeaf: old.leaf, NewLeaf: cur.leaf, Total: cur.total}
	var changed []int
	last := -1
	for _, o := range old.rows {
		k := -1
		if int(o.pos) < len(idx) {
			k = int(idx[o.pos])
		}
		switch {
		case k < 0:
			d.Remove = append(d.Remove, int(o.pos))
			continue
		case k < last:
			return nil, nil // rows moved: the page reloads them
		}
		last, seen[k] = k, true
		if cur.rows[k].sig != o.sig {
			changed = append(changed, k)
		}
	}
	budget := maxDeltaRows - len(changed)
	for k := 0; k < len(cur.rows); k++ {
		if seen[k] {
			continue
		}
		j := k
		for j < len(cur.rows) && !seen[j] {
			j++
		}
		if budget -= j - k; budget < 0 {
			return nil, nil
		}
		ks := make([]int, 0, j-k)
		for _, c := range cur.rows[k:j] {
			ks = append(ks, int(c.row))
		}
		rows, err := t.views(r, ks)
		if err != nil {
			return nil, err
		}
		after := -1
		if k > 0 {
			after = int(cur.rows[k-1].pos)
		}
		d.Insert = append(d.Insert, views.RowRun{After: after, Rows: rows})
		k = j
	}
	for _, k := range changed {
		rows, err := t.views(r, []int{int(cur.rows[k].row)})
		if err != nil {
			return nil, err
		}
		d.Replace = append(d.Replace, rows...)
	}
	return d, nil
}
