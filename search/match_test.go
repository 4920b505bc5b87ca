package search

import "time"

// Match is the tests' whole-text counterpart of Excerpt: it reports
// whether text satisfies every text condition of q (its tokens, phrases
// and regular expressions, and none of the negated ones; the filters are
// not looked at), with every byte range of text to highlight, sorted and
// not overlapping. A regular expression that exceeds
// q.Budget makes the text not match, with ErrBudget.
func (q *Query) Match(text string) ([]Range, bool, error) {
	var f *folded
	deadline := time.Time{}
	if q.Budget > 0 {
		deadline = time.Now().Add(q.Budget)
	}
	var out []Range
	for i := range q.Text {
		t := &q.Text[i]
		rs, err := t.find(text, &f, deadline, maxRanges)
		if err != nil || len(rs) == 0 {
			return nil, false, err
		}
		out = append(out, rs...)
	}
	for i := range q.Not {
		t := &q.Not[i]
		rs, err := t.find(text, &f, deadline, 1)
		if err != nil || len(rs) > 0 {
			return nil, false, err
		}
	}
	return mergeRanges(out), true, nil
}
