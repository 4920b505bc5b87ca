package views

import (
	"testing"
	"time"
)

func TestLabelTime(t *testing.T) {
	now := time.Date(2026, 12, 2, 21, 5, 0, 0, time.Local)
	tests := []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 12, 2, 8, 3, 0, 0, time.Local), "08:03"},
		{time.Date(2026, 12, 1, 23, 59, 0, 0, time.Local), "12/1 23:59"},
		{time.Date(2026, 1, 9, 0, 0, 0, 0, time.Local), "1/9 00:00"},
		{time.Date(2025, 6, 2, 15, 4, 0, 0, time.Local), "25/6/2 15:04"},
		{time.Date(2005, 11, 30, 7, 30, 0, 0, time.Local), "05/11/30 07:30"},
		{time.Date(999, 1, 2, 3, 4, 0, 0, time.Local), "99/1/2 03:04"},
	}
	for _, tt := range tests {
		if got := LabelTime(tt.at, now); got != tt.want {
			t.Errorf("LabelTime(%v) = %q, want %q", tt.at, got, tt.want)
		}
	}
}
