package search

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits on what Parse accepts.
const (
	MaxQuery    = 1000 // bytes in a query
	MaxTokens   = 32   // tokens and filters in a query
	MaxRegex    = 300  // bytes in one regular expression
	maxProgInst = 5000 // instructions in a compiled regular expression
)

// DefaultBudget is the time one Excerpt may spend on the regular expressions of a query.
const DefaultBudget = 100 * time.Millisecond

// Roles are the values role: accepts, which documents carry in their Role.
var Roles = []string{"user", "assistant", "tool", "bash", "summary", "label"}

// Kind says what a Token matches.
type Kind uint8

// Token kinds.
const (
	Word   Kind = iota // a bare word: matches anywhere, case ignored
	Phrase             // a "quoted phrase": the same, white space runs matching any white space
	Regex              // re:PATTERN (the rest of the query), anywhere, case ignored
)

// Token is one text condition of a query.
type Token struct {
	Kind  Kind
	Value string // as typed (the pattern, for Regex)

	needle string         // lower-cased, white space collapsed (Word, Phrase)
	words  []string       // needle split at its spaces
	re     *regexp.Regexp // Regex
	lits   []string       // literals a match of re must contain (Regex)
}

// PathFilter restricts hits by where their entry is relative to the session's active path.
type PathFilter uint8

// Path filters.
const (
	AnyPath PathFilter = iota
	OffPath            // is:offpath: on an abandoned branch
	OnPath             // is:onpath (or -is:offpath)
)

// Query is a parsed search. Its fields are read-only once Parse returns it.
type Query struct {
	Raw  string
	Text []Token // all must match
	Not  []Token // none may match

	Projects, NotProjects []string // lower-cased substrings of the project name
	Roles, NotRoles       []string // from Roles
	Labels, NotLabels     []string // lower-cased substrings of the entry's label
	After, Before         time.Time
	Path                  PathFilter

	// Budget is the time one Excerpt may spend on regular expressions
	// (DefaultBudget unless changed before use).
	Budget time.Duration
}

// Error is a query Parse cannot accept; Msg says what to change.
type Error struct {
	Pos int // byte offset in the query, -1 when it concerns the whole query
	Msg string
}

// Error returns the message, with the place in the query when known.
func (e *Error) Error() string {
	if e.Pos < 0 {
		return e.Msg
	}
	return fmt.Sprintf("%s (at character %d)", e.Msg, e.Pos+1)
}

// ErrEmpty is returned for a query with nothing to search for.
var ErrEmpty = &Error{Pos: -1, Msg: "empty query: type words to search for"}

// Parse parses q, resolving relative dates against the current time.
func Parse(q string) (*Query, error) { return ParseAt(q, time.Now()) }

// ParseAt parses q, resolving relative dates (7d, today) against now and
// calendar dates in now's location.
func ParseAt(q string, now time.Time) (*Query, error) {
	if !utf8.ValidString(q) {
		return nil, &Error{Pos: invalidUTF8At(q), Msg: "the query is not valid UTF-8"}
	}
	if len(q) > MaxQuery {
		return nil, &Error{Pos: -1, Msg: fmt.Sprintf("query too long: %d bytes, at most %d", len(q), MaxQuery)}
	}
	for i, r := range q {
		if isControl(r) {
			return nil, &Error{Pos: i, Msg: fmt.Sprintf("the query contains a control character (%U)", r)}
		}
	}
	p := parser{s: q, now: now, q: &Query{Raw: q, Budget: DefaultBudget}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	if p.n == 0 {
		return nil, ErrEmpty
	}
	return p.q, nil
}

func isControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	return r < 0x20 || r == 0x7f || 0x80 <= r && r <= 0x9f
}

