package usage

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/storetest"
	"github.com/piweb/piweb/store"
)

var ctx = context.Background()

// each runs test against every engine the machine has, each with a new
// store that keeps the usage tables.
func each(t *testing.T, test func(t *testing.T, s *store.DB)) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			s, err := store.Open(ctx, e.DSN, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			s.SetHook(Tables{})
			test(t, s)
		})
	}
}

// The usage tests keep a model of session files (their entries that
// count, which are on the path, their headers' parentSession) and check
// after every save, rewind and removal, made in random orders, that the
// store's sums are those a from-scratch count of the model gives.

// ment is one entry that counts; copies share it.
type ment struct {
	id      string
	ts      int64
	model   string
	tally   Sums
	errored bool
	aborted bool
}

// mfile is a session file of the model.
type mfile struct {
	machine, path, parent string
	ents                  []*ment
	active                []bool
	present               bool
	saved                 int // entries the store holds
}

func (f *mfile) session() string { return "k-" + f.path }

func (f *mfile) places() []byte {
	out := make([]byte, (len(f.ents)+3)/4)
	for i, on := range f.active {
		if on {
			out[i/4] |= 1 << (2 * (i % 4))
		}
	}
	return out
}

// rowsFrom returns the records of entries from position from on.
func (f *mfile) rowsFrom(from int) []Record {
	var out []Record
	for i := from; i < len(f.ents); i++ {
		e := f.ents[i]
		out = append(out, Record{Off: int64(100 * i), Pos: i, ID: e.id, Time: e.ts, Start: time.UnixMilli(e.ts / 900_000 * 900_000).UTC(),
			Model: e.model, Sums: e.tally, Errored: e.errored, Aborted: e.aborted})
	}
	return out
}

func (f *mfile) save(reset bool) *store.Save {
	from := f.saved
	if reset {
		from = 0
	}
	us := &Update{Session: f.session(), Link: Link{Path: f.path, Name: path.Base(f.path)}, Records: f.rowsFrom(from)}
	if f.parent != "" {
		us.Parent, us.ParentName = f.parent, path.Base(f.parent)
	}
	sv := &store.Save{File: store.File{Machine: f.machine, Path: f.path, Stamp: store.Stamp{Size: int64(len(f.ents))}, SessionID: "id-" + path.Base(f.path),
		Project: "proj", Meta: []byte(`{}`)}, Reset: reset, Places: f.places(), Extra: us}
	f.saved, f.present = len(f.ents), true
	return sv
}

// sumID names one sum.
type sumID struct {
	machine, session string
	bucket           int64
	model            string
}

type sumVal struct {
	all, abandoned  Sums
	errors, aborted int64
}

// reference counts the present files of the model from scratch, as
// usage.Files does.
func reference(files []*mfile) map[sumID]sumVal {
	var fs []*mfile
	for _, f := range files {
		if f.present {
			fs = append(fs, f)
		}
	}
	type mk struct{ machine, s string }
	byPath, byName, names := map[mk]int{}, map[mk]int{}, map[mk]int{}
	for k, f := range fs {
		byPath[mk{f.machine, f.path}] = k
		byName[mk{f.machine, path.Base(f.path)}] = k
		names[mk{f.machine, path.Base(f.path)}]++
	}
	parent := make([]int, len(fs))
	for k, f := range fs {
		parent[k] = -1
		if f.parent == "" {
			continue
		}
		if j, ok := byPath[mk{f.machine, f.parent}]; ok && j != k {
			parent[k] = j
		} else if n := (mk{f.machine, path.Base(f.parent)}); names[n] == 1 && byName[n] != k {
			parent[k] = byName[n]
		}
	}
	// Loops are cut at their smallest path.
	for k := range fs {
		seen := map[int]bool{}
		for v := k; v >= 0; v = parent[v] {
			if seen[v] {
				cut := v
				for w := parent[v]; w != v; w = parent[w] {
					if fs[w].path < fs[cut].path {
						cut = w
					}
				}
				parent[cut] = -1
				break
			}
			seen[v] = true
		}
	}
	copied := map[[2]int]bool{}
	marked := map[[2]int]bool{}
	for k, f := range fs {
		var up []int
		for p := parent[k]; p >= 0; p = parent[p] {
			up = append(up, p)
		}
		for i, e := range f.ents {
			if e.id == "" {
				continue
			}
			for a := len(up) - 1; a >= 0; a-- {
				j := up[a]
				at := -1
				for x, o := range fs[j].ents {
					if o.id == e.id && o.ts == e.ts {
						at = x
					}
				}
				if at < 0 {
					continue
				}
				copied[[2]int{k, i}] = true
				if f.active[i] {
					marked[[2]int{j, at}] = true
				}
				break
			}
		}
	}
	out := map[sumID]sumVal{}
	for k, f := range fs {
		for i, e := range f.ents {
			if copied[[2]int{k, i}] {
				continue
			}
			id := sumID{f.machine, f.session(), e.ts / 900_000 * 900_000, e.model}
			v := out[id]
			v.all.Add(e.tally)
			if !f.active[i] && !marked[[2]int{k, i}] {
				v.abandoned.Add(e.tally)
			}
			if e.errored {
				v.errors++
			}
			if e.aborted {
				v.aborted++
			}
			out[id] = v
		}
	}
	return out
}

