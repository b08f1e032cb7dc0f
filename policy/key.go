package policy

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/idemprint/idemprint/fingerprint"
)

// keySyntax is the syntax a rule accepts for a key's content.
type keySyntax uint8

const (
	// syntaxPrintable: 1 to maxLength printable ASCII characters (0x20 to
	// 0x7E), not beginning or ending with a space.
	syntaxPrintable keySyntax = iota
	// syntaxUUID: the 36-character textual form of a UUID (RFC 9562 §4),
	// hexadecimal digits of either case. RFC 9562 §4 makes the two cases
	// the same UUID, so the key is its lower-case form.
	syntaxUUID
)

// DefaultKeyHeader is the header that carries the key when a policy names
// none, as in the IETF Idempotency-Key draft.
const DefaultKeyHeader = "Idempotency-Key"

// defaultKeyMaxLength is the longest key accepted by default.
const defaultKeyMaxLength = 255

// parseKey returns the key carried by values, the field values of the key
// header. The key is the content of the value: "abc" and the RFC 8941
// sf-string `"abc"` are the same key, and a UUID is the same key in either
// case (its content is lower-cased). It returns an error wrapping
// ErrMissingKey or ErrMalformedKey.
func (r *Rule) parseKey(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", errorf(ErrMissingKey, "policy: the %s header is missing", r.keyHeader)
	case 1:
	default:
		return "", errorf(ErrMalformedKey, "policy: the %s header appears %d times", r.keyHeader, len(values))
	}
	v := values[0]
	key := v
	if strings.HasPrefix(v, `"`) {
		var ok bool
		if key, ok = unquoteSFString(v); !ok {
			return "", errorf(ErrMalformedKey, "policy: the %s header starts with a quote but is not one RFC 8941 string", r.keyHeader)
		}
	}
	if key == "" {
		return "", errorf(ErrMalformedKey, "policy: the %s header is empty", r.keyHeader)
	}
	switch r.keySyntax {
	case syntaxUUID:
		if !isUUID(key) {
			return "", errorf(ErrMalformedKey, "policy: the %s header is not a UUID", r.keyHeader)
		}
		key = lowerASCII(key)
	default:
		if n := len(key); n > r.keyMaxLength {
			return "", errorf(ErrMalformedKey, "policy: the %s header is %d characters long; the limit is %d", r.keyHeader, n, r.keyMaxLength)
		}
		for i := 0; i < len(key); i++ {
			if c := key[i]; c < 0x20 || c > 0x7e {
				return "", errorf(ErrMalformedKey, "policy: the %s header holds a character that is not printable ASCII", r.keyHeader)
			}
		}
		if key[0] == ' ' || key[len(key)-1] == ' ' {
			return "", errorf(ErrMalformedKey, "policy: the %s header begins or ends with a space", r.keyHeader)
		}
	}
	return key, nil
}

// unquoteSFString returns the content of the RFC 8941 §3.3.3 sf-string v,
// which must be the whole value: no parameters, nothing after the closing
// quote.
func unquoteSFString(v string) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	var b []byte // allocated only when there is an escape
	for i := 1; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\':
			if i+1 >= len(v) || v[i+1] != '"' && v[i+1] != '\\' {
				return "", false
			}
			if b == nil {
				b = append(make([]byte, 0, len(v)), v[1:i]...)
			}
			i++
			b = append(b, v[i])
		case c == '"':
			if i != len(v)-1 {
				return "", false
			}
			if b == nil {
				return v[1:i], true
			}
			return string(b), true
		case c < 0x20 || c > 0x7e:
			return "", false
		default:
			if b != nil {
				b = append(b, c)
			}
		}
	}
	return "", false // no closing quote
}

// lowerASCII returns s with ASCII letters in lower case; it allocates only
// when s has an upper-case letter.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// headerValues returns the values of the header name (in canonical form)
// in h, whatever the case of its keys: http.Header.Values reads the
// canonical key only, but a hand-built map may spell the name otherwise,
// and may spell it twice. The values of every spelling are returned
// together, so that two spellings carrying a value each are a repeated
// header, not one chosen by map order. It allocates only when more than one
// spelling holds values.
func headerValues(h http.Header, name string) []string {
	vals := h[name]
	merged := false
	for k, v := range h {
		if len(v) == 0 || k == name || len(k) != len(name) || !strings.EqualFold(k, name) {
			continue
		}
		if len(vals) == 0 {
			vals = v
			continue
		}
		if !merged {
			vals, merged = slices.Clone(vals), true
		}
		vals = append(vals, v...)
	}
	return vals
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// storageKeyPrefix starts every storage key. It versions the encoding: a
// stored key must keep meaning the same identity across releases.
const storageKeyPrefix = "idem1"

// storageKey returns the storage key of the components: the prefix, then
// each component as ":" decimal length ":" bytes. The lengths make the
// encoding injective: tenant "a:b" with key "c" and tenant "a" with key
// "b:c" get different storage keys, whatever bytes the components hold. It
// allocates once.
func storageKey(components ...string) string {
	n := len(storageKeyPrefix)
	for _, c := range components {
		n += 2 + decimalLength(len(c)) + len(c)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(storageKeyPrefix)
	var num [20]byte
	for _, c := range components {
		b.WriteByte(':')
		b.Write(strconv.AppendUint(num[:0], uint64(len(c)), 10))
		b.WriteByte(':')
		b.WriteString(c)
	}
	return b.String()
}

// decimalLength returns the number of decimal digits of n ≥ 0.
func decimalLength(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// componentLength reads the length that starts a component: a decimal
// without sign or leading zeros, then ':'. It returns the length and what
// follows the colon. Every store calls PrimaryKey on every operation, so
// this avoids strings.Cut and strconv.Atoi.
func componentLength(s string) (size int, tail string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':' && i > 0:
			return size, s[i+1:], true
		case c < '0' || c > '9' || i == 1 && s[0] == '0' || i == 18:
			return 0, "", false // not a decimal without leading zeros, or one beyond any string's length
		}
		size = size*10 + int(c-'0')
	}
	return 0, "", false
}

// PrimaryKey returns the primary storage key that the storage key sk
// belongs to. For the storage key of a new identity (tenant, endpoint,
// key, fingerprint and spec digest; see "Storage keys" in the package
// documentation) it is the storage key of its first three components,
// which [Rule.StorageKeys] returns beside it for the same request; for a
// primary storage key, the key itself. It returns false for a string that
// is neither: another prefix, a length that is not a decimal without
// leading zeros or that runs past the end, another number of components,
// an empty tenant or key, a fingerprint that does not parse.
//
// A store that must keep the two keys of one request together, such as
// Redis Cluster in one hash slot, derives their shared part from it.
func PrimaryKey(sk string) (string, bool) {
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
		size, tail, ok := componentLength(rest[1:])
		if !ok || size > len(tail) {
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
		return sk[:primaryEnd], true // the encoding is a concatenation: the primary key is a prefix
	}
	return "", false
}
