// Package chart draws the usage page's charts as SVG on the server: bars
// stacked by series over days (Bars), a week's hours as a grid of squares
// (Heatmap), one bar split into parts (Meter), and the legend's swatches
// (Swatch).
//
// The drawings hold no text but their tooltips (<title>): the page writes
// axes, legends and a table of the same numbers in HTML, which stays
// legible at any width while the SVG scales to its box. Nothing depends on
// colour alone: each series has a pattern as well as a colour (Fill), the
// heatmap's squares grow with their value, and every mark has a tooltip.
// Colours are CSS classes of the patterns' backgrounds (s0, s1, …, and ab
// for the abandoned part of a meter; their marks are mk): the page's
// stylesheet gives them its light and dark themes. Every text is escaped.
package chart

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Patterns is how many series are told apart; a chart with more puts the
// rest together in its last series.
const Patterns = 8

// Series is one named row of values, one per slot.
type Series struct {
	Name   string
	Values []float64
}

// Bars is a chart of bars, one per slot (a day), each stacked from its
// series' values, the first series at the bottom.
type Bars struct {
	// ID is unique on the page: it names the chart's patterns.
	ID string
	// Label is the chart's accessible name.
	Label string
	// Slots label the bars, in order (their tooltips name them).
	Slots []string
	// Series are stacked bottom up; series k is drawn with pattern k.
	Series []Series
	// Format writes a value in a tooltip.
	Format func(float64) string
}

// SVG returns the chart, and the value its top stands for (a round number
// at or above the highest bar) for the page's axis. It stretches to the
// box the page gives it (preserveAspectRatio="none"): its marks are bars
// and lines, which stay true when stretched.
func (b *Bars) SVG() (svg string, top float64) {
	n := len(b.Slots)
	unit := max(4, 720/max(n, 1))
	w := max(n, 1) * unit
	h := w * 2 / 5
	gap := max(1, unit/5)
	for i := range n {
		sum := 0.0
		for _, s := range b.Series {
			sum += at(s.Values, i)
		}
		top = max(top, sum)
	}
	top = Nice(top)
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" class="u-chart u-bars" viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="%s">`, w, h, esc(b.Label))
	sb.WriteString(`<title>` + esc(b.Label) + `</title>`)
	defs(&sb, b.ID, len(b.Series), w)
	// Grid lines at a quarter, a half and three quarters of the top.
	fmt.Fprintf(&sb, `<path class="grid" d="M0 %dH%dM0 %dH%dM0 %dH%d"/>`, h/4, w, h/2, w, h*3/4, w)
	y := func(v float64) int { return h - int(math.Round(v/top*float64(h))) }
	// Each series is one path: a vertical stroke per bar, as wide as the
	// bar, each move relative to the end of the one before (a year of days
	// stays small).
	bar := unit - gap
	for k, s := range b.Series {
		var d strings.Builder
		px, py := 0, 0 // where the last stroke ended
		for i := range n {
			below := 0.0
			for _, t := range b.Series[:k] {
				below += at(t.Values, i)
			}
			v := at(s.Values, i)
			y0, y1 := y(below), y(below+v)
			if v <= 0 || y0 == y1 {
				continue
			}
			x := i * unit
			if d.Len() == 0 {
				fmt.Fprintf(&d, "M%s %dV%d", half(2*x+bar), y0, y1)
			} else {
				fmt.Fprintf(&d, "m%d %dV%d", x-px, y0-py, y1)
			}
			px, py = x, y1
		}
		if d.Len() > 0 {
			fmt.Fprintf(&sb, `<path class="bar" stroke="%s" stroke-width="%d" d="%s"/>`, Fill(b.ID, k), bar, d.String())
		}
	}
	fmt.Fprintf(&sb, `<path class="base" d="M0 %dH%d"/>`, h, w)
	// A tooltip over each slot: its total and its series, largest first.
	sb.WriteString(`<g class="tips">`)
	for i, slot := range b.Slots {
		sum := 0.0
		type part struct {
			name string
			v    float64
		}
		var parts []part
		for _, s := range b.Series {
			if v := at(s.Values, i); v > 0 {
				sum += v
				parts = append(parts, part{s.Name, v})
			}
		}
		for a := 1; a < len(parts); a++ {
			for c := a; c > 0 && parts[c].v > parts[c-1].v; c-- {
				parts[c], parts[c-1] = parts[c-1], parts[c]
			}
		}
		// "Mar 3: $1.50; sonnet $1.00, gpt-5 $0.50, +2 more"; past three
		// months of days, the total alone (the table has the rest).
		tip := slot + ": " + b.Format(sum)
		if n > 92 {
			parts = nil
		}
		for k, p := range parts {
			sep := ", "
			if k == 0 {
				sep = "; "
			}
			if k == 3 {
				tip += fmt.Sprintf(", +%d more", len(parts)-3)
				break
			}
			tip += sep + p.name + " " + b.Format(p.v)
		}
		fmt.Fprintf(&sb, `<rect x="%d" width="%d" height="%d"><title>%s</title></rect>`, i*unit, unit, h, esc(tip))
	}
	sb.WriteString(`</g></svg>`)
	return sb.String(), top
}

