//go:build race

package catalog

// raceOn: the race detector instruments SQLite's transpiled C too, which
// then indexes about a hundred times slower: tests index less.
const raceOn = true
