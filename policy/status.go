package policy

import (
	"strconv"
)

// statusSet is a set of final HTTP statuses, 200 to 599.
type statusSet [10]uint64 // bit s of the 640-bit array is status s

func (s *statusSet) has(status int) bool {
	return status >= 200 && status <= 599 && s[status/64]&(1<<(status%64)) != 0
}

func (s *statusSet) add(lo, hi int) {
	for c := lo; c <= hi; c++ {
		s[c/64] |= 1 << (c % 64)
	}
}

func (s *statusSet) remove(lo, hi int) {
	for c := lo; c <= hi; c++ {
		s[c/64] &^= 1 << (c % 64)
	}
}

// defaultCache holds 2xx only: an error stays retryable.
var defaultCache = func() statusSet {
	var s statusSet
	s.add(200, 299)
	return s
}()

// cacheEntry is one parsed entry of a cache list: a class ("4xx") or a code
// ("404"), possibly negated ("!429").
type cacheEntry struct {
	lo, hi int
	not    bool
}

// parseCacheEntry parses one entry. It returns an error wrapping ErrCache.
func parseCacheEntry(s string) (cacheEntry, error) {
	e := cacheEntry{}
	t := s
	if len(t) > 0 && t[0] == '!' {
		e.not, t = true, t[1:]
	}
	switch {
	case len(t) == 3 && '1' <= t[0] && t[0] <= '5' && t[1:] == "xx":
		e.lo = int(t[0]-'0') * 100
		e.hi = e.lo + 99
	case len(t) == 3 && isDigits(t):
		e.lo, _ = strconv.Atoi(t)
		e.hi = e.lo
	default:
		return e, errorf(ErrCache, `invalid cache entry %q: want a class such as "2xx", a status such as "404", or either negated with "!"`, s)
	}
	if e.lo < 200 || e.hi > 599 {
		return e, errorf(ErrCache, "invalid cache entry %q: only final statuses, 200 to 599, are responses", s)
	}
	return e, nil
}

// contains reports whether every status of f is in e.
func (e cacheEntry) contains(f cacheEntry) bool { return e.lo <= f.lo && f.hi <= e.hi }

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
