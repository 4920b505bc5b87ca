// Package views holds piweb's templ components and the plain view models
// they render. It knows nothing of HTTP; web/ fills the models.
package views

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/piweb/piweb/static"
)

// Asset returns the versioned URL of a static asset.
func Asset(name string) string { return static.URL(name) }

// Tokens formats a token count the way pi's footer does: 950, 12.3k, 1.2M.
func Tokens(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
}

// Cost formats a dollar amount with three decimals ($0.042).
func Cost(c float64) string { return fmt.Sprintf("$%.3f", c) }

// Count formats an integer with thin grouping (12 345).
func Count(n int) string {
	s := strconv.Itoa(n)
	if len(s) <= 4 {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteRune('\u202f')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Plural returns "1 entry" or "3 entries".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Count(n) + " " + many
}

// Now returns the current time; tests replace it to render stable pages.
var Now = time.Now

// When formats a time for lists: "14:05" today, "May 9 14:05" this year, else "2025-05-09".
func When(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	t = t.Local()
	now := Now().Local()
	switch {
	case t.Year() == now.Year() && t.YearDay() == now.YearDay():
		return t.Format("15:04")
	case t.Year() == now.Year():
		return t.Format("Jan 2 15:04")
	default:
		return t.Format("2006-01-02")
	}
}

// ISO formats a time for a title attribute or <time datetime>.
func ISO(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Query builds "?k=v&..." from pairs, leaving out empty values.
func Query(pairs ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			v.Set(pairs[i], pairs[i+1])
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// SessionURL returns the URL of a session page: the session file's key.
func SessionURL(key string) string { return "/s/" + url.PathEscape(key) }

// BaseName returns the last element of a file path.
func BaseName(file string) string { return path.Base(filepath.ToSlash(file)) }

// StateURL returns the URL of a session page showing the tree state st.
func StateURL(id string, st TreeState) string {
	if q := st.Values().Encode(); q != "" {
		return SessionURL(id) + "?" + q
	}
	return SessionURL(id)
}

// Itoa formats an int.
func Itoa(n int) string { return strconv.Itoa(n) }

func joinComma(s []string) string { return strings.Join(s, ",") }

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, " ")
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// LabelTime formats when a label was set as pi's /tree shows it (shift+T),
// in local time: "15:04" today, "6/2 15:04" this year, "25/6/2 15:04" before.
func LabelTime(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	hm := t.Format("15:04")
	y, m, d := t.Date()
	ny, nm, nd := now.Date()
	switch {
	case y == ny && m == nm && d == nd:
		return hm
	case y == ny:
		return fmt.Sprintf("%d/%d %s", m, d, hm)
	}
	yy := strconv.Itoa(y)
	return fmt.Sprintf("%s/%d/%d %s", yy[max(0, len(yy)-2):], m, d, hm)
}

// Bytes formats a size: 812 B, 64 KB, 19.9 MB.
func Bytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1_000_000:
		return fmt.Sprintf("%d KB", (n+500)/1000)
	case n < 10_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	default:
		return fmt.Sprintf("%d MB", (n+500_000)/1_000_000)
	}
}

// Num formats a token count in full, grouped (1 234 567).
func Num(f float64) string {
	if f != f || f > 1e15 || f < -1e15 {
		return fmt.Sprint(f)
	}
	if f != float64(int64(f)) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	if f < 0 {
		return "-" + Count(int(-f))
	}
	return Count(int(f))
}

// Duration formats a span of time briefly: "45 s", "12 min", "3 h 5 min", "2 d 4 h".
func Duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%d d %d h", int(d.Hours())/24, int(d.Hours())%24)
}
