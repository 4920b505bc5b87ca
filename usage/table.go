package usage

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"
)

// CompactWidth is the terminal width under which a table takes its compact
// form (as ccusage's): fewer columns, models cut short.
const CompactWidth = 100

// TableOptions say how a report is drawn as a table.
type TableOptions struct {
	// Width is the terminal's width in columns (0: wide).
	Width int
	// Breakdown adds a line per model under each entry.
	Breakdown bool
}

// column is one column of a table: its heading lines and whether its
// cells are numbers (aligned right).
type column struct {
	head  []string
	right bool
}

// WriteTable draws the report as a table with a totals row, as ccusage
// draws its reports; session content in it is made safe for a terminal.
func (r *Report) WriteTable(w io.Writer, o TableOptions) error {
	compact := o.Width > 0 && o.Width < CompactWidth
	first := map[Group]string{Daily: "Date", Weekly: "Week", Monthly: "Month", BySession: "Session", ByProject: "Project"}[r.Query.Group]
	if first == "" {
		first = "Date"
	}
	cols := []column{{head: []string{first}}, {head: []string{"Models"}}, {head: []string{"Input"}, right: true}, {head: []string{"Output"}, right: true}}
	if !compact {
		cols = append(cols, column{[]string{"Cache", "Create"}, true}, column{[]string{"Cache", "Read"}, true}, column{[]string{"Total", "Tokens"}, true})
	}
	cols = append(cols, column{[]string{"Cost", "(USD)"}, true}, column{[]string{"Abandoned", "(USD)"}, true})
	if compact {
		cols[len(cols)-1].head = []string{"Aband.", "(USD)"}
	}
	numbers := func(s Sums, ab Sums) [][]string {
		out := [][]string{{Count(s.Input)}, {Count(s.Output)}}
		if !compact {
			out = append(out, []string{Count(s.CacheWrite)}, []string{Count(s.CacheRead)}, []string{Count(s.Tokens())})
		}
		return append(out, []string{Dollars(s.Cost)}, []string{Dollars(ab.Cost)})
	}
	var rows [][][]string
	var rules []bool // a rule above the row
	loc := r.Query.loc()
	for i := range r.Entries {
		e := &r.Entries[i]
		var models []string
		for _, m := range e.Models {
			models = append(models, "- "+shortModel(m.Name))
		}
		row := append([][]string{r.firstCell(e, loc), models}, numbers(e.Sums, e.Abandoned)...)
		rows, rules = append(rows, row), append(rules, true)
		if o.Breakdown {
			for _, m := range e.Models {
				rows = append(rows, append([][]string{{""}, {"  └ " + shortModel(m.Name)}}, numbers(m.Sums, m.Abandoned)...))
				rules = append(rules, false)
			}
		}
	}
	rows = append(rows, append([][]string{{"Total"}, {""}}, numbers(r.Totals.Sums, r.Totals.Abandoned)...))
	rules = append(rules, true)

	// Widths: each column as wide as its widest line; in the compact form
	// the models column takes what is left of the terminal, or goes.
	widths := make([]int, len(cols))
	for c := range cols {
		for _, h := range cols[c].head {
			widths[c] = max(widths[c], runewidth.StringWidth(h))
		}
		for _, row := range rows {
			for _, l := range row[c] {
				widths[c] = max(widths[c], runewidth.StringWidth(l))
			}
		}
	}
	if compact {
		widths[0] = min(widths[0], 26)
		rest := o.Width - 1
		for c, wd := range widths {
			if c != 1 {
				rest -= wd + 3
			}
		}
		if rest-3 < 12 {
			cols = append(cols[:1], cols[2:]...)
			widths = append(widths[:1], widths[2:]...)
			for k := range rows {
				rows[k] = append(rows[k][:1], rows[k][2:]...)
			}
		} else {
			widths[1] = min(widths[1], rest-3)
		}
	}
	var b strings.Builder
	rule := func(l, m, r string) {
		b.WriteString(l)
		for c, wd := range widths {
			if c > 0 {
				b.WriteString(m)
			}
			b.WriteString(strings.Repeat("─", wd+2))
		}
		b.WriteString(r + "\n")
	}
	line := func(cells [][]string) {
		n := 0
		for _, cell := range cells {
			n = max(n, len(cell))
		}
		for k := range n {
			b.WriteString("│")
			for c, wd := range widths {
				s := ""
				if k < len(cells[c]) {
					s = runewidth.Truncate(cells[c][k], wd, "…")
				}
				pad := strings.Repeat(" ", wd-runewidth.StringWidth(s))
				if cols[c].right {
					b.WriteString(" " + pad + s + " │")
				} else {
					b.WriteString(" " + s + pad + " │")
				}
			}
			b.WriteString("\n")
		}
	}
	what := map[Group]string{Daily: "daily", Weekly: "weekly", Monthly: "monthly", BySession: "by session", ByProject: "by project"}[r.Query.Group]
	fmt.Fprintf(&b, "pi usage, %s (%s)\n", what, zoneName(loc))
	rule("┌", "┬", "┐")
	heads := make([][]string, len(cols))
	for c := range cols {
		heads[c] = cols[c].head
	}
	line(heads)
	for k, row := range rows {
		if rules[k] {
			rule("├", "┼", "┤")
		}
		line(row)
	}
	rule("└", "┴", "┘")
	_, err := io.WriteString(w, b.String())
	return err
}

// firstCell returns the lines of an entry's first cell.
func (r *Report) firstCell(e *Entry, loc *time.Location) []string {
	switch r.Query.Group {
	case BySession:
		s := r.session(e.Key)
		title := Clean(s.Title())
		if title == "" {
			title = e.Key
		}
		return []string{runewidth.Truncate(title, 26, "…"), e.Last.In(loc).Format(time.DateOnly)}
	case ByProject:
		return []string{Clean(r.ProjectName(e.Key))}
	}
	return []string{e.Key}
}

// shortModel returns a model's name without its provider.
func shortModel(m string) string {
	if m == ToolsModel {
		return m
	}
	if i := strings.IndexByte(m, '/'); i >= 0 && i < len(m)-1 {
		return m[i+1:]
	}
	return m
}

// zoneName names a time zone for a heading.
func zoneName(loc *time.Location) string {
	if loc == time.Local {
		name, _ := time.Now().Zone()
		return "local time, " + name
	}
	return loc.String()
}

// Clean returns s safe to print on a terminal: control characters (escape
// sequences, line breaks) and bidirectional marks become spaces, runs of
// spaces one.
func Clean(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == ' ' || r == '\u2028' || r == '\u2029' ||
			r >= '\u200e' && r <= '\u200f' || r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069' { // and the marks that turn text around
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return strings.TrimRight(b.String(), " ")
}

// Count formats a count with thousands separators: 1,234,567.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Dollars formats a cost in dollars and cents: $1,234.56.
func Dollars(c float64) string {
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return "$?"
	}
	cents := int64(math.Round(math.Abs(c) * 100))
	s := "$" + Count(cents/100) + fmt.Sprintf(".%02d", cents%100)
	if c < 0 && cents > 0 {
		return "-" + s
	}
	return s
}
