package policy

import (
	"strconv"
	"strings"
	"testing"

	"github.com/idemprint/idemprint/fingerprint"
)

// primaryKeyReference is PrimaryKey as first written, with strings.Cut
// and strconv.Atoi: the fast parser must agree with it on every input.
func primaryKeyReference(sk string) (string, bool) {
	rest, ok := strings.CutPrefix(sk, storageKeyPrefix)
	if !ok {
		return "", false
	}
	var parts [5]string
	n, primaryEnd := 0, 0
	for rest != "" {
		if n == len(parts) || rest[0] != ':' {
			return "", false
		}
		digits, tail, ok := strings.Cut(rest[1:], ":")
		size, err := strconv.Atoi(digits)
		if !ok || err != nil || digits[0] < '0' || digits[0] > '9' || digits[0] == '0' && len(digits) > 1 || size > len(tail) {
			return "", false
		}
		parts[n], rest = tail[:size], tail[size:]
		n++
		if n == 3 {
			primaryEnd = len(sk) - len(rest)
		}
	}
	switch {
	case parts[0] == "" || parts[2] == "":
		return "", false
	case n == 3:
		return sk, true
	case n == 5:
		if _, err := fingerprint.Parse(parts[3]); err != nil || parts[4] == "" {
			return "", false
		}
		return sk[:primaryEnd], true
	}
	return "", false
}

func FuzzPrimaryKey(f *testing.F) {
	fp := "v1:sha256:" + strings.Repeat("ab", 32)
	for _, s := range []string{
		storageKey("acme", "", "k"),
		storageKey("acme", "POST /v1/payments", "abc-123", fp, "sha256:x"),
		"idem1:0::0::1:k", "idem1:01:a:0::1:k", "idem1::a", "idem1:4:acme:0::99999999999999999999:k",
		"idem1:-1:a", "idem1:1", "idem1:100000000000000000:k",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sk string) {
		got, ok := PrimaryKey(sk)
		want, wantOK := primaryKeyReference(sk)
		if got != want || ok != wantOK {
			t.Fatalf("PrimaryKey(%q) = %q, %v; the reference says %q, %v", sk, got, ok, want, wantOK)
		}
	})
}
