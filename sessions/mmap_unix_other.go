//go:build unix && !linux

package sessions

const mapPopulate = 0
