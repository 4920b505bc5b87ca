package ledger

import "github.com/piweb/piweb/sessions"

// Parting is where two entries' paths part: their deepest common ancestor
// (-1 when they are in trees of different roots) and each side's entries
// from the ancestor's child down to the entry, root first.
type Parting struct {
	Ancestor int
	A, B     []int
}

// Compare finds where the paths to entries a and b part. Either side is
// empty when its entry is the ancestor of the other (or both are one entry).
func Compare(s *sessions.Session, a, b int) Parting {
	pa, pb := s.Path(a), s.Path(b)
	k := 0
	for k < len(pa) && k < len(pb) && pa[k] == pb[k] {
		k++
	}
	f := Parting{Ancestor: -1, A: pa[k:], B: pb[k:]}
	if k > 0 {
		f.Ancestor = pa[k-1]
	}
	return f
}