func invalidUTF8At(s string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

type parser struct {
	s   string
	i   int
	n   int // tokens and filters seen
	now time.Time
	q   *Query
}

var filterKeys = []string{"project", "role", "after", "before", "is", "label", "re"}

func (p *parser) parse() error {
	for {
		for n := spaceAt(p.s, p.i); n > 0; n = spaceAt(p.s, p.i) {
			p.i += n
		}
		if p.i >= len(p.s) {
			return nil
		}
		start := p.i
		neg := false
		if p.s[p.i] == '-' && p.i+1 < len(p.s) && spaceAt(p.s, p.i+1) == 0 {
			neg = true
			p.i++
		}
		if p.s[p.i] == '"' {
			v, err := p.quoted()
			if err != nil {
				return err
			}
			if strings.TrimFunc(v, isSpace) == "" {
				continue // "" asks for nothing, as in pi's picker
			}
			if err := p.add(start, neg, Token{Kind: Phrase, Value: v}); err != nil {
				return err
			}
			continue
		}
		w := p.bare()
		if len(w) >= 3 && strings.EqualFold(w[:3], "re:") {
			// As pi's parseSearchQuery: the rest of the query is one pattern.
			rest := strings.TrimFunc(p.s[start+len("-")*b2i(neg)+3:], isSpace)
			p.i = len(p.s)
			if err := p.filter(start, neg, "re", rest); err != nil {
				return err
			}
			continue
		}
		if k, v, ok := filterWord(w); ok {
			if v == "" && p.i < len(p.s) && p.s[p.i] == '"' {
				var err error
				if v, err = p.quoted(); err != nil {
					return err
				}
			}
			if err := p.filter(start, neg, k, v); err != nil {
				return err
			}
			continue
		}
		if neg && w == "" {
			w = "-" // a lone "-" before a quote
		}
		if err := p.add(start, neg, Token{Kind: Word, Value: w}); err != nil {
			return err
		}
	}
}

// spaceAt returns the length of the white space rune at s[i], 0 when there
// is none: JavaScript's \s, at which pi's picker splits a query (so U+3000,
// an input method's space, parts two words).
func spaceAt(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return b2i(c == ' ' || '\t' <= c && c <= '\r')
	}
	if r, n := utf8.DecodeRuneInString(s[i:]); isSpace(r) { // (U+0085, a control character, is refused before)
		return n
	}
	return 0
}

// filterWord splits a word key:value at its colon, when key is a filter's
// (case aside, ASCII only: "İs:" is a word).
func filterWord(w string) (key, value string, ok bool) {
	k, v, found := strings.Cut(w, ":")
	for _, f := range filterKeys {
		if found && len(k) == len(f) && strings.EqualFold(k, f) { // of the same bytes: ASCII
			return f, v, true
		}
	}
	return "", "", false
}

// bare reads a word up to white space or a quote.
func (p *parser) bare() string {
	start := p.i
	for p.i < len(p.s) && spaceAt(p.s, p.i) == 0 && p.s[p.i] != '"' {
		_, n := utf8.DecodeRuneInString(p.s[p.i:])
		p.i += n
	}
	return p.s[start:p.i]
}

// quoted reads "…" starting at the quote.
func (p *parser) quoted() (string, error) {
	open := p.i
	end := strings.IndexByte(p.s[open+1:], '"')
	if end < 0 {
		return "", &Error{Pos: open, Msg: `unclosed quote: add the closing "`}
	}
	p.i = open + 1 + end + 1
	return p.s[open+1 : open+1+end], nil
}

func (p *parser) count(pos int) error {
	p.n++
	if p.n > MaxTokens {
		return &Error{Pos: pos, Msg: fmt.Sprintf("too many words and filters: at most %d", MaxTokens)}
	}
	return nil
}

func (p *parser) add(pos int, neg bool, t Token) error {
	if err := p.count(pos); err != nil {
		return err
	}
	t.needle = collapseSpace(lowerString(t.Value))
	t.words = strings.Split(t.needle, " ")
	put(neg, &p.q.Text, &p.q.Not, t)
	return nil
}

func (p *parser) filter(pos int, neg bool, key, v string) error {
	if err := p.count(pos); err != nil {
		return err
	}
	if v == "" {
		return &Error{Pos: pos, Msg: fmt.Sprintf("%s: needs a value, e.g. %s", key, example(key))}
	}
	q := p.q
	switch key {
	case "re":
		if len(v) > MaxRegex {
			return &Error{Pos: pos, Msg: fmt.Sprintf("regular expression too long: %d bytes, at most %d", len(v), MaxRegex)}
		}
		re, lits, err := compileRegex(v)
		if err != nil {
			return &Error{Pos: pos, Msg: err.Error()}
		}
		t := Token{Kind: Regex, Value: v, re: re, lits: lits}
		put(neg, &q.Text, &q.Not, t)
	case "project":
		v = lowerString(v)
		put(neg, &q.Projects, &q.NotProjects, v)
	case "label":
		v = lowerString(v)
		put(neg, &q.Labels, &q.NotLabels, v)
	case "role":
		r := strings.ToLower(v)
		if !slices.Contains(Roles, r) {
			return &Error{Pos: pos, Msg: fmt.Sprintf("unknown role %q: use one of %s", v, strings.Join(Roles, ", "))}
		}
		put(neg, &q.Roles, &q.NotRoles, r)
	case "is":
		switch strings.ToLower(v) {
		case "offpath":
			q.Path = OffPath
		case "onpath":
			q.Path = OnPath
		default:
			return &Error{Pos: pos, Msg: fmt.Sprintf("unknown is:%s: use is:offpath or is:onpath", v)}
		}
		if neg {
			q.Path = OffPath + OnPath - q.Path
		}
	case "after", "before":
		if neg {
			other := map[string]string{"after": "before", "before": "after"}[key]
			return &Error{Pos: pos, Msg: fmt.Sprintf("-%s: is not supported: use %s: instead", key, other)}
		}
		t, err := parseWhen(v, p.now)
		if err != nil {
			return &Error{Pos: pos, Msg: fmt.Sprintf("%s:%s: %v", key, v, err)}
		}
		if key == "after" {
			q.After = t
		} else {
			q.Before = t
		}
		if !q.After.IsZero() && !q.Before.IsZero() && !q.After.Before(q.Before) {
			return &Error{Pos: pos, Msg: "after: must be earlier than before:"}
		}
	}
	return nil
}

