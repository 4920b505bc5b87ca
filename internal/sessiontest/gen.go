// Package sessiontest makes pi session files for the tests and benchmarks
// of every package: a seeded generator of realistic sessions and trees of
// them, and builders of hand-made lines.
package sessiontest

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The generator writes realistic pi v3 session files for tests and
// benchmarks. Output depends only on the seed and options, so a cached
// benchmark tree can be reused as long as Version is unchanged.

// Version must change whenever the generator's output changes: it names
// the benchmark cache directories.
const Version = 3

// ChainScale makes a generated 100k-entry chain (Options{Chain: true}) about 65 MB.
const ChainScale = 0.15

// Options tunes a generated session.
type Options struct {
	Chain    bool      // every entry's parent is the previous entry: no branches, no branch summaries
	BigEvery int       // about one tool output in bigEvery is 100 KB–2 MB; 0 for none
	Scale    float64   // multiplies the sizes of ordinary texts; 0 means 1
	Start    time.Time // header time; zero means 2026-01-01T00:00:00Z plus a seeded offset
	Cwd      string    // header cwd; "" means /home/dev/project
	ID       string    // session id; "" means a seeded UUIDv7
	NoHeader bool      // write entries only (to append to an existing session)
}

// Stats describes what Write wrote.
type Stats struct {
	ID      string // session id
	Bytes   int64  // bytes written
	Entries int    // entry lines written (header excluded)
	Leaf    string // id of the last entry
	Start   time.Time
}

// Write writes a session of `entries` entry lines (plus the header) to w.
func Write(w io.Writer, seed int64, entries int, o Options) (Stats, error) {
	g := newGenState(seed, o)
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &genCounter{w: bw}
	if !o.NoHeader {
		g.header()
		if _, err := cw.Write(g.buf); err != nil {
			return Stats{}, err
		}
	}
	for g.n < entries {
		g.buf = g.buf[:0]
		g.next(entries - g.n)
		if _, err := cw.Write(g.buf); err != nil {
			return Stats{}, err
		}
	}
	if err := bw.Flush(); err != nil {
		return Stats{}, err
	}
	leaf := ""
	if len(g.ids) > 0 {
		leaf = g.ids[g.leaf]
	}
	return Stats{ID: g.sid, Bytes: cw.n, Entries: g.n, Leaf: leaf, Start: g.start}, nil
}

// String returns a generated session as a string, for small test inputs.
func String(seed int64, entries int, o Options) string {
	var b strings.Builder
	b.Grow(entries * 900) // about the mean entry size, so the builder rarely copies
	if _, err := Write(&b, seed, entries, o); err != nil {
		panic(err)
	}
	return b.String()
}

type genCounter struct {
	w io.Writer
	n int64
}

func (c *genCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// genState is the state of one session being generated.
type genState struct {
	r     *rand.Rand
	o     Options
	buf   []byte
	sid   string
	start time.Time
	now   int64 // current time in Unix ms

	ids    []string // entry ids in file order
	parent []int    // parent position of each entry, -1 for roots
	kind   []uint8  // what each entry is (genKindUser, genKindAssistant, ...)
	seen   map[string]bool
	leaf   int // position of the current leaf, -1 before the first entry
	n      int // entries written

	provider, model string
	pending         []genCall // tool calls awaiting their results
	sinceCompact    int
	turn            int
}

type genCall struct{ id, name string }

// Entry kinds remembered per position, to choose plausible branch points and label targets.
const (
	genKindUser uint8 = iota
	genKindAssistant
	genKindToolResult
	genKindOther
)

var genModels = []struct{ provider, model string }{
	{"anthropic", "claude-sonnet-4-5"},
	{"anthropic", "claude-opus-4-1"},
	{"openai", "gpt-5"},
	{"google", "gemini-2.5-pro"},
}

var genTools = []string{"bash", "read", "edit", "write", "grep", "find", "ls"}

func newGenState(seed int64, o Options) *genState {
	if o.Scale == 0 {
		o.Scale = 1
	}
	if o.Cwd == "" {
		o.Cwd = "/home/dev/project"
	}
	g := &genState{r: rand.New(rand.NewSource(seed)), o: o, seen: map[string]bool{}, leaf: -1}
	g.start = o.Start
	if g.start.IsZero() {
		g.start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(g.r.Int63n(int64(300 * 24 * time.Hour))))
	}
	g.start = g.start.Truncate(time.Millisecond)
	g.now = g.start.UnixMilli()
	g.sid = o.ID
	if g.sid == "" {
		g.sid = g.uuid7()
	}
	m := genModels[g.r.Intn(len(genModels))]
	g.provider, g.model = m.provider, m.model
	return g
}

