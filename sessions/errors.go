package sessions

import (
	"errors"
	"fmt"
)

// The kinds of failure the library and the writers report, for errors.Is.
var (
	// ErrNoSession: no session has that key.
	ErrNoSession = errors.New("no such session")
	// ErrNoEntry: the session has no entry with that id.
	ErrNoEntry = errors.New("no such entry")
	// ErrNotSession: the file's first line is not a pi session header.
	ErrNotSession = errors.New("not a pi session file: the first line is not a session header")
	// ErrChanged: a line is no longer where the index says: the file was rewritten.
	ErrChanged = errors.New("session file changed on disk since it was indexed")
	// ErrStale: the session moved on since the page the user acted on was drawn.
	ErrStale = errors.New("the session changed since it was shown; reload it and try again")
	// ErrReadOnly: the file is in a format piweb does not write to (version 1 or 2, which pi rewrites on open, or a version newer than 3).
	ErrReadOnly = errors.New("the session file is in a format piweb does not write to")
	// ErrBusy: the file kept changing while a writer tried to append to it.
	ErrBusy = errors.New("the session file kept changing while writing; try again")
	// ErrNoLeafID: the file's last line has no id, so an entry hung off the leaf would hang off nothing.
	ErrNoLeafID = errors.New("the last line of the session file has no id")
	// ErrNoSpace: the disk (or the user's quota) is full; nothing was written.
	ErrNoSpace = errors.New("no space left on the device; nothing was written")
	// ErrNotUpgradable: the file is already in version 3 or newer.
	ErrNotUpgradable = errors.New("the session file is not in an old format")
	// ErrElsewhere: the library is a read-only copy of sessions that live
	// elsewhere (SetReadOnly); the error's Detail names where.
	ErrElsewhere = errors.New("the session is a copy: change it where it lives")
)

// Error is a failure of a library operation or a writer: what kind it is
// (one of the Err variables above, for errors.Is), the session and entry
// it concerns, and the cause, for the log.
type Error struct {
	Kind    error  // ErrNoSession, ErrNoEntry, ErrStale, …
	Key     string // the session's key ("" when unknown)
	Entry   string // the entry concerned ("" for none)
	Version int    // the file's format version, for ErrReadOnly
	Detail  string // a short explanation to add to the kind's message
	Err     error  // the cause, if any
}

func (e *Error) Error() string {
	msg := e.Kind.Error()
	if e.Key != "" {
		msg = fmt.Sprintf("session %q: %s", e.Key, msg)
	}
	if e.Entry != "" {
		msg += fmt.Sprintf(" (entry %q)", e.Entry)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}
