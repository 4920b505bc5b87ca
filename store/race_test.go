//go:build race

package store

// raceOn: the race detector instruments SQLite's transpiled C too, which
// then runs tens of times slower: the largest single-goroutine tests on
// SQLite are left to the run without it.
const raceOn = true
