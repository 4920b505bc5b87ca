// Package pitree is a port of pi's /tree view (TreeList in
// modes/interactive/components/tree-selector.js of pi-coding-agent 1.6.0):
// the order, filters, indents, connectors, gutters, folds and one-line
// previews of a session's tree, and pi's tree search (with a SearchIndex
// that keeps the searchable text of a session between searches). Both
// `piweb tree` and the session page draw the tree with it; the conformance
// tests compare every row with pi's own component.
package pitree
