package search

import "strings"

// IndexTerm is a word an index of Terms must hold for a document to match:
// exactly, or (Prefix) as the start of one of its words.
type IndexTerm struct {
	Text   string
	Prefix bool
}

// IndexTerms returns what an index of Terms can tell about q: every
// document Match accepts holds all of all (none: the index cannot narrow
// the candidates, the caller must scan), and no document that holds one of
// none matches.
func (q *Query) IndexTerms() (all, none []IndexTerm) {
	for i := range q.Text {
		for _, t := range q.Text[i].terms {
			all = append(all, IndexTerm{t.text, t.prefix})
		}
	}
	for i := range q.Not {
		t := &q.Not[i]
		// Only a token that is one index term, whole, can exclude documents
		// by the index: "foo-" must not exclude every text with "foo".
		if t.Kind != Regex && len(t.terms) == 1 && t.terms[0].text == t.needle {
			none = append(none, IndexTerm{t.terms[0].text, t.terms[0].prefix})
		}
	}
	return all, none
}

// MatchExpr returns an SQLite FTS5 MATCH expression over an index of Terms
// (one column, any tokenizer that keeps a term whole, such as ascii) that
// every document Match accepts satisfies, or "" when the query's text
// conditions cannot narrow the candidates (only regular expressions,
// punctuation or negations): the caller must then scan. Every term is a
// quoted string, so nothing a user types is read as FTS5 syntax.
func (q *Query) MatchExpr() string {
	all, none := q.IndexTerms()
	if len(all) == 0 {
		return ""
	}
	var pos []string
	for _, t := range all {
		pos = append(pos, ftsTerm(t))
	}
	expr := strings.Join(pos, " AND ")
	for _, t := range none {
		expr += " NOT " + ftsTerm(t)
	}
	return expr
}

// FTSString quotes s as an FTS5 string.
func FTSString(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func ftsTerm(t IndexTerm) string {
	if t.Prefix {
		return FTSString(t.Text) + "*"
	}
	return FTSString(t.Text)
}
