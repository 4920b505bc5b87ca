package shape

import (
	"io"
)

// Member is one session of a family of forks.
type Member struct {
	Key, Title string
	Href       string // the session's page
	Parent     int    // index of the member it was forked from, -1 for the family's first
	At         string // the entry of the parent it left from ("" when unknown)
	AtHref     string
	Gone       string // for a first member whose parent is not in the root: why ("parent file gone", "outside the root")
	Current    bool   // the session whose page asked
}

// Family is the members of one family, each after its parent.
type Family []Member

// Render writes the family as an SVG lineage graph: one row per member,
// indented under its parent with a connector labeled by the entry it left from.
func (f Family) Render(w io.Writer) error {
	const rowH, indent, left = 30, 22, 12
	depth := make([]int, len(f))
	widest := 0
	for i, m := range f {
		if m.Parent >= 0 && m.Parent < i {
			depth[i] = depth[m.Parent] + 1
		}
		widest = max(widest, depth[i])
	}
	width, height := left+widest*indent+520, 16+len(f)*rowH
	ew := &errWriter{w: w}
	// Served on its own, under a CSP without inline styles: colours are attributes.
	ew.printf(`<svg xmlns="http://www.w3.org/2000/svg" class="family" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="Lineage of %d forked sessions" font-family="system-ui, sans-serif" font-size="13">`,
		width, height, width, height, len(f))
	ew.printf(`<rect width="100%%" height="100%%" fill="#ffffff"/>`)
	for i, m := range f {
		x, y := left+depth[i]*indent, 16+i*rowH
		if m.Parent >= 0 && m.Parent < i {
			px, py := left+depth[m.Parent]*indent, 16+m.Parent*rowH
			ew.printf(`<path class="fam-edge" d="M%d %dV%dH%d" fill="none" stroke="#8a909c" stroke-width="1.5"/>`, px, py+6, y, x-6)
		}
		cls := "fam-node"
		if m.Current {
			cls += " current"
		}
		if m.Gone != "" {
			ew.printf(`<rect class="fam-gone" x="%d" y="%d" width="10" height="10" fill="none" stroke="#c9302c" stroke-dasharray="2 2"/><text class="fam-note" x="%d" y="%d" fill="#5f6673">%s</text>`,
				x-5, y-5, x+12, y+4, esc(m.Gone))
			continue
		}
		stroke := ""
		if m.Current {
			stroke = ` stroke="#1f2329" stroke-width="2"`
		}
		ew.printf(`<a href="%s"><circle class="%s" cx="%d" cy="%d" r="6" fill="#8250df"%s/><text class="fam-title" x="%d" y="%d" fill="#1f2329">%s</text></a>`,
			attr(m.Href), cls, x, y, stroke, x+12, y+4, esc(oneLine(m.Title, 60)))
		if m.At != "" {
			ew.printf(`<a href="%s"><text class="fam-at" x="%d" y="%d" fill="#3d63dd" font-size="11">from %s</text></a>`, attr(m.AtHref), x+12, y+16, esc(m.At))
		}
	}
	ew.printf(`</svg>`)
	return ew.err
}
