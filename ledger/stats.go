package ledger

import (
	"sync"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/sessions"
)

// Totals are counts and usage summed with pi's arithmetic
// (AgentSession.getSessionStats): tokens and cost of assistant messages,
// of tool results, usage entries, compactions and branch summaries that
// carry usage, and counts of messages by role.
type Totals struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"` // input + output + cacheRead + cacheWrite, as pi sums them
	Cost       float64 `json:"cost"`

	UserMessages      int `json:"userMessages"`
	AssistantMessages int `json:"assistantMessages"`
	ToolCalls         int `json:"toolCalls"`
	ToolResults       int `json:"toolResults"`
	Messages          int `json:"messages"` // every message entry (pi's totalMessages)
	Compactions       int `json:"compactions"`
	BranchSummaries   int `json:"branchSummaries"`
	Errors            int `json:"errors"` // replies that stopped with an error or abort, and tool results marked as errors
	Entries           int `json:"entries"`
}

// Use is what one entry adds to Totals.
type Use struct {
	Input, Output, CacheRead, CacheWrite, Cost float64

	Calls  int32 // tool calls in an assistant message
	Usage  bool  // the entry carries usage that pi adds
	Failed bool  // a tool result marked as an error
	// File is the path a successful edit or write result changed (its
	// call's arguments), so a path's changed files count without reading.
	File string
	// Bucket is the key pi's /session breakdown files the usage under:
	// "provider/model" (the response model when pi recorded one), or
	// ToolsBucket for tool results, compactions and summaries.
	Bucket string
}

// ToolsBucket is the by-model key of usage no model is named for, as pi's
// /session shows it.
const ToolsBucket = "Tools/summaries"

// add adds entry e with use u to t, as getSessionStats does.
func (t *Totals) add(e *sessions.Entry, u *Use) {
	t.Entries++
	if u.Usage {
		t.Input += u.Input
		t.Output += u.Output
		t.CacheRead += u.CacheRead
		t.CacheWrite += u.CacheWrite
		t.Cost += u.Cost
		t.Total = t.Input + t.Output + t.CacheRead + t.CacheWrite
	}
	switch e.Type {
	case sessions.TypeCompaction:
		t.Compactions++
	case sessions.TypeBranchSummary:
		t.BranchSummaries++
	case sessions.TypeMessage:
		t.Messages++
		switch e.Role {
		case sessions.RoleUser:
			t.UserMessages++
		case sessions.RoleToolResult:
			t.ToolResults++
			if u.Failed {
				t.Errors++
			}
		case sessions.RoleAssistant:
			t.AssistantMessages++
			t.ToolCalls += int(u.Calls)
			if e.Flags.Has(sessions.FlagError) {
				t.Errors++
			}
		}
	}
}

// Tokens is the total the totals show in one number.
func (t Totals) Tokens() float64 { return t.Total }

// Stats are the totals of a session file as a whole, along one path, off
// it, and by model.
type Stats struct {
	File      Totals            `json:"file"`
	Path      Totals            `json:"path"`
	Abandoned Totals            `json:"abandoned"`
	ByModel   map[string]Totals `json:"byModel"`
}

// Ledger holds what each entry of a session adds to the totals, read once
// from the file, and each entry's subtree sums. Update extends it as pi
// appends, reading only the new lines. Safe for concurrent use.
type Ledger struct {
	mu     sync.Mutex
	epoch  uint64
	gen    uint64
	use    []Use
	parent []int // the parents the sums were made with
	sub    []Sub // sums over each entry's subtree, itself included
	// edits are the edit and write calls read whose results are not read
	// yet: call id → path.
	edits map[string]string
}

// Sub is the sum of a subtree: entries, tokens and cost.
type Sub struct {
	Entries int32
	Tokens  float64
	Cost    float64
}

// New returns an empty ledger; Update fills it.
func New() *Ledger { return &Ledger{} }

// Update brings the ledger up to the session r reads: only entries added
// since the last update are read, unless the file was read again from the
// start. A ledger already at a later snapshot of the same reading stays
// there: its entries' uses are the snapshot's, and subtree sums may count
// entries appended since.
func (l *Ledger) Update(r *sessions.Reader) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.updateLocked(r)
}

