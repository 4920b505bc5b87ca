package secrets

import "slices"

// keywords finds which of a set of keywords occur in a text in one pass
// over it (an Aho-Corasick automaton, built once, read-only after): each
// rule runs only on texts holding one of its keywords, as in gitleaks.
type keywords struct {
	always []bool     // the rules with no keywords, which always run
	column [256]uint8 // byte → column of next; 0 for bytes in no keyword
	width  int        // columns per state
	next   []int32    // state*width+column → the next state; state 0 is the root
	hits   [][]int    // state → the rules with a keyword ending there (its own and its suffixes')
}

// newKeywords builds the automaton for rules' keywords.
func newKeywords(rules []rule) *keywords {
	k := &keywords{width: 1, always: make([]bool, len(rules))}
	for i, r := range rules {
		k.always[i] = len(r.keywords) == 0
		for _, w := range r.keywords {
			for i := 0; i < len(w); i++ {
				if k.column[w[i]] == 0 {
					k.column[w[i]] = uint8(k.width)
					k.width++
				}
			}
		}
	}
	// The trie: child[s][c] is the state after s on column c, 0 if none.
	child := [][]int32{make([]int32, k.width)}
	k.hits = [][]int{nil}
	for ri, r := range rules {
		for _, w := range r.keywords {
			s := int32(0)
			for i := 0; i < len(w); i++ {
				c := k.column[w[i]]
				if child[s][c] == 0 {
					child = append(child, make([]int32, k.width))
					k.hits = append(k.hits, nil)
					child[s][c] = int32(len(child) - 1)
				}
				s = child[s][c]
			}
			if n := len(k.hits[s]); n == 0 || k.hits[s][n-1] != ri {
				k.hits[s] = append(k.hits[s], ri)
			}
		}
	}
	// Breadth first, each state's moves are its trie moves, else its
	// longest proper suffix's (fail) moves; its hits take in the suffix's.
	k.next = make([]int32, len(child)*k.width)
	fail := make([]int32, len(child))
	queue := make([]int32, 0, len(child))
	for c := 1; c < k.width; c++ {
		if t := child[0][c]; t != 0 {
			k.next[c] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		k.hits[s] = append(k.hits[s], k.hits[fail[s]]...)
		for c := 1; c < k.width; c++ {
			f := k.next[int(fail[s])*k.width+c]
			if t := child[s][c]; t != 0 {
				fail[t] = f
				k.next[int(s)*k.width+c] = t
				queue = append(queue, t)
			} else {
				k.next[int(s)*k.width+c] = f
			}
		}
	}
	return k
}

// match returns, for each rule, whether it runs on text: whether text
// holds one of its keywords, or it has none.
func (k *keywords) match(text string) []bool {
	run := slices.Clone(k.always)
	s := 0
	for i := 0; i < len(text); i++ {
		s = int(k.next[s*k.width+int(k.column[text[i]])])
		for _, r := range k.hits[s] {
			run[r] = true
		}
	}
	return run
}