// half writes n/2 with one decimal at most.
func half(n int) string {
	if n%2 == 0 {
		return fmt.Sprint(n / 2)
	}
	return fmt.Sprintf("%d.5", n/2)
}

// at returns values[i], 0 past the end.
func at(values []float64, i int) float64 {
	if i < len(values) {
		return values[i]
	}
	return 0
}

// Nice returns a round number at or above v: 1, 2 or 5 times a power of ten.
func Nice(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// Fill returns the fill of series k in the chart with id: its pattern.
func Fill(id string, k int) string {
	return fmt.Sprintf("url(#%s-p%d)", id, min(k, Patterns-1))
}

// defs writes the patterns of n series, sized for a chart w units wide:
// each is the series' colour (class sK) with its own marks over it
// (class "mk"), so series differ in more than colour.
func defs(sb *strings.Builder, id string, n, w int) {
	if n == 0 {
		return
	}
	size := max(6, w/90)
	sb.WriteString("<defs>")
	for k := range min(n, Patterns) {
		pattern(sb, id, k, size)
	}
	sb.WriteString("</defs>")
}

// pattern writes series k's pattern, size units square.
func pattern(sb *strings.Builder, id string, k, size int) {
	s, half := size, size/2
	fmt.Fprintf(sb, `<pattern id="%s-p%d" width="%d" height="%d" patternUnits="userSpaceOnUse"><rect class="s%d" width="%d" height="%d"/>`, id, k, s, s, k, s, s)
	switch k {
	case 1: // diagonal lines
		fmt.Fprintf(sb, `<path class="mk" d="M0 %dL%d 0M%d %dL%d %d"/>`, s, s, -half, half, half, -half)
	case 2: // dots
		fmt.Fprintf(sb, `<circle class="mk dot" cx="%d" cy="%d" r="%.1f"/>`, half, half, float64(s)/6)
	case 3: // horizontal lines
		fmt.Fprintf(sb, `<path class="mk" d="M0 %dH%d"/>`, half, s)
	case 4: // the other diagonal
		fmt.Fprintf(sb, `<path class="mk" d="M0 0L%d %d"/>`, s, s)
	case 5: // vertical lines
		fmt.Fprintf(sb, `<path class="mk" d="M%d 0V%d"/>`, half, s)
	case 6: // crosses
		fmt.Fprintf(sb, `<path class="mk" d="M0 0L%d %dM%d 0L0 %d"/>`, s, s, s, s)
	case 7: // squares
		fmt.Fprintf(sb, `<rect class="mk dot" x="%d" y="%d" width="%d" height="%d"/>`, s/4, s/4, half, half)
	}
	sb.WriteString(`</pattern>`)
}

// Swatch returns a small square in series k's colour and pattern, for a
// legend; id names its own pattern.
func Swatch(id string, k int) string {
	var sb strings.Builder
	sb.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="u-chart u-swatch" viewBox="0 0 14 14" width="14" height="14" aria-hidden="true"><defs>`)
	pattern(&sb, id, min(k, Patterns-1), 7)
	fmt.Fprintf(&sb, `</defs><rect fill="url(#%s-p%d)" width="14" height="14"/></svg>`, id, min(k, Patterns-1))
	return sb.String()
}

// Heatmap is a week's hours: one square per weekday and hour, its area
// growing with its value.
type Heatmap struct {
	Label string
	// Days name the rows, top to bottom.
	Days [7]string
	// Values holds each row's 24 hours.
	Values [7][24]float64
	Format func(float64) string
}

// SVG returns the heatmap: 24 columns, 7 rows of cells taller than wide
// (a row stays tall enough for its label on a phone), each holding a
// square.
func (m *Heatmap) SVG() string {
	const cell, tall = 20, 28
	top := 0.0
	for _, row := range m.Values {
		for _, v := range row {
			top = max(top, v)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" class="u-chart u-heat" viewBox="0 0 %d %d" role="img" aria-label="%s"><title>%s</title>`, 24*cell, 7*tall, esc(m.Label), esc(m.Label))
	fmt.Fprintf(&sb, `<path class="grid" d="M0 0H%dV%dH0z"/>`, 24*cell, 7*tall)
	for d, row := range m.Values {
		for hr, v := range row {
			tip := fmt.Sprintf("%s %02d:00–%02d:00: %s", m.Days[d], hr, hr+1, m.Format(v))
			if v <= 0 || top <= 0 {
				fmt.Fprintf(&sb, `<rect class="none" x="%d" y="%d" width="%d" height="%d"><title>%s</title></rect>`, hr*cell+9, d*tall+tall/2-1, 2, 2, esc(tip))
				continue
			}
			// The square's area is in proportion to the value; its shade too.
			side := max(3, int(math.Round(math.Sqrt(v/top)*(cell-2))))
			fmt.Fprintf(&sb, `<rect class="cell" x="%d" y="%d" width="%d" height="%d" fill-opacity="%.2f"><title>%s</title></rect>`,
				hr*cell+(cell-side)/2, d*tall+(tall-side)/2, side, side, 0.35+0.65*v/top, esc(tip))
		}
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

// Part is one part of a Meter.
type Part struct {
	Value float64
	// Series is the part's colour and pattern (see Fill); -1 draws it as
	// the chart's "abandoned" kind, hatched.
	Series int
	Title  string
}

// Meter returns one horizontal bar split into parts, its whole length
// standing for full; id names its patterns, label is its accessible name.
func Meter(id, label string, full float64, parts []Part) string {
	const w, h = 200, 12
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" class="u-chart u-meter" viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="%s"><defs>`, w, h, esc(label))
	used := map[int]bool{}
	for _, p := range parts {
		if k := p.Series; k >= 0 && !used[k] {
			used[k] = true
			pattern(&sb, id, min(k, Patterns-1), 6)
		}
	}
	fmt.Fprintf(&sb, `<pattern id="%s-ab" width="6" height="6" patternUnits="userSpaceOnUse"><rect class="ab" width="6" height="6"/><path class="mk" d="M0 6L6 0M-3 3L3 -3M3 9L9 3"/></pattern>`, id)
	fmt.Fprintf(&sb, `</defs><rect class="track" width="%d" height="%d"/>`, w, h)
	x := 0.0
	for _, p := range parts {
		if p.Value <= 0 || full <= 0 {
			continue
		}
		pw := p.Value / full * w
		fill := fmt.Sprintf("url(#%s-ab)", id)
		if p.Series >= 0 {
			fill = Fill(id, p.Series)
		}
		fmt.Fprintf(&sb, `<rect fill="%s" x="%.1f" width="%.1f" height="%d"><title>%s</title></rect>`, fill, x, pw, h, esc(p.Title))
		x += pw
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

func esc(s string) string { return html.EscapeString(strings.ToValidUTF8(s, "\uFFFD")) }
