package search

import "strings"

// MatchExpr returns an SQLite FTS5 MATCH expression over an index of Terms
// (one column, any tokenizer that keeps a term whole, such as ascii) that
// every document Match accepts satisfies, or "" when the query's text
// conditions cannot narrow the candidates (only regular expressions,
// punctuation or negations): the caller must then scan. Every term is a
// quoted string, so nothing a user types is read as FTS5 syntax.
func (q *Query) MatchExpr() string {
	var pos []string
	for i := range q.Text {
		for _, t := range q.Text[i].terms {
			pos = append(pos, ftsTerm(t))
		}
	}
	if len(pos) == 0 {
		return ""
	}
	expr := strings.Join(pos, " AND ")
	for i := range q.Not {
		t := &q.Not[i]
		// Only a token that is one index term, whole, can exclude documents
		// by the index: "foo-" must not exclude every text with "foo".
		if t.Kind != Regex && len(t.terms) == 1 && t.terms[0].text == t.needle {
			expr += " NOT " + ftsTerm(t.terms[0])
		}
	}
	return expr
}

// FTSString quotes s as an FTS5 string.
func FTSString(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func ftsTerm(t qterm) string {
	if t.prefix {
		return FTSString(t.text) + "*"
	}
	return FTSString(t.text)
}