// stored returns the store's sums, as reference does.
func stored(t *testing.T, s *store.DB) map[sumID]sumVal {
	t.Helper()
	sums, err := Stored{s}.UsageSums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[sumID]sumVal{}
	for _, r := range sums {
		id := sumID{r.Machine, r.Session, r.Start.UnixMilli(), r.Model}
		if _, ok := out[id]; ok {
			t.Errorf("two sums of %+v", id)
		}
		out[id] = sumVal{r.Sums, r.Abandoned, r.Errors, r.Aborted}
	}
	return out
}

// diff describes how got differs from want ("" when it does not).
func diff(got, want map[sumID]sumVal) string {
	var out []string
	for id, w := range want {
		if g, ok := got[id]; !ok || g != w {
			out = append(out, fmt.Sprintf("%+v: got %+v, want %+v", id, g, w))
		}
	}
	for id, g := range got {
		if _, ok := want[id]; !ok {
			out = append(out, fmt.Sprintf("%+v: got %+v, want none", id, g))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// family makes the model's files: a session, its forks and a fork of a
// fork, a fork that names its source by a path of another machine, a
// second file of the source's name (which makes that name ambiguous), a
// file on another machine whose header names the source, two files whose
// headers name each other, and a file outside every lineage.
func family(r *rand.Rand) []*mfile {
	n := 0
	ent := func() *ment {
		n++
		e := &ment{id: fmt.Sprintf("e%04x", n), ts: 1_700_000_000_000 + int64(n)*(300_000+int64(r.Intn(400_000))),
			model: []string{"a/x", "b/y", "Tools/summaries"}[r.Intn(3)],
			tally: Sums{Input: int64(r.Intn(1000)), Output: int64(r.Intn(100)), CacheRead: int64(r.Intn(5000)), CacheWrite: int64(r.Intn(50)),
				Cost: float64(r.Intn(512)) / 64}}
		if e.model != "Tools/summaries" {
			e.tally.Turns = 1
			e.errored = r.Intn(8) == 0
			e.aborted = !e.errored && r.Intn(8) == 0
		}
		if r.Intn(20) == 0 {
			e.id = "" // an entry without an id is never a copy
		}
		return e
	}
	own := func(k int) []*ment {
		var out []*ment
		for range k {
			out = append(out, ent())
		}
		return out
	}
	fork := func(src *mfile, at int, p, parent string) *mfile {
		f := &mfile{path: p, parent: parent, ents: append(slices.Clone(src.ents[:at]), own(3+r.Intn(6))...)}
		return f
	}
	a := &mfile{path: "/r/p1/a.jsonl", ents: own(12 + r.Intn(10))}
	b := fork(a, 6, "/r/p1/b.jsonl", a.path)
	c := fork(b, len(b.ents)-2, "/r/p2/c.jsonl", b.path)
	d := fork(a, 4, "/r/p2/d.jsonl", "/Users/x/.pi/agent/sessions/p1/a.jsonl") // by name
	a2 := &mfile{path: "/r/p3/a.jsonl", ents: own(3)}
	other := fork(a, 5, "/r/p1/o.jsonl", a.path)
	other.machine = "far"
	l1 := &mfile{path: "/r/p4/l1.jsonl", ents: own(5)}
	l2 := fork(l1, 5, "/r/p4/l2.jsonl", l1.path)
	l1.parent = l2.path
	e := &mfile{path: "/r/p5/e.jsonl", ents: own(8)}
	files := []*mfile{a, b, c, d, a2, other, l1, l2, e}
	for _, f := range files {
		f.active = make([]bool, len(f.ents))
		for i := range f.active {
			f.active[i] = r.Intn(3) > 0
		}
	}
	return files
}

// TestUsageLineage saves, rewinds, grows, reads again and removes the
// model's files in random orders, and checks the store's sums against a
// count from scratch after every step.
func TestUsageLineage(t *testing.T) {
	each(t, func(t *testing.T, s *store.DB) {
		for seed := range int64(12) {
			r := rand.New(rand.NewSource(seed))
			files := family(r)
			newID := 0
			check := func(step string) {
				t.Helper()
				if d := diff(stored(t, s), reference(files)); d != "" {
					t.Fatalf("seed %d, after %s:\n%s", seed, step, d)
				}
			}
			// Every file first, in a random order (a fork may come before its source).
			for _, k := range r.Perm(len(files)) {
				if err := s.Save(ctx, files[k].save(false)); err != nil {
					t.Fatal(err)
				}
				check("saving " + files[k].path)
			}
			for step := range 60 {
				f := files[r.Intn(len(files))]
				var what string
				var err error
				switch op := r.Intn(6); {
				case !f.present:
					what = "saving it again"
					err = s.Save(ctx, f.save(false))
				case op == 0: // pi appended entries, some on a new branch
					what = "an append"
					for range 1 + r.Intn(3) {
						newID++
						e := &ment{id: fmt.Sprintf("n%04d", newID), ts: 1_800_000_000_000 + int64(newID)*600_000, model: "a/x", tally: Sums{Turns: 1, Input: 7, Cost: 0.125}}
						f.ents = append(f.ents, e)
						f.active = append(f.active, true)
					}
					fallthrough
				case op == 1: // a rewind: entries move on or off the path
					what += " a rewind"
					for i := range f.active {
						if r.Intn(4) == 0 {
							f.active[i] = !f.active[i]
						}
					}
					err = s.Save(ctx, f.save(false))
				case op == 2:
					what = "reading it again"
					err = s.Save(ctx, f.save(true))
				case op == 3:
					what = "the same save twice"
					f.saved = max(0, f.saved-2)
					sv := f.save(false)
					err = s.SaveMany(ctx, []*store.Save{sv, sv})
				case op == 4:
					what = "removing it"
					err = s.Remove(ctx, f.machine, f.path)
					f.present, f.saved = false, 0
				default:
					what = "a save without usage"
					sv := f.save(false)
					sv.Extra = nil
					err = s.Save(ctx, sv)
				}
				if err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("step %d: %s of %s", step, what, f.path))
			}
			// Every file removed: nothing is left (the next seed starts empty).
			for _, f := range files {
				if err := s.Remove(ctx, f.machine, f.path); err != nil {
					t.Fatal(err)
				}
				f.present = false
			}
			check("removing every file")
			for _, table := range []string{"usage", "usage_sums", "usage_files"} {
				var n int
				if err := s.Use(ctx, func(db *sql.DB) error {
					return db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n)
				}); err != nil || n != 0 {
					t.Fatalf("%s holds %d rows (%v)", table, n, err)
				}
			}
		}
	})
}

// TestUsageForkOrder: a fork counts only its own entries whichever of it
// and its source is saved first, and all of them once the source is gone;
// a branch rewound away in the source and resumed in the fork is not
// abandoned.
func TestUsageForkOrder(t *testing.T) {
	each(t, func(t *testing.T, s *store.DB) {
		e := func(id string, cost float64) *ment {
			return &ment{id: id, ts: 1_700_000_000_000, model: "a/x", tally: Sums{Turns: 1, Cost: cost}}
		}
		a1, a2, a3 := e("a1", 1), e("a2", 2), e("a3", 4)
		src := &mfile{path: "/r/src.jsonl", ents: []*ment{a1, a2, a3}, active: []bool{true, false, false}}
		fork := &mfile{path: "/r/fork.jsonl", parent: src.path, ents: []*ment{a1, a2, e("f1", 8)}, active: []bool{true, true, true}}
		total := func() (all, abandoned float64) {
			for _, v := range stored(t, s) {
				all += v.all.Cost
				abandoned += v.abandoned.Cost
			}
			return
		}
		for _, order := range [][]*mfile{{src, fork}, {fork, src}} {
			for _, f := range order {
				if err := s.Save(ctx, f.save(true)); err != nil {
					t.Fatal(err)
				}
			}
			// a2 is off the path in the source, on it in the fork: resumed; a3 is abandoned.
			if all, ab := total(); all != 15 || ab != 4 {
				t.Errorf("saved %s first: $%v, $%v abandoned; want $15, $4", order[0].path, all, ab)
			}
			if err := s.Remove(ctx, "", src.path); err != nil {
				t.Fatal(err)
			}
			if all, ab := total(); all != 11 || ab != 0 {
				t.Errorf("the source gone: $%v, $%v abandoned; want the fork's $11, $0", all, ab)
			}
			if err := s.Remove(ctx, "", fork.path); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestUsageConcurrentSaves: a source and its fork saved at the same time
// by two transactions (two workers, or two processes sharing a store)
// count each entry once.
func TestUsageConcurrentSaves(t *testing.T) {
	each(t, func(t *testing.T, s *store.DB) {
		r := rand.New(rand.NewSource(1))
		var files []*mfile
		for round := range 30 {
			fam := family(r)
			src, fork := fam[0], fam[1]
			src.path = fmt.Sprintf("/r/c%d/src.jsonl", round)
			fork.path, fork.parent = fmt.Sprintf("/r/c%d/fork.jsonl", round), src.path
			files = append(files, src, fork)
			a, b := src.save(false), fork.save(false)
			errs := make(chan error, 2)
			go func() { errs <- s.Save(ctx, a) }()
			go func() { errs <- s.Save(ctx, b) }()
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if d := diff(stored(t, s), reference(files)); d != "" {
				t.Fatalf("round %d:\n%s", round, d)
			}
		}
	})
}

// TestUsageVersion: the number changes with every change to usage, and
// only then.
func TestUsageVersion(t *testing.T) {
	each(t, func(t *testing.T, s *store.DB) {
		version := func() int64 {
			t.Helper()
			v, err := Stored{s}.UsageVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		f := &mfile{path: "/r/v.jsonl", ents: []*ment{{id: "v1", ts: 1, model: "a/x", tally: Sums{Turns: 1, Cost: 1}}}, active: []bool{true}}
		v0 := version()
		if err := s.Save(ctx, f.save(false)); err != nil {
			t.Fatal(err)
		}
		v1 := version()
		if _, err := (Stored{s}).UsageSums(ctx); err != nil || v1 == v0 || version() != v1 {
			t.Errorf("a save: %d → %d, then %d after a read (%v)", v0, v1, version(), err)
		}
		if err := s.Save(ctx, &store.Save{File: store.File{Path: "/r/other.jsonl", Stamp: store.Stamp{Size: 1}, Meta: []byte(`{}`)}}); err != nil || version() != v1 {
			t.Errorf("a save without usage changed the number: %d → %d (%v)", v1, version(), err)
		}
		if err := s.Remove(ctx, "", f.path); err != nil || version() == v1 {
			t.Errorf("a removal: %d → %d (%v)", v1, version(), err)
		}
	})
}