func (l *Ledger) updateLocked(r *sessions.Reader) error {
	s := r.Session()
	if l.epoch == s.Epoch() && len(l.use) >= len(s.Entries) && len(l.use) > 0 {
		// As this snapshot, or a later one of the same reading (readers of
		// snapshots of one file run side by side): what an earlier
		// snapshot holds is the same in a later one, entries only appended.
		return nil
	}
	if l.epoch != s.Epoch() || len(l.use) > len(s.Entries) {
		l.use, l.parent, l.sub, l.edits = l.use[:0], l.parent[:0], l.sub[:0], nil
	}
	if l.edits == nil {
		l.edits = map[string]string{}
	}
	from := len(l.use)
	seq := r.Sequential()
	defer seq.Close()
	var buf []byte // each line read into the last one's bytes: none is kept
	for i := from; i < len(s.Entries); i++ {
		u, err := readUse(seq, i, l.edits, &buf)
		if err != nil {
			l.use = l.use[:from]
			return err
		}
		l.use = append(l.use, u)
	}
	l.sums(s, from)
	l.epoch, l.gen = s.Epoch(), s.Gen()
	return nil
}

// sums keeps the subtree sums current: entries from `from` on are new.
// When earlier entries kept their parents, each new entry is added to its
// ancestors; otherwise (an append re-linked the tree) they are made again.
func (l *Ledger) sums(s *sessions.Session, from int) {
	// A few new entries are each added to their ancestors; many (a first
	// reading, a long batch) make the sums again in one pass, which costs
	// O(entries) rather than O(new entries × depth).
	same := from > 0 && len(l.parent) == from && len(s.Entries)-from <= 64
	for i := 0; same && i < from; i++ {
		same = l.parent[i] == s.Parent(i)
	}
	if !same {
		l.parent = l.parent[:0]
		for i := range s.Entries {
			l.parent = append(l.parent, s.Parent(i))
		}
		l.sub = make([]Sub, len(s.Entries))
		// Children before parents: the reverse of a pre-order walk.
		order := make([]int, 0, len(s.Entries))
		s.Walk(func(i, _ int) bool { order = append(order, i); return true })
		for k := len(order) - 1; k >= 0; k-- {
			i := order[k]
			l.sub[i].add(l.own(i))
			if p := s.Parent(i); p >= 0 {
				l.sub[p].add(l.sub[i])
			}
		}
		return
	}
	for i := from; i < len(s.Entries); i++ {
		l.parent = append(l.parent, s.Parent(i))
	}
	l.sub = append(l.sub, make([]Sub, len(s.Entries)-from)...)
	for i := from; i < len(s.Entries); i++ {
		own := l.own(i)
		for v := i; v >= 0; v = s.Parent(v) {
			l.sub[v].add(own)
		}
	}
}

func (l *Ledger) own(i int) Sub {
	u := &l.use[i]
	return Sub{Entries: 1, Tokens: u.Input + u.Output + u.CacheRead + u.CacheWrite, Cost: u.Cost}
}

func (a *Sub) add(b Sub) {
	a.Entries += b.Entries
	a.Tokens += b.Tokens
	a.Cost += b.Cost
}

// Subtree returns the sums over entry i's subtree, i included.
func (l *Ledger) Subtree(i int) Sub {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < 0 || i >= len(l.sub) {
		return Sub{}
	}
	return l.sub[i]
}

// Use returns what entry i adds.
func (l *Ledger) Use(i int) Use {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < 0 || i >= len(l.use) {
		return Use{}
	}
	return l.use[i]
}

// Sum returns the totals of the entries at the given positions, in that order.
func (l *Ledger) Sum(s *sessions.Session, positions []int) Totals {
	l.mu.Lock()
	defer l.mu.Unlock()
	var t Totals
	for _, i := range positions {
		if i >= 0 && i < len(l.use) {
			t.add(&s.Entries[i], &l.use[i])
		}
	}
	return t
}

