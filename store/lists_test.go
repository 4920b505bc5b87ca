package store

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestListOps checks union, intersect and subtract against sets, on
// random ascending lists: lists that follow one another (joined), that
// interleave or share ids (merged), empty ones, and one or many of them.
func TestListOps(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	list := func(lo, n, gap int) []int64 {
		var out []int64
		id := int64(lo)
		for range n {
			id += 1 + int64(r.IntN(gap))
			out = append(out, id)
		}
		return out
	}
	sorted := func(set map[int64]bool) []int64 {
		out := []int64{}
		for id := range set {
			out = append(out, id)
		}
		slices.Sort(out)
		return out
	}
	for round := range 3000 {
		var lists [][]int64
		want := map[int64]bool{}
		for k := range r.IntN(6) {
			lo := r.IntN(50)
			if round%2 == 0 { // following one another
				lo = k * 10000
			}
			l := list(lo, r.IntN([]int{3, 40, 3000}[r.IntN(3)]), 1+r.IntN(8))
			lists = append(lists, l)
			for _, id := range l {
				want[id] = true
			}
		}
		copies := make([][]int64, len(lists))
		for k := range lists {
			copies[k] = slices.Clone(lists[k])
		}
		if got := union(copies); !slices.Equal(got, sorted(want)) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("union of %d lists: %d ids, want %d", len(lists), len(got), len(want))
		}
		if len(lists) < 2 {
			continue
		}
		a, b := lists[0], lists[1]
		inB, both, onlyA := map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
		for _, id := range b {
			inB[id] = true
		}
		for _, id := range a {
			if inB[id] {
				both[id] = true
			} else {
				onlyA[id] = true
			}
		}
		if got := intersect(slices.Clone(a), slices.Clone(b)); !slices.Equal(got, sorted(both)) && !(len(got) == 0 && len(both) == 0) {
			t.Fatalf("intersect of %d and %d ids: %d, want %d", len(a), len(b), len(got), len(both))
		}
		if got := subtract(slices.Clone(a), slices.Clone(b)); !slices.Equal(got, sorted(onlyA)) && !(len(got) == 0 && len(onlyA) == 0) {
			t.Fatalf("subtract of %d and %d ids: %d, want %d", len(a), len(b), len(got), len(onlyA))
		}
	}
}