func example(key string) string {
	switch key {
	case "re":
		return `re:fail(ed|ure)`
	case "role":
		return "role:user"
	case "after", "before":
		return key + ":2026-01-31 or " + key + ":7d"
	case "is":
		return "is:offpath"
	}
	return key + `:name or ` + key + `:"two words"`
}

// put appends v to list, or to its negation not when neg.
func put[T any](neg bool, list, not *[]T, v T) {
	if neg {
		list = not
	}
	*list = append(*list, v)
}

// parseWhen reads a date (YYYY-MM-DD, in now's location), a relative
// time before now (30m is not supported; 12h, 7d, 2w, 1y) or today/yesterday.
func parseWhen(v string, now time.Time) (time.Time, error) {
	loc := now.Location()
	day := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc) }
	switch strings.ToLower(v) {
	case "today":
		return day(now), nil
	case "yesterday":
		return day(now).AddDate(0, 0, -1), nil
	}
	if t, err := time.ParseInLocation("2006-01-02", v, loc); err == nil {
		return t, nil
	}
	if len(v) >= 2 {
		n, err := strconv.Atoi(v[:len(v)-1])
		if err == nil && n >= 0 && n <= 100000 {
			switch v[len(v)-1] {
			case 'h':
				return now.Add(-time.Duration(n) * time.Hour), nil
			case 'd':
				return now.AddDate(0, 0, -n), nil
			case 'w':
				return now.AddDate(0, 0, -7*n), nil
			case 'y':
				return now.AddDate(-n, 0, 0), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("not a date: use YYYY-MM-DD, today, yesterday, or a time ago like 12h, 7d, 2w, 1y")
}

// b2i is 1 for true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lowerString folds s rune by rune, as matching does (see lower).
func lowerString(s string) string {
	for k := 0; k < len(s); k++ {
		c := s[k]
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return strings.Map(lower, s)
		}
	}
	return s
}

// collapseSpace turns every run of white space into one space.
func collapseSpace(s string) string {
	if !strings.ContainsFunc(s, isSpace) {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, isSpace), " ")
}

// AllowRole reports whether role passes the query's role: filters.
func (q *Query) AllowRole(role string) bool {
	if len(q.Roles) > 0 && !slices.Contains(q.Roles, role) {
		return false
	}
	return !slices.Contains(q.NotRoles, role)
}

// AllowProject reports whether project passes the project: filters (substrings, case ignored).
func (q *Query) AllowProject(project string) bool {
	if len(q.Projects) == 0 && len(q.NotProjects) == 0 {
		return true
	}
	p := lowerString(project)
	for _, x := range q.NotProjects {
		if strings.Contains(p, x) {
			return false
		}
	}
	if len(q.Projects) == 0 {
		return true
	}
	for _, x := range q.Projects {
		if strings.Contains(p, x) {
			return true
		}
	}
	return false
}

// AllowLabel reports whether an entry with label (or "" for none) passes the label: filters.
func (q *Query) AllowLabel(label string) bool {
	l := lowerString(label)
	for _, x := range q.NotLabels {
		if label != "" && strings.Contains(l, x) {
			return false
		}
	}
	for _, x := range q.Labels {
		if label == "" || !strings.Contains(l, x) {
			return false
		}
	}
	return true
}

// AllowTime reports whether a time in Unix milliseconds passes after: and before:.
func (q *Query) AllowTime(ms int64) bool {
	if !q.After.IsZero() && ms < q.After.UnixMilli() {
		return false
	}
	return q.Before.IsZero() || ms < q.Before.UnixMilli()
}
