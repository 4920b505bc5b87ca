package usage

import (
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/piweb/piweb/internal/js"
	"github.com/piweb/piweb/ledger"
	"github.com/piweb/piweb/sessions"
)

// Record is one entry that counts: an entry that carries usage pi adds
// up, or an assistant message (a turn, with or without usage).
type Record struct {
	Pos int   // the entry's position in the file
	Off int64 // its line's byte offset
	// ID and Time (the entry's timestamp as written, Unix ms, or
	// sessions.NoTime) are what pi's copies keep: with them a copy is
	// found in another file of the lineage.
	ID    string
	Time  int64
	Start time.Time // its bucket
	Model string    // "provider/model", or ToolsModel
	Sums
	Errored bool // an assistant message that stopped with an error
	Aborted bool // an assistant message the user stopped
}

// Records calls fn with the records of session s from position from on,
// in order, as the ledger l (brought up to date with r, a reader of s)
// has them. An entry without a time is put at the header's time, else at
// the file's modification time.
func Records(s *sessions.Session, r *sessions.Reader, l *ledger.Ledger, from int, fn func(*Record)) {
	fallback := s.ModTime
	if t := js.ParseDate(s.Header.Timestamp); t != sessions.NoTime {
		fallback = time.UnixMilli(t)
	}
	for i := max(from, 0); i < len(s.Entries); i++ {
		e := &s.Entries[i]
		if e.Type == sessions.TypeSession {
			continue
		}
		assistant := e.Type == sessions.TypeMessage && e.Role == sessions.RoleAssistant
		use := l.Use(i)
		if !use.Usage && !assistant {
			continue
		}
		at := fallback
		if e.Time != sessions.NoTime {
			at = time.UnixMilli(e.Time)
		}
		rec := Record{Pos: i, Off: e.Off, ID: e.ID, Time: e.Time, Start: Start(at), Model: use.Bucket}
		if rec.Model == "" {
			rec.Model = e.Model()
		}
		if use.Usage {
			rec.Sums = Sums{Input: tokens(use.Input), Output: tokens(use.Output), CacheRead: tokens(use.CacheRead),
				CacheWrite: tokens(use.CacheWrite), Cost: use.Cost}
		}
		if assistant {
			rec.Turns = 1
			if e.Flags.Has(sessions.FlagError) {
				rec.Errored, rec.Aborted = stopReason(r, i)
			}
		}
		fn(&rec)
	}
}

// tokens returns a token count pi recorded as a number.
func tokens(f float64) int64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int64(math.Round(f))
}

// stopReason reports whether the assistant message at i stopped with an
// error, or was aborted.
func stopReason(r *sessions.Reader, i int) (errored, aborted bool) {
	b, err := r.Body(i)
	if err != nil || b.Msg == nil {
		return true, false
	}
	if b.Msg.StopReason == "aborted" {
		return false, true
	}
	return true, false
}

// Link is how the lineage names a session file and the file its header
// names as its source (parentSession): by path, else, for a root copied
// from another machine, by base name (pi names files by their session
// id, unique to the session).
type Link struct {
	Path, Name string // the file's
	// Parent and ParentName are the header's parentSession and its base
	// name, "" without one.
	Parent, ParentName string
}

// LinkOf returns the link of file, whose header names parentSession.
func LinkOf(file, parentSession string) Link {
	l := Link{Path: cleanPath(file), Name: filepath.Base(file)}
	if parentSession != "" {
		l.Parent = cleanPath(parentSession)
		l.ParentName = filepath.Base(strings.ReplaceAll(parentSession, `\`, "/"))
	}
	return l
}

// cleanPath returns path as compared between headers and files.
func cleanPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return filepath.Clean(p)
}