// uuid7 returns a UUIDv7-shaped id for the start time with seeded random bits.
func (g *genState) uuid7() string {
	ms := uint64(g.start.UnixMilli())
	a, b := g.r.Uint64(), g.r.Uint64()
	return fmt.Sprintf("%08x-%04x-7%03x-%04x-%012x", ms>>16, ms&0xffff, a&0xfff, 0x8000|(b>>48)&0x3fff, b&0xffffffffffff)
}

// newID returns a fresh 8-hex-digit id, as pi's generateId does.
func (g *genState) newID() string {
	for {
		id := fmt.Sprintf("%08x", g.r.Uint32())
		if !g.seen[id] {
			g.seen[id] = true
			return id
		}
	}
}

// tick advances the clock by a plausible gap.
func (g *genState) tick(maxMs int) int64 {
	g.now += int64(50 + g.r.Intn(maxMs))
	return g.now
}

// size draws a log-normal size with the given median, scaled and clamped.
func (g *genState) size(median float64, lo, hi int) int {
	v := median * g.o.Scale * math.Exp(0.9*g.r.NormFloat64())
	return max(lo, min(hi, int(v)))
}

func (g *genState) header() {
	g.buf = append(g.buf[:0], `{"type":"session","version":3,"id":`...)
	g.buf = strconv.AppendQuote(g.buf, g.sid)
	g.buf = append(g.buf, `,"timestamp":"`...)
	g.buf = genISO(g.buf, g.now)
	g.buf = append(g.buf, `","cwd":`...)
	g.buf = strconv.AppendQuote(g.buf, g.o.Cwd)
	g.buf = append(g.buf, "}\n"...)
}

func genISO(b []byte, ms int64) []byte {
	return time.UnixMilli(ms).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
}

// begin writes the common entry fields, leaving the object open; it records the entry.
func (g *genState) begin(typ string, parent int, k uint8) {
	id := g.newID()
	g.buf = append(g.buf, `{"type":"`...)
	g.buf = append(g.buf, typ...)
	g.buf = append(g.buf, `","id":"`...)
	g.buf = append(g.buf, id...)
	if parent < 0 {
		g.buf = append(g.buf, `","parentId":null,"timestamp":"`...)
	} else {
		g.buf = append(g.buf, `","parentId":"`...)
		g.buf = append(g.buf, g.ids[parent]...)
		g.buf = append(g.buf, `","timestamp":"`...)
	}
	g.buf = genISO(g.buf, g.now)
	g.buf = append(g.buf, '"')
	g.ids = append(g.ids, id)
	g.parent = append(g.parent, parent)
	g.kind = append(g.kind, k)
	g.leaf = len(g.ids) - 1
	g.n++
}

func (g *genState) end() { g.buf = append(g.buf, "}\n"...) }

// ancestor returns the entry `back` steps above the leaf (or the root).
func (g *genState) ancestor(back int) int {
	v := g.leaf
	for ; back > 0 && g.parent[v] >= 0; back-- {
		v = g.parent[v]
	}
	return v
}

