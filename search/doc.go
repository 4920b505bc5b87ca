// Package search is piweb's query language for full-text search over
// session entries, independent of any storage.
//
// Parse turns what a user types into a Query: space-separated tokens that
// must all occur (case-insensitive), "quoted phrases", re:REGEX (Go RE2
// syntax, matched case-insensitively), the filters project:, role:, after:,
// before:, is:offpath / is:onpath and label:, and any of these negated with a
// leading '-'. Bad input (an empty or over-long query, control characters,
// invalid UTF-8, an invalid or oversized regular expression, an unknown
// role or date) gives an *Error naming the problem, never a panic.
//
// Matching semantics (Query.Match, the truth): a token or phrase matches
// where it starts a word of the text: at the start of a run of letters and
// digits, at a camelCase part ("handler" finds "requestHandler"), or at any
// CJK character; a token that starts with punctuation ("/api", ".go")
// matches anywhere. Case is ignored (simple Unicode lower-casing),
// diacritics are not ("cafe" does not find "café"), and runs of white space
// in a phrase match any run of white space. A regular expression matches
// anywhere; it runs under a time budget (Query.Budget) and the runes it
// reads are bounded, so no input makes it run away.
//
// The index side (Terms, Query.IndexTerms, Query.MatchExpr for SQLite's
// FTS5) follows the same semantics, so an index of Terms finds a superset
// of what Match accepts: a word index narrows the candidates, Match (or
// Excerpt, which stops at the first match and makes a snippet) decides and
// gives the ranges to highlight.
// Terms splits text into lower-cased words (at most MaxTerm bytes, longer
// ones cut), plus the suffixes that start at camelCase parts; CJK runs into
// overlapping pairs of characters (and the last one alone); pictographic
// symbols (emoji, ✓) into one term each. Scripts written without spaces
// other than CJK (Thai, Lao, Khmer, …) are not segmented: a token must
// match the start of one of their space-separated runs.
//
// Everything here is safe for concurrent use once a Query is parsed.
package search
