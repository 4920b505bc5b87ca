// Package writer holds the only code in piweb that changes session files:
// the append protocol (Append: verify the file, reserve its space, one
// O_APPEND write, retry on growth) and the lines it appends (LabelLine,
// RewindLine), forks written beside their source (Fork), the upgrade of
// an old file (Upgrade) and saved files (SaveBeside), each confined to the
// sessions root.
//
// It may import sessions and internal/js; it knows nothing of the library,
// which runs its writes one at a time per file (package library).
package writer
