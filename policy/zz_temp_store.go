package policy

import (
	"strconv"
	"strings"
	"time"
)

// TEMPORARY: replaced by the harden branch's versions at merge.

// Binds reports whether rec still binds its key at now.
func (rec *Record) Binds(now time.Time) bool { return binds(rec, now) }

// PrimaryKey returns the primary storage key a storage key belongs to.
func PrimaryKey(sk string) (string, bool) {
	s, ok := strings.CutPrefix(sk, storageKeyPrefix)
	if !ok {
		return "", false
	}
	var comps []string
	for s != "" {
		if s[0] != ':' {
			return "", false
		}
		s = s[1:]
		i := strings.IndexByte(s, ':')
		if i <= 0 {
			return "", false
		}
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 || n > len(s)-i-1 || strconv.Itoa(n) != s[:i] {
			return "", false
		}
		comps = append(comps, s[i+1:i+1+n])
		s = s[i+1+n:]
	}
	switch len(comps) {
	case 3:
		return sk, true
	case 5:
		return storageKey(comps[0], comps[1], comps[2]), true
	}
	return "", false
}
