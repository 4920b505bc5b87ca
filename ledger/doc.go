// Package ledger holds what a session's paths cost and did: each entry's
// usage and tool calls read once and summed as pi's getSessionStats sums
// them, with subtree sums kept as pi appends (Ledger); the files a path's
// tool calls changed and the commands it ran (ChangesOf); and where two
// paths part (Compare).
//
// It reads sessions through sessions' Reader and may import sessions,
// patch and internal/js; nothing under it imports ledger.
package ledger