// next writes one or more entries (at most left) that continue the conversation.
func (g *genState) next(left int) {
	switch {
	case g.n == 0:
		g.modelChange(g.leaf)
		if left > 1 {
			g.thinkingChange()
		}
		return
	case len(g.pending) > 0:
		g.toolResult()
		return
	}
	if k := g.kind[g.leaf]; k == genKindToolResult || k == genKindUser {
		g.assistant()
		return
	}
	// Between turns: the user speaks, or one of the rarer entries happens.
	p := g.r.Intn(1000)
	switch {
	case p < 15 && g.n > 2:
		g.label()
	case p < 20:
		g.sessionInfo()
	case p < 30:
		g.modelChangeRandom()
	case p < 35:
		g.thinkingChange()
	case p < 45:
		g.customMessage()
	case p < 50:
		g.custom()
	case p < 53:
		g.usage()
	case p < 80 && g.sinceCompact > 150:
		g.compaction()
	case p < 110 && !g.o.Chain && g.n > 10:
		g.branch()
	default:
		g.user(g.leaf)
	}
}

func (g *genState) modelChange(parent int) {
	g.tick(500)
	g.begin("model_change", parent, genKindOther)
	g.buf = append(g.buf, `,"provider":"`...)
	g.buf = append(g.buf, g.provider...)
	g.buf = append(g.buf, `","modelId":"`...)
	g.buf = append(g.buf, g.model...)
	g.buf = append(g.buf, '"')
	g.end()
}

func (g *genState) modelChangeRandom() {
	m := genModels[g.r.Intn(len(genModels))]
	g.provider, g.model = m.provider, m.model
	g.modelChange(g.leaf)
}

func (g *genState) thinkingChange() {
	g.tick(500)
	g.begin("thinking_level_change", g.leaf, genKindOther)
	levels := []string{"off", "minimal", "low", "medium", "high"}
	g.buf = append(g.buf, `,"thinkingLevel":"`...)
	g.buf = append(g.buf, levels[g.r.Intn(len(levels))]...)
	g.buf = append(g.buf, '"')
	g.end()
}

// text appends a JSON string of about n bytes of prose or code.
func (g *genState) text(n int) {
	g.buf = append(g.buf, '"')
	g.buf = genText(g.buf, g.r, n)
	g.buf = append(g.buf, '"')
}

func (g *genState) user(parent int) {
	g.tick(120000)
	g.turn++
	g.begin("message", parent, genKindUser)
	g.buf = append(g.buf, `,"message":{"role":"user","content":`...)
	n := g.size(180, 2, 20000)
	if g.r.Intn(3) == 0 {
		g.text(n)
	} else {
		g.buf = append(g.buf, `[{"type":"text","text":`...)
		g.text(n)
		g.buf = append(g.buf, '}')
		if g.r.Intn(400) == 0 { // a pasted screenshot
			g.buf = append(g.buf, `,{"type":"image","mimeType":"image/png","data":"`...)
			g.buf = genBase64(g.buf, g.r, 20000+g.r.Intn(200000))
			g.buf = append(g.buf, `"}`...)
		}
		g.buf = append(g.buf, ']')
	}
	g.buf = append(g.buf, `,"timestamp":`...)
	g.buf = strconv.AppendInt(g.buf, g.now, 10)
	g.buf = append(g.buf, "}"...)
	g.end()
}

