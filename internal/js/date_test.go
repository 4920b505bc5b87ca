package js

import (
	"fmt"
	"testing"
	"time"
)

// TestISODate: the form toISOString writes is read without time.Date, to
// the same millisecond as the general reading and as Go's calendar, on
// every day of the years where calendars go wrong; every other form, and
// an impossible date, is left to the general reading.
func TestISODate(t *testing.T) {
	days := 0
	for _, years := range [][2]int{{0, 4}, {99, 101}, {399, 401}, {1899, 1901}, {1968, 1973}, {1999, 2001}, {2024, 2029}, {2099, 2101}, {9998, 9999}} {
		for d := time.Date(years[0], 1, 1, 0, 0, 0, 0, time.UTC); d.Year() <= years[1]; d = d.AddDate(0, 0, 1) {
			at := d.Add(time.Duration(days%86400)*time.Second + time.Duration(days%1000)*time.Millisecond)
			s := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", at.Year(), at.Month(), at.Day(), at.Hour(), at.Minute(), at.Second(), at.Nanosecond()/1e6)
			v, ok := isoUTC(s)
			if !ok || v != at.UnixMilli() || v != parseDate(s) || ParseDate(s) != v {
				t.Fatalf("%s: %d %v, want %d (general reading %d)", s, v, ok, at.UnixMilli(), parseDate(s))
			}
			days++
		}
	}
	for _, s := range []string{
		"2025-02-29T00:00:00.000Z", "2100-02-29T12:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-00-10T00:00:00.000Z",
		"2026-04-31T00:00:00.000Z", "2026-06-00T00:00:00.000Z", "2026-06-01T24:00:00.000Z", "2026-06-01T23:60:00.000Z",
		"2026-06-01T23:59:60.000Z", "2026-06-01t12:00:00.000Z", "2026-06-01T12:00:00.000z", "2026-06-01T12:00:00.00Z",
		"2026-06-01T12:00:00.000+00:00", "+002026-06-01T12:00:00.000Z", "2026-06-01 12:00:00.000Z", "2026-06-01T12:0a:00.000Z",
		"2026-06-01T12:00:00.-00Z", "2026-06-01T12:00:00,000Z",
	} {
		if v, ok := isoUTC(s); ok {
			t.Errorf("%s: read as %d by the fast path", s, v)
		}
		if ParseDate(s) != parseDate(s) {
			t.Errorf("%s: %d, the general reading %d", s, ParseDate(s), parseDate(s))
		}
	}
	if v := ParseDate("2026-06-01T24:00:00.000Z"); v != time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC).UnixMilli() {
		t.Errorf("hour 24: %d", v)
	}
}

// FuzzISODate: whatever the fast path reads, the general reading reads
// the same.
func FuzzISODate(f *testing.F) {
	for _, s := range []string{"2026-06-01T12:34:56.789Z", "0000-02-29T00:00:00.000Z", "1969-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z", "2026-06-01T24:00:00.000Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, ok := isoUTC(s); ok && v != parseDate(s) {
			t.Errorf("%q: %d, the general reading %d", s, v, parseDate(s))
		}
	})
}
