package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"unicode/utf8"
)

// usageTotalsRef is the reference for usageTotals: JavaScript reads of
// usage.totalTokens etc. (exact keys, the last of repeated keys, null as 0),
// with any member of another type making both totals 0.
func usageTotalsRef(raw []byte) (int64, float64, bool) {
	var u map[string]json.RawMessage
	if json.Unmarshal(raw, &u) != nil {
		return 0, 0, false
	}
	ok := true
	num := func(v json.RawMessage) float64 {
		var f float64
		if v != nil && json.Unmarshal(v, &f) != nil {
			ok = false
		}
		return f
	}
	t := num(u["totalTokens"])
	sum := num(u["input"]) + num(u["output"]) + num(u["cacheRead"]) + num(u["cacheWrite"])
	var cost float64
	if c := u["cost"]; c != nil && string(c) != "null" {
		var cm map[string]json.RawMessage
		if json.Unmarshal(c, &cm) != nil {
			ok = false
		}
		cost = num(cm["total"])
	}
	if !ok {
		return 0, 0, true
	}
	if t == 0 {
		t = sum
	}
	return int64(t), cost, true
}

func TestUsageTotals(t *testing.T) {
	for _, c := range []string{
		`{}`, `{"totalTokens":15,"cost":{"total":0.5}}`, `{"input":1,"output":2,"cacheRead":3,"cacheWrite":4}`,
		`{"input":1,"output":2,"totalTokens":0,"cost":{"input":1,"total":2e-3}}`, `{"totalTokens":1.9}`,
		`{"totalTokens":"15"}`, `{"input":1,"output":true}`, `{"cost":5,"totalTokens":3}`, `{"cost":{"total":"1"}}`,
		`{"cost":null,"input":null,"totalTokens":null}`, `{"input":5,"input":7}`, `{"input":5,"input":null}`,
		`{"cost":{"total":1},"cost":{"total":2}}`, `{"totalTokens":1e400}`, `{"totalTokens":1e-400,"input":2}`,
		`{"\u0069nput":3}`, `{"Input":3,"TOTALTOKENS":4}`, `{"usage":{"totalTokens":9}}`, `{"totalTokens":-0,"output":-2}`,
		`{"cost":{"total":[]}}`, `{"cost":[]}`,
	} {
		wt, wc, _ := usageTotalsRef([]byte(c))
		if gt, gc := usageTotals([]byte(c)); gt != wt || gc != wc {
			t.Errorf("usageTotals(%s) = %d, %v; want %d, %v", c, gt, gc, wt, wc)
		}
	}
	for _, c := range []string{``, `null`, `[1]`, `"x"`, `7`} {
		if gt, gc := usageTotals([]byte(c)); gt != 0 || gc != 0 {
			t.Errorf("usageTotals(%s) = %d, %v", c, gt, gc)
		}
	}
}

// FuzzUsage checks usageTotals reads any object as JavaScript would.
func FuzzUsage(f *testing.F) {
	for _, s := range []string{`{"totalTokens":15,"cost":{"total":0.5}}`, `{"input":1,"output":true}`, `{"cost":{"total":[]}}`,
		`{"\u0069nput":3}`, `{"totalTokens":1e400}`, "{\"input\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		if !json.Valid(v) || len(v) == 0 || v[0] != '{' {
			return
		}
		valid := bytes.ToValidUTF8(v, []byte("\uFFFD"))
		if wt, wc, ok := usageTotalsRef(valid); ok && utf8.Valid(v) {
			if gt, gc := usageTotals(v); gt != wt || (gc != wc && !(gc != gc && wc != wc)) {
				t.Fatalf("usageTotals = %d, %v; want %d, %v", gt, gc, wt, wc)
			}
		}
	})
}

// TestIDArenaCopies: a copy of an arena (a snapshot's fork copies its
// session's) and the arena it was copied from go on writing ids, one after
// the other or at once (run with -race), and neither changes an id the
// other gave, nor one given before the copy.
func TestIDArenaCopies(t *testing.T) {
	a := &idArena{}
	first, _ := a.str([]byte(`"a0000000"`))
	c := *a
	var fromA, fromC []string
	for i := range 100 { // past the first block
		x, _ := a.str(fmt.Appendf(nil, `"x%07d"`, i))
		y, _ := c.str(fmt.Appendf(nil, `"y%07d"`, i))
		fromA, fromC = append(fromA, x), append(fromC, y)
	}
	d := c // a copy of a copy, once it has written
	z, _ := d.str([]byte(`"z0000000"`))
	w, _ := c.str([]byte(`"w0000000"`))
	if first != "a0000000" || z != "z0000000" || w != "w0000000" {
		t.Errorf("first %q, z %q, w %q", first, z, w)
	}
	for i := range 100 {
		if fromA[i] != fmt.Sprintf("x%07d", i) || fromC[i] != fmt.Sprintf("y%07d", i) {
			t.Fatalf("id %d: %q and %q", i, fromA[i], fromC[i])
		}
	}
	copies := []idArena{*a, *a, *a, *a}
	got := make([][]string, len(copies))
	var wg sync.WaitGroup
	for k := range copies {
		wg.Go(func() {
			for i := range 200 {
				s, _ := copies[k].str(fmt.Appendf(nil, `"%d%07d"`, k, i))
				got[k] = append(got[k], s)
			}
		})
	}
	wg.Wait()
	for k := range copies {
		for i, s := range got[k] {
			if want := fmt.Sprintf("%d%07d", k, i); s != want {
				t.Fatalf("copy %d, id %d: %q, want %q", k, i, s, want)
			}
		}
	}
}

// TestIDArenaChain: a chain of copies each writing after the one before
// (a fork for every append Next reads, each made from the last) fills the
// blocks as one arena does, and the ids of a chain of 2,000 take a few
// blocks, not one each.
func TestIDArenaChain(t *testing.T) {
	a := idArena{next: 4096}
	blocks := map[*idBlock]bool{}
	for i := range 2000 {
		c := a // the fork
		s, _ := c.str(fmt.Appendf(nil, `"%08x"`, i))
		if s != fmt.Sprintf("%08x", i) {
			t.Fatalf("id %d: %q", i, s)
		}
		blocks[c.blk] = true
		a = c
	}
	if len(blocks) > 3 { // 4 KiB, then 8 KiB, for 16,000 bytes
		t.Errorf("2,000 ids in %d blocks", len(blocks))
	}
}