func (g *genState) assistant() {
	g.tick(30000)
	g.begin("message", g.leaf, genKindAssistant)
	g.buf = append(g.buf, `,"message":{"role":"assistant","content":[`...)
	first := true
	sep := func() {
		if !first {
			g.buf = append(g.buf, ',')
		}
		first = false
	}
	if g.r.Intn(3) > 0 {
		sep()
		g.buf = append(g.buf, `{"type":"thinking","thinking":`...)
		g.text(g.size(400, 10, 30000))
		g.buf = append(g.buf, `,"thinkingSignature":"`...)
		g.buf = genBase64(g.buf, g.r, 96)
		g.buf = append(g.buf, `"}`...)
	}
	calls := 0
	if g.r.Intn(10) < 7 {
		calls = 1 + g.r.Intn(3)/2 + g.r.Intn(4)/3
	}
	if calls == 0 || g.r.Intn(2) == 0 {
		sep()
		g.buf = append(g.buf, `{"type":"text","text":`...)
		g.text(g.size(350, 5, 40000))
		g.buf = append(g.buf, '}')
	}
	for range calls {
		sep()
		tc := genCall{id: fmt.Sprintf("toolu_%016x%08x", g.r.Uint64(), g.r.Uint32()), name: genTools[g.r.Intn(len(genTools))]}
		g.pending = append(g.pending, tc)
		g.buf = append(g.buf, `{"type":"toolCall","id":"`...)
		g.buf = append(g.buf, tc.id...)
		g.buf = append(g.buf, `","name":"`...)
		g.buf = append(g.buf, tc.name...)
		g.buf = append(g.buf, `","arguments":{`...)
		switch tc.name {
		case "bash":
			g.buf = append(g.buf, `"command":`...)
			g.text(g.size(60, 3, 2000))
		case "edit":
			g.buf = append(g.buf, `"path":"src/`...)
			g.buf = genText(g.buf, g.r, 12)
			g.buf = append(g.buf, `.go","oldText":`...)
			g.text(g.size(200, 5, 8000))
			g.buf = append(g.buf, `,"newText":`...)
			g.text(g.size(250, 5, 8000))
		case "write":
			g.buf = append(g.buf, `"path":"src/`...)
			g.buf = genText(g.buf, g.r, 12)
			g.buf = append(g.buf, `.go","content":`...)
			g.text(g.size(1500, 20, 60000))
		default:
			g.buf = append(g.buf, `"path":"`...)
			g.buf = genText(g.buf, g.r, 20)
			g.buf = append(g.buf, '"')
		}
		g.buf = append(g.buf, "}}"...)
	}
	in, out := g.r.Intn(8000)+10, g.r.Intn(3000)+1
	cr, cw := g.r.Intn(150000), g.r.Intn(5000)
	g.buf = append(g.buf, `],"api":"`...)
	g.buf = append(g.buf, g.provider...)
	g.buf = append(g.buf, `-messages","provider":"`...)
	g.buf = append(g.buf, g.provider...)
	g.buf = append(g.buf, `","model":"`...)
	g.buf = append(g.buf, g.model...)
	g.buf = append(g.buf, `","usage":`...)
	g.appendUsage(in, out, cr, cw)
	stop := "stop"
	switch {
	case calls > 0:
		stop = "toolUse"
	case g.r.Intn(200) == 0:
		stop = "aborted"
	case g.r.Intn(300) == 0:
		stop = "error"
	}
	g.buf = append(g.buf, `,"stopReason":"`...)
	g.buf = append(g.buf, stop...)
	g.buf = append(g.buf, '"')
	if stop == "error" {
		g.buf = append(g.buf, `,"errorMessage":"overloaded_error: Overloaded"`...)
	}
	g.buf = append(g.buf, `,"timestamp":`...)
	g.buf = strconv.AppendInt(g.buf, g.now, 10)
	g.buf = append(g.buf, "}"...)
	g.end()
	g.sinceCompact++
}

func (g *genState) appendUsage(in, out, cr, cw int) {
	ci, co := float64(in)*3e-6, float64(out)*15e-6
	cc, cx := float64(cr)*0.3e-6, float64(cw)*3.75e-6
	g.buf = append(g.buf, `{"input":`...)
	g.buf = strconv.AppendInt(g.buf, int64(in), 10)
	g.buf = append(g.buf, `,"output":`...)
	g.buf = strconv.AppendInt(g.buf, int64(out), 10)
	g.buf = append(g.buf, `,"cacheRead":`...)
	g.buf = strconv.AppendInt(g.buf, int64(cr), 10)
	g.buf = append(g.buf, `,"cacheWrite":`...)
	g.buf = strconv.AppendInt(g.buf, int64(cw), 10)
	g.buf = append(g.buf, `,"totalTokens":`...)
	g.buf = strconv.AppendInt(g.buf, int64(in+out+cr+cw), 10)
	g.buf = append(g.buf, `,"cost":{"input":`...)
	g.buf = strconv.AppendFloat(g.buf, ci, 'g', -1, 64)
	g.buf = append(g.buf, `,"output":`...)
	g.buf = strconv.AppendFloat(g.buf, co, 'g', -1, 64)
	g.buf = append(g.buf, `,"cacheRead":`...)
	g.buf = strconv.AppendFloat(g.buf, cc, 'g', -1, 64)
	g.buf = append(g.buf, `,"cacheWrite":`...)
	g.buf = strconv.AppendFloat(g.buf, cx, 'g', -1, 64)
	g.buf = append(g.buf, `,"total":`...)
	g.buf = strconv.AppendFloat(g.buf, ci+co+cc+cx, 'g', -1, 64)
	g.buf = append(g.buf, "}}"...)
}

