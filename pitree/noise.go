package pitree

import (
	"sort"

	"github.com/piweb/piweb/sessions"
)

// Noise runs are piweb's own fold, not pi's: a run of settings rows that
// nobody reads one by one (model and thinking-level changes, each the only
// child of the row before it; sessions where a tool flipped the thinking
// level 111,199 times in a row exist) is shown as one line saying how many
// there are. The layout itself is pi's; a Run only says which of its rows
// a page may draw as one.

// MinRun is how many settings rows in a row make a Run.
const MinRun = 4

// Run is a run of at least MinRun settings rows: rows [Start, End), each the
// only visible child of the one before. None of them is labeled, a branch
// point, or the row of the layout's leaf or of the session's own leaf.
type Run struct {
	Start, End int
	Thinking   bool // it holds thinking-level changes
	Model      bool // it holds model changes
}

// Len returns the number of rows in the run.
func (r Run) Len() int { return r.End - r.Start }

// Runs returns the layout's runs of settings rows, in row order. They are
// found once, in one pass over the rows.
func (l *Layout) Runs() []Run {
	l.noiseOnce.Do(l.findRuns)
	return l.noise
}

// RunAt returns the run holding row k, if any.
func (l *Layout) RunAt(k int) (Run, bool) {
	runs := l.Runs()
	i := sort.Search(len(runs), func(i int) bool { return runs[i].End > k })
	if i < len(runs) && runs[i].Start <= k {
		return runs[i], true
	}
	return Run{}, false
}

// Setting reports whether e is a settings entry runs are made of: a
// thinking-level change or a model change.
func Setting(e *sessions.Entry) (thinking, model bool) {
	switch e.Type {
	case sessions.TypeThinking:
		return true, false
	case sessions.TypeModelChange:
		return false, true
	}
	return false, false
}

func (l *Layout) findRuns() {
	keep := [2]int{-1, -1}
	if l.leaf >= 0 {
		keep[0] = l.Find(l.leaf)
	}
	if pl := l.s.Leaf(); pl >= 0 {
		keep[1] = l.Find(pl)
	}
	kind := func(k int) (thinking, model bool) {
		pos := int(l.rows[k].pos)
		if k == keep[0] || k == keep[1] || l.nkids(k) > 1 || len(l.s.Children(pos)) > 1 || l.s.LabelOn(pos) >= 0 {
			return false, false
		}
		return Setting(&l.s.Entries[pos])
	}
	for k := 0; k < len(l.rows); {
		t, m := kind(k)
		if !t && !m {
			k++
			continue
		}
		run := Run{Start: k, Thinking: t, Model: m}
		j := k + 1
		for ; j < len(l.rows) && int(l.rows[j].parent) == j-1; j++ {
			t, m := kind(j)
			if !t && !m {
				break
			}
			run.Thinking, run.Model = run.Thinking || t, run.Model || m
		}
		if run.End = j; run.Len() >= MinRun {
			l.noise = append(l.noise, run)
		}
		k = j
	}
}
