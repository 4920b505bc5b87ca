package sessions

// The parts of a session's tree that an append changes in place, kept so
// that a new snapshot (Next) shares what did not change with the one it
// came from and never writes what that one's readers read: an append costs
// what it adds, not a copy of the tree.

// idIndex maps entry ids to positions: a base map that no snapshot writes
// once shared, and the ids added since, in a small map each snapshot
// copies; when that grows past a bound, the two are merged into a new base.
type idIndex struct {
	base   map[string]int
	recent map[string]int
	n      int // distinct ids
}

// recentMax is how many ids an idIndex adds before it merges them into a new base.
const recentMax = 1024

func newIDIndex(n int) idIndex { return idIndex{base: make(map[string]int, n)} }

// get returns the position of id (the last entry with it).
func (x *idIndex) get(id string) (int, bool) {
	if i, ok := x.recent[id]; ok {
		return i, true
	}
	i, ok := x.base[id]
	return i, ok
}

// setBase adds id while the index is being built, before it is shared.
func (x *idIndex) setBase(id string, i int) {
	if _, ok := x.base[id]; !ok {
		x.n++
	}
	x.base[id] = i
}

// fork returns a copy whose additions its original does not see.
func (x *idIndex) fork() idIndex {
	c := idIndex{base: x.base, n: x.n}
	if len(x.recent) > 0 {
		c.recent = make(map[string]int, len(x.recent)+8)
		for k, v := range x.recent {
			c.recent[k] = v
		}
	}
	return c
}

// add adds id to a forked index.
func (x *idIndex) add(id string, i int) {
	if _, ok := x.get(id); !ok {
		x.n++
	}
	if x.recent == nil {
		x.recent = map[string]int{}
	}
	x.recent[id] = i
	if len(x.recent) > recentMax && len(x.recent) > len(x.base)/8 {
		base := make(map[string]int, len(x.base)+len(x.recent))
		for k, v := range x.base {
			base[k] = v
		}
		for k, v := range x.recent {
			base[k] = v
		}
		x.base, x.recent = base, nil
	}
}

// kidChunk is how many entries' child lists one chunk of a kidTable holds.
const kidChunk = 256

// kidTable holds each entry's children, in chunks: a snapshot copies the
// table of chunks and each chunk it changes, never the others.
type kidTable struct {
	chunks [][][]int
	owned  []bool // chunks this table may write (made or copied by it)
	n      int
}

func newKidTable(n int) kidTable {
	t := kidTable{n: n}
	for off := 0; off < n; off += kidChunk {
		t.chunks = append(t.chunks, make([][]int, min(kidChunk, n-off), kidChunk))
		t.owned = append(t.owned, true)
	}
	return t
}

// at returns entry i's children.
func (t *kidTable) at(i int) []int { return t.chunks[i/kidChunk][i%kidChunk] }

// fork returns a copy whose writes its original does not see.
func (t *kidTable) fork() kidTable {
	return kidTable{chunks: append([][][]int(nil), t.chunks...), owned: make([]bool, len(t.chunks)), n: t.n}
}

// set sets entry i's children (a list of their own: never written after).
func (t *kidTable) set(i int, kids []int) {
	c := i / kidChunk
	if !t.owned[c] {
		t.chunks[c] = append(make([][]int, 0, kidChunk), t.chunks[c]...)
		t.owned[c] = true
	}
	t.chunks[c][i%kidChunk] = kids
}

// grow adds an entry without children.
func (t *kidTable) grow() {
	c := t.n / kidChunk
	if c == len(t.chunks) {
		t.chunks = append(t.chunks, make([][]int, 0, kidChunk))
		t.owned = append(t.owned, true)
	} else if !t.owned[c] {
		t.chunks[c] = append(make([][]int, 0, kidChunk), t.chunks[c]...)
		t.owned[c] = true
	}
	t.chunks[c] = append(t.chunks[c], nil)
	t.n++
}
