package js

import (
	"math"
	"strconv"
	"time"
)

// NoTime stands for NaN: a time JavaScript's Date cannot represent.
const NoTime = math.MinInt64

// ParseDate parses the ISO-8601 forms that JavaScript's Date accepts
// (date-only is UTC, date-time without offset is local time) and returns
// Unix milliseconds, or NoTime where Date would give NaN.
func ParseDate(s string) int64 {
	if v, ok := isoUTC(s); ok {
		return v
	}
	return parseDate(s)
}

// isoUTC reads the one form Date.prototype.toISOString writes for years
// 0 to 9999, YYYY-MM-DDTHH:mm:ss.sssZ (every time pi writes), as ParseDate
// does, without time.Date; ok is false for any other text.
func isoUTC(s string) (ms int64, ok bool) {
	if len(s) != 24 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return 0, false
	}
	var v [7]int // year, month, day, hour, minute, second, millisecond
	for k, f := range [7][2]int{{0, 4}, {5, 2}, {8, 2}, {11, 2}, {14, 2}, {17, 2}, {20, 3}} {
		for _, c := range []byte(s[f[0] : f[0]+f[1]]) {
			if !IsDigit(c) {
				return 0, false
			}
			v[k] = v[k]*10 + int(c-'0')
		}
	}
	if v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > daysIn(v[0], v[1]) || v[3] > 23 || v[4] > 59 || v[5] > 59 {
		return 0, false // (hour 24, and NaN, are parseDate's)
	}
	secs := civilDays(v[0], v[1], v[2])*86400 + int64(v[3]*3600+v[4]*60+v[5])
	return secs*1000 + int64(v[6]), true
}

// civilDays returns the days from 1970-01-01 to a date of the proleptic
// Gregorian calendar (Howard Hinnant's days_from_civil).
func civilDays(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	doy := (153*((m+9)%12)+2)/5 + d - 1
	return int64(era)*146097 + int64(yoe*365+yoe/4-yoe/100+doy) - 719468
}

// parseDate is ParseDate for every form.
func parseDate(s string) int64 {
	p := dateParser{s: s}
	year, ok := p.year()
	if !ok {
		return NoTime
	}
	month, day := 1, 1
	if p.eat('-') {
		if month, ok = p.digits(2); !ok {
			return NoTime
		}
		if p.eat('-') {
			if day, ok = p.digits(2); !ok {
				return NoTime
			}
		}
	}
	hour, min, sec, ms := 0, 0, 0, 0
	loc := time.UTC
	if p.eat('T') || p.eat('t') || p.eat(' ') {
		if hour, ok = p.digits(2); !ok || !p.eat(':') {
			return NoTime
		}
		if min, ok = p.digits(2); !ok {
			return NoTime
		}
		if p.eat(':') {
			if sec, ok = p.digits(2); !ok {
				return NoTime
			}
			if p.eat('.') || p.eat(',') {
				n := 0
				start := p.i
				for p.i < len(p.s) && IsDigit(p.s[p.i]) {
					if p.i-start < 3 {
						n = n*10 + int(p.s[p.i]-'0')
					}
					p.i++
				}
				digits := p.i - start
				if digits == 0 {
					return NoTime
				}
				for ; digits < 3; digits++ {
					n *= 10
				}
				ms = n
			}
		}
		loc = time.Local
		switch {
		case p.eat('Z') || p.eat('z'):
			loc = time.UTC
		case p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-'):
			sign := 1
			if p.s[p.i] == '-' {
				sign = -1
			}
			p.i++
			oh, ok1 := p.digits(2)
			p.eat(':')
			om, ok2 := p.digits(2)
			if !ok1 || !ok2 || oh > 23 || om > 59 {
				return NoTime
			}
			loc = time.FixedZone("", sign*(oh*3600+om*60))
		}
	}
	if p.i != len(p.s) {
		return NoTime
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 24 || min > 59 || sec > 59 ||
		(hour == 24 && (min != 0 || sec != 0 || ms != 0)) {
		return NoTime
	}
	t := time.Date(year, time.Month(month), day, hour, min, sec, ms*int(time.Millisecond), loc)
	v := t.UnixMilli()
	if v > 8.64e15 || v < -8.64e15 {
		return NoTime
	}
	return v
}

type dateParser struct {
	s string
	i int
}

func (p *dateParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *dateParser) digits(n int) (int, bool) {
	if p.i+n > len(p.s) {
		return 0, false
	}
	v, err := strconv.Atoi(p.s[p.i : p.i+n])
	if err != nil || p.s[p.i] == '+' || p.s[p.i] == '-' {
		return 0, false
	}
	p.i += n
	return v, true
}

func (p *dateParser) year() (int, bool) {
	if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
		neg := p.s[p.i] == '-'
		p.i++
		y, ok := p.digits(6)
		if !ok || (neg && y == 0) {
			return 0, false
		}
		if neg {
			y = -y
		}
		return y, true
	}
	return p.digits(4)
}

// daysIn returns the days of a month of the proleptic Gregorian calendar.
func daysIn(year, month int) int {
	if month == 2 {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 30 + (month+month/8)%2
}
