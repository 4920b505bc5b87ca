// Package search is piweb's query language for full-text search over
// session entries, independent of any storage.
//
// Parse turns what a user types into a Query: space-separated words that
// must all occur, "quoted phrases", the filters project:, role:, after:,
// before:, is:offpath / is:onpath and label:, any of these negated with a
// leading '-', and re:PATTERN, which, as in pi's session picker
// (parseSearchQuery), takes the whole rest of the query as one regular
// expression. Bad input (an empty or over-long query, control characters,
// invalid UTF-8, a regular expression that is invalid, too large, or uses
// JavaScript syntax RE2 cannot run, an unknown role or date) gives an
// *Error naming the problem, never a panic.
//
// Matching (Query.Excerpt) is pi's picker's: words part at JavaScript's
// white space (U+3000 too), a word or phrase matches anywhere inside the
// text, case ignored (each rune as the lower case of its upper case: ς as
// σ, ſ as s; diacritics are not ignored), and a run of white space in a
// phrase matches any run of white space. A regular expression is read as
// pi reads it (JavaScript's syntax without the u flag) where RE2 can
// express it, matches anywhere, case ignored, and runs under a time budget
// (Query.Budget) over bounded runes, so no input makes it run away.
//
// Index side: Query.Needles lists literal strings every matching text
// must contain (the words, the phrases, and the literals a regular
// expression requires), lower-cased and with white space collapsed, as
// the store indexes its texts (Normalize). An engine narrows candidates
// with them; Excerpt decides, and makes the snippet.
//
// Everything here is safe for concurrent use once a Query is parsed.
package search
