//go:build !race

package store

// raceOn: see race_test.go.
const raceOn = false
