package usage

import (
	"encoding/json"
	"io"
	"path"
	"strings"
	"time"
)

// The JSON a report writes is shaped as @ccusage/pi's --json output (18.x):
// {"daily"|"weekly"|"monthly"|"sessions"|"projects": [...], "totals": {...}},
// each entry with its key ("date", "week", "month", or "sessionId" and
// "projectPath", or "project"), "source", the four token counts, "totalCost",
// "modelsUsed" and "modelBreakdowns". totalTokens (as ccusage for Claude
// Code writes it) and piweb's additions are extra fields, which scripts
// written for ccusage do not read.

// jsonSums are the sums every entry and the totals carry.
type jsonSums struct {
	InputTokens         int64   `json:"inputTokens"`
	OutputTokens        int64   `json:"outputTokens"`
	CacheCreationTokens int64   `json:"cacheCreationTokens"`
	CacheReadTokens     int64   `json:"cacheReadTokens"`
	TotalTokens         int64   `json:"totalTokens"`
	TotalCost           float64 `json:"totalCost"`
}

func sumsJSON(s Sums) jsonSums {
	return jsonSums{InputTokens: s.Input, OutputTokens: s.Output, CacheCreationTokens: s.CacheWrite,
		CacheReadTokens: s.CacheRead, TotalTokens: s.Tokens(), TotalCost: s.Cost}
}

// jsonExtra is what piweb adds to ccusage's fields.
type jsonExtra struct {
	Turns          int64         `json:"turns"`
	Errors         int64         `json:"errors"`
	Aborted        int64         `json:"aborted"`
	CacheReadShare float64       `json:"cacheReadShare"`
	Abandoned      jsonAbandoned `json:"abandoned"`
	Machines       []string      `json:"machines"`
	SessionCount   int           `json:"sessionCount"`
}

// jsonAbandoned is the part spent on branches pi will not resume.
type jsonAbandoned struct {
	jsonSums
	Turns int64 `json:"turns"`
}

func extraJSON(e *Entry) jsonExtra {
	return jsonExtra{Turns: e.Turns, Errors: e.Errors, Aborted: e.Aborted, CacheReadShare: e.CacheShare(),
		Abandoned: jsonAbandoned{sumsJSON(e.Abandoned), e.Abandoned.Turns}, Machines: nonNil(e.Machines), SessionCount: len(e.Sessions)}
}

// jsonModel is one model's share, as ccusage's modelBreakdowns.
type jsonModel struct {
	ModelName           string  `json:"modelName"`
	InputTokens         int64   `json:"inputTokens"`
	OutputTokens        int64   `json:"outputTokens"`
	CacheCreationTokens int64   `json:"cacheCreationTokens"`
	CacheReadTokens     int64   `json:"cacheReadTokens"`
	Cost                float64 `json:"cost"`
	TotalTokens         int64   `json:"totalTokens"`
	Turns               int64   `json:"turns"`
	AbandonedCost       float64 `json:"abandonedCost"`
}

// jsonEntry is one entry of a report.
type jsonEntry struct {
	Date        string `json:"date,omitempty"`
	Week        string `json:"week,omitempty"`
	Month       string `json:"month,omitempty"`
	SessionID   string `json:"sessionId,omitempty"`
	ProjectPath string `json:"projectPath,omitempty"`
	Project     string `json:"project,omitempty"`
	Source      string `json:"source"`
	jsonSums
	LastActivity    string      `json:"lastActivity,omitempty"`
	ModelsUsed      []string    `json:"modelsUsed"`
	ModelBreakdowns []jsonModel `json:"modelBreakdowns"`
	jsonExtra
	// A session's, besides its id: piweb's key, its name and first message, its cwd.
	Session      string `json:"session,omitempty"`
	Name         string `json:"name,omitempty"`
	FirstMessage string `json:"firstMessage,omitempty"`
	Cwd          string `json:"cwd,omitempty"`
}

// jsonTotals are the report's totals.
type jsonTotals struct {
	jsonSums
	jsonExtra
}

// listName returns the name of the report's list in the JSON.
func (g Group) listName() string {
	switch g {
	case Weekly:
		return "weekly"
	case Monthly:
		return "monthly"
	case BySession:
		return "sessions"
	case ByProject:
		return "projects"
	}
	return "daily"
}

// MarshalJSON writes the report as @ccusage/pi's --json does.
func (r *Report) MarshalJSON() ([]byte, error) {
	list := make([]jsonEntry, len(r.Entries))
	loc := r.Query.loc()
	for i := range r.Entries {
		e := &r.Entries[i]
		j := jsonEntry{Source: "pi-agent", jsonSums: sumsJSON(e.Sums), jsonExtra: extraJSON(e), ModelsUsed: []string{}, ModelBreakdowns: []jsonModel{}}
		switch r.Query.Group {
		case Weekly:
			j.Week = e.Key
		case Monthly:
			j.Month = e.Key
		case BySession:
			s := r.session(e.Key)
			j.SessionID, j.ProjectPath, j.Session, j.Name, j.FirstMessage, j.Cwd = s.ID, s.Project, e.Key, s.Name, s.FirstMessage, s.Cwd
			j.LastActivity = e.Last.In(loc).Format(time.DateOnly)
		case ByProject:
			j.Project, j.Cwd = e.Key, r.ProjectCwd(e.Key)
		default:
			j.Date = e.Key
		}
		for _, m := range e.Models {
			j.ModelsUsed = append(j.ModelsUsed, m.Name)
			j.ModelBreakdowns = append(j.ModelBreakdowns, jsonModel{ModelName: m.Name, InputTokens: m.Input, OutputTokens: m.Output,
				CacheCreationTokens: m.CacheWrite, CacheReadTokens: m.CacheRead, Cost: m.Cost, TotalTokens: m.Tokens(), Turns: m.Turns, AbandonedCost: m.Abandoned.Cost})
		}
		list[i] = j
	}
	out := struct {
		List   []jsonEntry `json:"-"`
		Totals jsonTotals  `json:"totals"`
	}{list, jsonTotals{sumsJSON(r.Totals.Sums), extraJSON(&r.Totals)}}
	lb, err := json.Marshal(out.List)
	if err != nil {
		return nil, err
	}
	tb, err := json.Marshal(out.Totals)
	if err != nil {
		return nil, err
	}
	b := append([]byte(`{"`+r.Query.Group.listName()+`":`), lb...)
	b = append(append(append(b, `,"totals":`...), tb...), '}')
	return b, nil
}

// WriteJSON writes the report as JSON, indented as ccusage indents it.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// session returns what the report knows of the session with key.
func (r *Report) session(key string) Session {
	if s, ok := r.Sessions[key]; ok {
		return s
	}
	return Session{Key: key}
}

// ProjectCwd returns the working directory of a project's sessions, as
// their headers name it ("" when no session says).
func (r *Report) ProjectCwd(project string) string {
	if r.cwds == nil {
		r.cwds = map[string]string{}
		for _, s := range r.Sessions {
			if c, ok := r.cwds[s.Project]; s.Cwd != "" && (!ok || s.Cwd < c) {
				r.cwds[s.Project] = s.Cwd
			}
		}
	}
	return r.cwds[project]
}

// ProjectName returns a short name of a project: the last folder of its
// sessions' working directory, else the project's folder name.
func (r *Report) ProjectName(project string) string {
	if cwd := r.ProjectCwd(project); cwd != "" {
		if b := path.Base(strings.ReplaceAll(cwd, `\`, "/")); b != "." && b != "/" {
			return b
		}
	}
	return project
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
