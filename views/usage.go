package views

// UsageView is the usage page: what sessions cost, in numbers and charts.
type UsageView struct {
	Demo     bool
	Controls UsageControls
	// Zone names the time zone of the days and hours shown.
	Zone string
	// Span describes the range shown ("Mar 3 – Apr 1, 2025").
	Span    string
	Empty   bool
	Summary []UsageStat
	Cost    UsageBars // cost per day stacked by model or project
	Tokens  UsageBars // tokens per day by kind
	Waste   UsageBars // cost per day: resumed and abandoned
	// WasteMeter is the whole range's abandoned share as one bar (SVG).
	WasteMeter string
	WasteShare string
	Heat       UsageHeat
	Top        []UsageTop
	// Events is the URL of the page's live stream.
	Events string
}

// UsageControls are the page's range, filters and toggles; each is in the URL.
type UsageControls struct {
	Range        string // UsageRanges' values, or "custom"
	Since, Until string // the days shown, YYYY-MM-DD
	TZ           string
	Project      string
	Model        string
	Machine      string
	Projects     []UsageOption
	Models       []UsageOption
	Machines     []UsageOption
	By           string // "model" or "project": how the cost chart stacks
	Heat         string // "cost" or "turns": what the heatmap counts
	// The URLs of the page with one toggle flipped.
	ByModelURL, ByProjectURL, HeatCostURL, HeatTurnsURL string
}

// UsageRanges are the range picker's choices besides from–to.
var UsageRanges = []UsageOption{{"7d", "7 days"}, {"30d", "30 days"}, {"90d", "90 days"}, {"all", "All time"}, {"custom", "From–to"}}

// UsageOption is one choice of a select.
type UsageOption struct {
	Value, Label string
}

// UsageStat is one number of the summary.
type UsageStat struct {
	Label, Value, Hint string
}

// UsageBars is a bar chart with its axis, legend and table.
type UsageBars struct {
	ID, Title string
	SVG       string
	// Top and Mid label the chart's top and middle lines; First and Last its first and last bars.
	Top, Mid, First, Last string
	Legend                []UsageLegend
	Head                  []string // the table's columns
	Rows                  [][]string
}

// UsageLegend is one series of a chart.
type UsageLegend struct {
	Name, Swatch string
}

// UsageHeat is the weekday-by-hour heatmap with its table.
type UsageHeat struct {
	Title string
	SVG   string
	Days  [7]string
	Head  []string   // the table's columns: the hour, then the days
	Rows  [][]string // one per hour
}

// UsageTop is one of the costliest sessions.
type UsageTop struct {
	URL, Title, Project, When string
	Cost, Abandoned           string
	Meter                     string // SVG
}
