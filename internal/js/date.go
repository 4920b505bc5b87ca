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

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
