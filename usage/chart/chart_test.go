package chart

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update after checking)", name)
	}
}

// wellFormed checks that s parses as XML, and returns its elements by name.
func wellFormed(t *testing.T, s string) map[string]int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	names := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, s)
		}
		if e, ok := tok.(xml.StartElement); ok {
			names[e.Name.Local]++
		}
	}
}

func dollars(v float64) string { return fmt.Sprintf("$%.2f", v) }

func TestBarsGolden(t *testing.T) {
	b := &Bars{ID: "cost", Label: "Cost per day by model", Format: dollars,
		Slots: []string{"Mar 29", "Mar 30", "Mar 31", "Apr 1"},
		Series: []Series{
			{Name: "claude-sonnet-4-5", Values: []float64{1.5, 0, 3, 0.25}},
			{Name: "gpt-5 <&>", Values: []float64{0.5, 2, 0, 0}},
			{Name: "haiku", Values: []float64{0, 0.125}},
		}}
	svg, top := b.SVG()
	if top != 5 {
		t.Errorf("top %v, want 5 (above the highest bar, 3)", top)
	}
	names := wellFormed(t, svg)
	if names["title"] != 5 || names["rect"] < 4 {
		t.Errorf("elements %v: want the chart's title and one tooltip per day", names)
	}
	if strings.Contains(svg, "<&>") || !strings.Contains(svg, "gpt-5 &lt;&amp;&gt;") {
		t.Error("a series name is not escaped")
	}
	if !strings.Contains(svg, "Mar 30: $2.12; gpt-5 &lt;&amp;&gt; $2.00, haiku $0.12") {
		t.Error("Mar 30's tooltip does not list its series, largest first")
	}
	golden(t, "bars.golden.svg", svg)
}

func TestHeatmapGolden(t *testing.T) {
	m := &Heatmap{Label: "Cost by weekday and hour", Format: dollars, Days: [7]string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}}
	m.Values[0][9] = 4
	m.Values[0][10] = 1
	m.Values[4][23] = 0.25
	svg := m.SVG()
	if n := wellFormed(t, svg)["rect"]; n != 7*24 {
		t.Errorf("%d squares, want %d", n, 7*24)
	}
	// The largest value gets the largest square: areas grow with values.
	if !strings.Contains(svg, `width="18" height="18" fill-opacity="1.00"><title>Mon 09:00–10:00: $4.00</title>`) ||
		!strings.Contains(svg, `width="9" height="9" fill-opacity="0.51"><title>Mon 10:00–11:00: $1.00</title>`) {
		t.Error("squares do not grow with their values")
	}
	golden(t, "heatmap.golden.svg", svg)
}

func TestMeterGolden(t *testing.T) {
	svg := Meter("top1", "Fix the <login> bug: $3.00", 4, []Part{{Value: 2, Series: 0, Title: "resumed $2.00"}, {Value: 1, Series: -1, Title: "abandoned $1.00"}})
	wellFormed(t, svg)
	if !strings.Contains(svg, `x="100.0" width="50.0"`) || !strings.Contains(svg, "&lt;login&gt;") {
		t.Errorf("meter: %s", svg)
	}
	golden(t, "meter.golden.svg", svg)
	golden(t, "swatch.golden.svg", Swatch("legend", 3))
}

func TestNice(t *testing.T) {
	for v, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 1.01: 2, 2.4: 2.5, 7: 10, 12: 20, 4500: 5000, 0.0004: 0.0005} {
		if got := Nice(v); got != want {
			t.Errorf("Nice(%v) = %v, want %v", v, got, want)
		}
	}
}

// TestYearSize checks the budget: a year of daily data, stacked by eight
// series on most days, in at most 60 KB of SVG.
func TestYearSize(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	b := &Bars{ID: "cost", Label: "Cost per day by model", Format: dollars}
	for i := range 365 {
		b.Slots = append(b.Slots, day.AddDate(0, 0, i).Format("Jan 2 2006"))
	}
	for k := range Patterns {
		s := Series{Name: fmt.Sprintf("provider/model-number-%d", k)}
		for range 365 {
			v := 0.0
			if r.Intn(10) < 8 {
				v = r.Float64() * 20
			}
			s.Values = append(s.Values, v)
		}
		b.Series = append(b.Series, s)
	}
	svg, _ := b.SVG()
	wellFormed(t, svg)
	if n := len(svg); n > 60<<10 {
		t.Errorf("a year of daily data takes %d bytes of SVG, over 60 KB", n)
	}
	t.Logf("a year of daily data, 8 series: %d bytes", len(svg))
	var buf bytes.Buffer
	buf.WriteString(svg)
}
