//go:build !race

package catalog

// raceOn: see race_test.go.
const raceOn = false
