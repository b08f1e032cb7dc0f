package policy

import (
	"strings"
	"time"
)

// TEMPORARY: replaced by the harden branch's versions at merge.

// Binds reports whether rec still binds its key at now.
func (rec *Record) Binds(now time.Time) bool { return binds(rec, now) }

// PrimaryKey returns the primary storage key a storage key belongs to:
// its first three components, which are a prefix of it. It does not
// allocate.
func PrimaryKey(sk string) (string, bool) {
	rest, ok := strings.CutPrefix(sk, storageKeyPrefix)
	if !ok {
		return "", false
	}
	n, end := 0, 0
	for rest != "" {
		if rest[0] != ':' {
			return "", false
		}
		i := strings.IndexByte(rest[1:], ':')
		if i <= 0 || (i > 1 && rest[1] == '0') {
			return "", false
		}
		size := 0
		for _, c := range rest[1 : 1+i] {
			if c < '0' || c > '9' || size > len(rest) {
				return "", false
			}
			size = size*10 + int(c-'0')
		}
		if size > len(rest)-2-i {
			return "", false
		}
		rest = rest[2+i+size:]
		n++
		if n == 3 {
			end = len(sk) - len(rest)
		}
	}
	switch n {
	case 3:
		return sk, true
	case 5:
		return sk[:end], true
	}
	return "", false
}

// Wait is the harden branch's; 0 until merged.
func (r *Rule) Wait() time.Duration { return 0 }