// Stats returns the file's totals (what pi's /session shows), those of the
// path from a root to leaf, those of every entry off that path, and the
// file's totals by model. leaf < 0 leaves path and abandoned empty.
func (l *Ledger) Stats(s *sessions.Session, leaf int) Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := Stats{ByModel: map[string]Totals{}}
	on := make([]bool, len(s.Entries))
	for _, p := range s.Path(leaf) {
		on[p] = true
	}
	// The ledger may be at a later snapshot than s (see Update): s's entries only.
	n := min(len(l.use), len(s.Entries))
	for i := range n {
		e, u := &s.Entries[i], &l.use[i]
		if e.Type == sessions.TypeSession {
			continue
		}
		st.File.add(e, u)
		if leaf >= 0 && !on[i] {
			st.Abandoned.add(e, u)
		}
		if u.Bucket != "" {
			t := st.ByModel[u.Bucket]
			t.add(e, u)
			st.ByModel[u.Bucket] = t
		}
	}
	for _, p := range s.Path(leaf) {
		if p < n {
			st.Path.add(&s.Entries[p], &l.use[p])
		}
	}
	return st
}

// Files returns the paths that successful edit and write calls changed
// along the entries at positions, in order of first change.
func (l *Ledger) Files(positions []int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, p := range positions {
		if p < len(l.use) {
			if f := l.use[p].File; f != "" && !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// readUse reads what entry i adds. Only lines that can carry usage or tool
// calls are read, into *buf when it is large enough (it keeps the larger
// of the two). edits holds the edit and write calls waiting for results.
func readUse(r *sessions.Reader, i int, edits map[string]string, buf *[]byte) (Use, error) {
	e := &r.Session().Entries[i]
	switch {
	case e.Type == sessions.TypeMessage && (e.Role == sessions.RoleAssistant || e.Role == sessions.RoleToolResult):
	case e.Type == sessions.TypeUsage, e.Type == sessions.TypeCompaction, e.Type == sessions.TypeBranchSummary:
	default:
		return Use{}, nil
	}
	line, err := r.RawQuickInto(*buf, i)
	if err != nil {
		return Use{}, err
	}
	if cap(line) > cap(*buf) {
		*buf = line[:0]
	}
	return useOf(e, line, edits), nil
}

// useOf reads the usage, tool calls and model of an entry line.
func useOf(e *sessions.Entry, line []byte, edits map[string]string) Use {
	var u Use
	var usage, provider, model, response, content, isError, callID []byte
	js.Members(line, func(m js.Member) {
		switch string(js.KeyBytes(m.Key)) {
		case "usage":
			usage = m.Val
		case "provider":
			provider = m.Val
		case "model":
			model = m.Val
		case "message":
			if e.Type != sessions.TypeMessage {
				break
			}
			js.Members(m.Val, func(m js.Member) {
				switch string(js.KeyBytes(m.Key)) {
				case "usage":
					usage = m.Val
				case "provider":
					provider = m.Val
				case "model":
					model = m.Val
				case "responseModel":
					response = m.Val
				case "content":
					content = m.Val
				case "isError":
					isError = m.Val
				case "toolCallId":
					callID = m.Val
				}
			})
		}
	})
	if e.Type == sessions.TypeMessage && e.Role == sessions.RoleAssistant {
		for _, b := range sessions.NewContent(content).ToolCalls() {
			u.Calls++
			if edits != nil && (b.Name == "edit" || b.Name == "write") {
				if p := b.ToolArgs().Path; p != "" {
					edits[b.ID] = p
				}
			}
		}
	}
	u.Failed = e.Role == sessions.RoleToolResult && js.Truthy(isError)
	if e.Role == sessions.RoleToolResult && edits != nil {
		id := js.Str(callID)
		if p, ok := edits[id]; ok {
			delete(edits, id)
			if !u.Failed {
				u.File = p
			}
		}
	}
	us, ok := sessions.DecodeUsage(usage)
	if !ok {
		return u
	}
	u.Usage = true
	u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Cost = us.Input, us.Output, us.CacheRead, us.CacheWrite, us.Cost
	switch {
	case e.Type == sessions.TypeMessage && e.Role == sessions.RoleAssistant:
		if len(response) > 0 && !js.IsNull(response) {
			model = response
		}
		u.Bucket = js.Str(provider) + "/" + js.Str(model)
	case e.Type == sessions.TypeUsage:
		u.Bucket = js.Str(provider) + "/" + js.Str(model)
	default:
		u.Bucket = ToolsBucket
	}
	return u
}