func (g *genState) toolResult() {
	tc := g.pending[0]
	g.pending = g.pending[1:]
	g.tick(20000)
	g.begin("message", g.leaf, genKindToolResult)
	g.buf = append(g.buf, `,"message":{"role":"toolResult","toolCallId":"`...)
	g.buf = append(g.buf, tc.id...)
	g.buf = append(g.buf, `","toolName":"`...)
	g.buf = append(g.buf, tc.name...)
	g.buf = append(g.buf, `","content":[{"type":"text","text":`...)
	n := g.size(900, 0, 50000)
	if g.o.BigEvery > 0 && g.r.Intn(g.o.BigEvery) == 0 {
		n = 100<<10 + g.r.Intn(1900<<10)
	}
	g.text(n)
	isErr := g.r.Intn(25) == 0
	g.buf = append(g.buf, `}],"isError":`...)
	g.buf = strconv.AppendBool(g.buf, isErr)
	if tc.name == "edit" && !isErr {
		g.buf = append(g.buf, `,"details":{"diff":`...)
		g.text(g.size(300, 10, 10000))
		g.buf = append(g.buf, '}')
	}
	g.buf = append(g.buf, `,"timestamp":`...)
	g.buf = strconv.AppendInt(g.buf, g.now, 10)
	g.buf = append(g.buf, "}"...)
	g.end()
}

// label sets (or now and then clears) a label on a recent entry of the path.
func (g *genState) label() {
	target := g.ancestor(g.r.Intn(20))
	g.tick(5000)
	g.begin("label", g.leaf, genKindOther)
	g.buf = append(g.buf, `,"targetId":"`...)
	g.buf = append(g.buf, g.ids[target]...)
	g.buf = append(g.buf, '"')
	if g.r.Intn(6) > 0 { // a cleared label has no label key
		names := []string{"checkpoint", "before refactor", "bug found", "works", "ça marche ✓", "todo"}
		g.buf = append(g.buf, `,"label":`...)
		g.buf = strconv.AppendQuote(g.buf, names[g.r.Intn(len(names))])
	}
	g.end()
}

func (g *genState) sessionInfo() {
	g.tick(5000)
	g.begin("session_info", g.leaf, genKindOther)
	g.buf = append(g.buf, `,"name":`...)
	g.text(g.size(25, 3, 80))
	g.end()
}

func (g *genState) customMessage() {
	g.tick(5000)
	g.begin("custom_message", g.leaf, genKindOther)
	g.buf = append(g.buf, `,"customType":"git-status","content":`...)
	g.text(g.size(200, 5, 5000))
	g.buf = append(g.buf, `,"display":`...)
	g.buf = strconv.AppendBool(g.buf, g.r.Intn(3) > 0)
	g.end()
}

func (g *genState) custom() {
	g.tick(1000)
	g.begin("custom", g.leaf, genKindOther)
	g.buf = append(g.buf, `,"customType":"todo-state","data":{"items":[`...)
	for k := range g.r.Intn(5) {
		if k > 0 {
			g.buf = append(g.buf, ',')
		}
		g.buf = append(g.buf, `{"done":`...)
		g.buf = strconv.AppendBool(g.buf, g.r.Intn(2) == 0)
		g.buf = append(g.buf, `,"text":`...)
		g.text(g.size(40, 3, 200))
		g.buf = append(g.buf, '}')
	}
	g.buf = append(g.buf, "]}"...)
	g.end()
}

