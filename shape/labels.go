package shape

// Labels on the map: each label's tag stays on its entry; its text goes to
// the right of the tag at the entry's height, or, when that place is taken
// (another label's text or tag, a branch point, the leaf), a few rows above
// or below it with a short line back to the tag, or is left out (the tag's
// title still names it). Places are chosen in the order the labels come
// (the path's first), from the estimated width of the text, so a drawing
// is the same for the same tree on any machine.

// box is a rectangle of the drawing, in its units; x1 and y1 are excluded.
type box struct{ x0, y0, x1, y1 int }

func (a box) overlaps(b box) bool { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 }

const (
	fontSize   = 11 // the labels' size in the stylesheet (static/css/map.css), in the drawing's units
	labelH     = 14 // the height a label's text takes, a pixel above and below included
	labelDX    = 26 // from the entry to the start of its label's text
	labelSteps = 4  // how many heights of a label its text may move up or down
)

// textWidth estimates how wide s is at fontSize in a bold sans-serif
// (a little wider than DejaVu Sans Bold, chromium's usual sans-serif on
// Linux, so that estimated boxes hold the drawn text).
func textWidth(s string) int {
	w := 0.0
	for _, r := range s {
		switch {
		case r == ' ' || r == 'i' || r == 'l' || r == 'j' || r == 'I' || r == '.' || r == ',' || r == ':' || r == ';' || r == '!' || r == '|' || r == '\'':
			w += 0.38
		case r == 'f' || r == 't' || r == 'r' || r == '(' || r == ')' || r == '[' || r == ']' || r == '-':
			w += 0.5
		case r == 'm' || r == 'w' || r == 'M' || r == 'W' || r == '@' || r == '%':
			w += 1.0
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			w += 0.76
		case r >= 0x1100: // CJK, emoji and other wide characters
			w += 1.05
		default:
			w += 0.68
		}
	}
	return int(w*fontSize) + 2
}

// textBox is the box of a label's text for an entry at (cx, cy), moved dy.
func textBox(cx, cy, dy, width int) box {
	return box{cx + labelDX - 1, cy + dy - labelH/2 + 1, cx + labelDX + width + 1, cy + dy + labelH/2 + 1}
}

// tagBox is the box of a label's tag for an entry at (cx, cy).
func tagBox(cx, cy int) box { return box{cx + 8, cy - 5, cx + 24, cy + 6} }

// placement is where a label's text is drawn: moved dy from its entry's
// height, or not at all.
type placement struct {
	dy    int
	shown bool
	box   box
}

// placeLabels places the texts of labels at anchors (entry positions) in
// order, each clear of the obstacles, of every tag and of the texts placed
// before it, inside 0..height.
func placeLabels(anchors [][2]int, widths []int, obstacles []box, height int) []placement {
	taken := append([]box(nil), obstacles...)
	for _, a := range anchors {
		taken = append(taken, tagBox(a[0], a[1]))
	}
	out := make([]placement, len(anchors))
	for k, a := range anchors {
		for step := 0; step <= 2*labelSteps; step++ {
			dy := (step + 1) / 2 * labelH // 0, +1, -1, +2, -2, … heights of a label
			if step%2 == 0 {
				dy = -dy
			}
			b := textBox(a[0], a[1], dy, widths[k])
			if b.y0 < 0 || b.y1 > height || hits(b, taken) {
				continue
			}
			out[k] = placement{dy: dy, shown: true, box: b}
			taken = append(taken, b)
			break
		}
	}
	return out
}

func hits(b box, taken []box) bool {
	for _, t := range taken {
		if b.overlaps(t) {
			return true
		}
	}
	return false
}
