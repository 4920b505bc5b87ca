// Package share lays a session out for sharing: a branch as the new
// session pi's fork makes of it (Branch, BranchTo), every entry of the
// session (Whole, WholeTo) or pi's own JSONL export (ExportTo), each
// redacted as asked (Redact: secrets, thinking, tool output), and one line
// of a session file with its secrets redacted (RedactLine, for push).
//
// It is the only package that imports secrets. It may import sessions,
// internal/js and secrets; web, writer (Fork) and push use it,
// and sessions never imports it.
package share