func (g *genState) usage() {
	g.tick(1000)
	g.begin("usage", g.leaf, genKindOther)
	g.buf = append(g.buf, `,"kind":"title","provider":"`...)
	g.buf = append(g.buf, g.provider...)
	g.buf = append(g.buf, `","model":"`...)
	g.buf = append(g.buf, g.model...)
	g.buf = append(g.buf, `","usage":`...)
	g.appendUsage(g.r.Intn(2000), g.r.Intn(50), 0, 0)
	g.end()
}

// compaction summarises the path, keeping the last few entries.
func (g *genState) compaction() {
	kept := g.ancestor(4 + g.r.Intn(30))
	g.tick(60000)
	g.begin("compaction", g.leaf, genKindOther)
	g.buf = append(g.buf, `,"summary":`...)
	g.text(g.size(3000, 200, 20000))
	g.buf = append(g.buf, `,"firstKeptEntryId":"`...)
	g.buf = append(g.buf, g.ids[kept]...)
	g.buf = append(g.buf, `","tokensBefore":`...)
	g.buf = strconv.AppendInt(g.buf, int64(100000+g.r.Intn(100000)), 10)
	g.buf = append(g.buf, `,"details":{"readFiles":["src/main.go"],"modifiedFiles":[]}`...)
	g.end()
	g.sinceCompact = 0
}

// branch goes back to an earlier entry and continues from there, sometimes
// with a branch summary (pi's branchWithSummary), else with a user message.
func (g *genState) branch() {
	// Prefer an assistant reply that ended a turn, somewhere back on the path or anywhere.
	var target int
	if g.r.Intn(2) == 0 {
		target = g.ancestor(2 + g.r.Intn(40))
	} else {
		target = g.r.Intn(len(g.ids))
	}
	for k := 0; k < 10 && g.kind[target] != genKindAssistant; k++ {
		target = g.r.Intn(len(g.ids))
	}
	if g.kind[target] == genKindUser {
		target = g.parent[target] // never two user messages in a row
		if target < 0 {
			return
		}
	}
	if g.r.Intn(3) == 0 {
		from := g.leaf
		g.tick(10000)
		g.begin("branch_summary", target, genKindAssistant)
		g.buf = append(g.buf, `,"fromId":"`...)
		g.buf = append(g.buf, g.ids[from]...)
		g.buf = append(g.buf, `","summary":`...)
		g.text(g.size(600, 20, 5000))
		g.end()
		return
	}
	g.user(target)
}

// The text genPool: JSON-escaped prose and code tokens, sliced at token boundaries.
var (
	genPoolOnce sync.Once
	genPool     []byte
	genPoolEnds []int32 // end offset of every token
)

func genBuildPool() {
	r := rand.New(rand.NewSource(1))
	words := strings.Fields(`the a to of and in is it that for on with as this be are was func return if else
		err nil := } { ( ) [ ] package import struct type string int bool var const range for go defer
		Session Entry parentId timestamp message assistant user toolResult context compaction tree
		file.go main.go handler test fails passes build error warning TODO fix refactor update
		café naïve résumé → ✓ ✗ … 日本語 中文 한국어 Ωmega π≈3.14159 😀 🚀 \" \\ \t / # $ % & * + = < > | ~ @
		0 1 2 3 42 100 1024 0x1f 3.14 -7 1e9 true false null undefined NaN`)
	var b []byte
	var ends []int32
	for len(b) < 1<<20 {
		w := words[r.Intn(len(words))]
		b = append(b, w...)
		switch p := r.Intn(100); {
		case p < 8:
			b = append(b, `\n`...)
		case p < 10:
			b = append(b, `.\n\n`...)
		case p < 12:
			b = append(b, `\n    `...)
		default:
			b = append(b, ' ')
		}
		ends = append(ends, int32(len(b)))
	}
	genPool, genPoolEnds = b, ends
}

// genText appends about n bytes (at token granularity) of escaped genPool text.
func genText(b []byte, r *rand.Rand, n int) []byte {
	genPoolOnce.Do(genBuildPool)
	for n > 0 {
		k := r.Intn(len(genPoolEnds) - 1)
		start := int(genPoolEnds[k])
		// Find the token end at or after start+n within the genPool.
		endIdx := k + 1 + n/6
		if endIdx >= len(genPoolEnds) {
			endIdx = len(genPoolEnds) - 1
		}
		for endIdx < len(genPoolEnds)-1 && int(genPoolEnds[endIdx])-start < n {
			endIdx++
		}
		for endIdx > k+1 && int(genPoolEnds[endIdx-1])-start >= n {
			endIdx--
		}
		end := int(genPoolEnds[endIdx])
		b = append(b, genPool[start:end]...)
		n -= end - start
	}
	return b
}

// genBase64 appends n bytes of base64 text.
func genBase64(b []byte, r *rand.Rand, n int) []byte {
	raw := make([]byte, n*3/4+3)
	r.Read(raw)
	enc := base64.StdEncoding.EncodeToString(raw)
	return append(b, enc[:n/4*4]...)
}

// Tree fills dir with project folders of generated sessions totalling at
// least totalBytes (and at most one session more), laid out and named as pi
// does. It returns the files written, sorted, and their total size.
func Tree(dir string, totalBytes int64) ([]string, int64, error) {
	r := rand.New(rand.NewSource(totalBytes))
	nproj := int(min(40, 6+totalBytes/(32<<20)))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var (
		files []string
		total int64
	)
	for i := 0; total < totalBytes; {
		// Plan sessions for what is left, assuming a generous mean entry
		// size so that a round rarely overshoots; the next round makes up
		// the rest. Sizes depend only on the seeds, so the tree is reproducible.
		var jobs []genJob
		for planned := int64(0); planned < totalBytes-total; i++ {
			cwd := fmt.Sprintf("/home/dev/project-%02d", r.Intn(nproj))
			// Session lengths are long-tailed: most are short, a few run to thousands of entries.
			entries := int(min(20000, max(4, 120*math.Exp(1.3*r.NormFloat64()))))
			start := base.Add(time.Duration(i) * 17 * time.Minute).Add(time.Duration(r.Intn(600000)) * time.Millisecond)
			seed := r.Int63()
			o := Options{Cwd: cwd, Start: start, BigEvery: 400}
			o.ID = newGenState(seed, o).sid // only for the id, so the file can be named before it is written
			name := strings.NewReplacer(":", "-", ".", "-").Replace(start.UTC().Format("2006-01-02T15:04:05.000Z")) + "_" + o.ID + ".jsonl"
			jobs = append(jobs, genJob{filepath.Join(dir, "--"+strings.NewReplacer("/", "-", ":", "-").Replace(strings.TrimPrefix(cwd, "/"))+"--", name), seed, entries, o})
			planned += int64(entries) * 4000
		}
		n, err := genRun(jobs)
		total += n
		for _, j := range jobs {
			files = append(files, j.file)
		}
		if err != nil {
			return files, total, err
		}
	}
	slices.Sort(files)
	return files, total, nil
}

// genJob is one session file for Tree to write.
type genJob struct {
	file    string
	seed    int64
	entries int
	o       Options
}

// genRun writes the jobs in parallel and returns the bytes written.
func genRun(jobs []genJob) (int64, error) {
	var (
		mu    sync.Mutex
		total int64
		first error
	)
	ch := make(chan genJob)
	var wg sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for j := range ch {
				n, err := WriteFile(j.file, j.seed, j.entries, j.o)
				mu.Lock()
				total += n
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	return total, first
}

// WriteFile writes one generated session to file, creating its folder.
func WriteFile(file string, seed int64, entries int, o Options) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return 0, err
	}
	f, err := os.Create(file)
	if err != nil {
		return 0, err
	}
	st, err := Write(f, seed, entries, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return st.Bytes, err
}
