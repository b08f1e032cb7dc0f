package redisstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// valueVersion starts every value of the layout this package writes, the
// second: a record's hash was the first.
const valueVersion = "2 "

// headerBound bounds the header of a value: the version, a generation, a
// state and two times of at most 16 digits, a nonce, the separators.
const headerBound = len(valueVersion) + 16 + 1 + 1 + 1 + 16 + 1 + 16 + 1 + 2*nonceLen + 1

// appendValue returns the value that Write stores for rec, in a buffer
// allocated once, and false when the store cannot keep one of its times
// (see appendTime). It has no nonce: only Reserve's script writes one.
func appendValue(rec *policy.Record) ([]byte, bool) {
	b := make([]byte, 0, headerBound+payloadBound(rec))
	b = append(b, valueVersion...)
	b = strconv.AppendUint(b, rec.Generation, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(rec.State), 10)
	b = append(b, ' ')
	b, okL := appendTime(b, rec.LeaseExpiry)
	b = append(b, ' ')
	b, okE := appendTime(b, rec.ExpiresAt)
	b = append(b, " \n"...)
	return store.AppendPayload(b, rec), okL && okE
}

// appendPayload returns the payload of rec in a buffer allocated once.
func appendPayload(rec *policy.Record) []byte {
	return store.AppendPayload(make([]byte, 0, payloadBound(rec)), rec)
}

// payloadBound bounds the length of rec's payload: the fields' lengths,
// a varint of at most 10 bytes per field and per header entry, and room
// for the version, the fingerprint's text and the checksum.
func payloadBound(rec *policy.Record) int {
	n := 256 + len(rec.Tenant) + len(rec.Key) + len(rec.Route) + len(rec.SpecDigest) + len(rec.Intent) + len(rec.Body)
	for _, f := range rec.Header {
		n += 20 + len(f.Name) + len(f.Value)
	}
	return n
}

// appendTime appends t as a time field to dst, and reports false, with
// dst unchanged, when the store cannot keep it: before 1970 or from 2^53
// µs on.
func appendTime(dst []byte, t time.Time) ([]byte, bool) {
	if t.IsZero() {
		return dst, true
	}
	us := t.UnixMicro()
	if t.Before(time.Unix(0, 0)) || us >= maxMicros {
		return dst, false
	}
	return strconv.AppendInt(dst, us, 10), true
}

// parseTime reads a time field as the scripts do; ok is false for
// anything else.
func parseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, true
	}
	us, ok := decimal(s)
	if !ok || us >= maxMicros {
		return time.Time{}, false
	}
	return time.UnixMicro(int64(us)).UTC(), true
}

// decimal parses a decimal without sign or leading zeros, as the scripts
// accept it.
func decimal(s string) (uint64, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' || len(s) > 16 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// micros reads a time the scripts return (never the zero time).
func micros(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok || s == "" {
		return time.Time{}, false
	}
	return parseTime(s)
}

// generation reads a generation field: 1 to 2^53.
func generation(v any) (uint64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	g, ok := decimal(s)
	return g, ok && g > 0 && g <= maxMicros
}

var errFields = errors.New("record fields do not parse")

// splitValue splits a value as the scripts' pattern does: "2 " g " " s " "
// l " " e " " n "\n" payload, where g is digits not starting with 0, s is
// 0, 1 or 2, l and e are digits, n is hex digits, and the payload is any
// bytes. ok is false for a value that does not match; the fields' ranges
// are for the caller to check.
func splitValue(v string) (g, s, l, e, n, payload string, ok bool) {
	rest, ok := strings.CutPrefix(v, valueVersion)
	if !ok {
		return
	}
	if g, rest, ok = field(rest, isDigit, ' '); !ok || g == "" || g[0] == '0' {
		return "", "", "", "", "", "", false
	}
	if s, rest, ok = field(rest, isDigit, ' '); !ok || len(s) != 1 || s[0] > '2' {
		return "", "", "", "", "", "", false
	}
	if l, rest, ok = field(rest, isDigit, ' '); !ok {
		return "", "", "", "", "", "", false
	}
	if e, rest, ok = field(rest, isDigit, ' '); !ok {
		return "", "", "", "", "", "", false
	}
	if n, rest, ok = field(rest, isHex, '\n'); !ok {
		return "", "", "", "", "", "", false
	}
	return g, s, l, e, n, rest, true
}

// field returns the longest prefix of s whose bytes are all in class, and
// what follows the end byte after it; ok is false when end does not
// follow.
func field(s string, class func(byte) bool, end byte) (f, rest string, ok bool) {
	i := 0
	for i < len(s) && class(s[i]) {
		i++
	}
	if i == len(s) || s[i] != end {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isHex is Lua's %x: either case.
func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// record builds the record stored under storageKey from a script's reply:
// 0 for none, the record's value, or a v1 hash's fields {g, s, l, e, r,
// n}. The nonce is ignored. Fields that do not parse or a payload that
// does not decode are an error wrapping [store.ErrCorrupt].
func record(op, storageKey string, v any) (*policy.Record, error) {
	var f [5]string // g, s, l, e, r
	switch v := v.(type) {
	case int64:
		if v == 0 {
			return nil, nil
		}
		return nil, unexpected(op, storageKey)
	case string:
		var ok bool
		if f[0], f[1], f[2], f[3], _, f[4], ok = splitValue(v); !ok {
			return nil, corruptFields(op, storageKey)
		}
	case []any:
		if len(v) != 6 {
			return nil, unexpected(op, storageKey)
		}
		for i := range f {
			s, ok := v[i].(string)
			if !ok {
				return nil, corruptFields(op, storageKey)
			}
			f[i] = s
		}
	default:
		return nil, unexpected(op, storageKey)
	}
	rec := &policy.Record{StorageKey: storageKey}
	if !parseFields(rec, f[0], f[1], f[2], f[3]) {
		return nil, corruptFields(op, storageKey)
	}
	if err := store.DecodePayload(rec, []byte(f[4])); err != nil {
		var se *store.Error
		if errors.As(err, &se) && se.Err != nil {
			err = se.Err
		}
		return nil, &store.Error{Op: op, StorageKey: storageKey, Kind: store.ErrCorrupt, Err: err}
	}
	return rec, nil
}

// parseFields sets the generation, state, lease expiry and expiry of rec
// from their fields, and reports whether all four are valid, as the
// scripts judge them.
func parseFields(rec *policy.Record, g, s, l, e string) bool {
	var ok, okS, okL, okE bool
	rec.Generation, ok = generation(g)
	if okS = s == "0" || s == "1" || s == "2"; okS {
		rec.State = policy.State(s[0] - '0')
	}
	rec.LeaseExpiry, okL = parseTime(l)
	rec.ExpiresAt, okE = parseTime(e)
	return ok && okS && okL && okE
}

func corruptFields(op, storageKey string) error {
	return &store.Error{Op: op, StorageKey: storageKey, Kind: store.ErrCorrupt, Err: errFields}
}

// unexpected reports a script reply of another shape than the script
// returns: a server that is not Redis, or a proxy that changed it.
func unexpected(op, storageKey string) error {
	return &store.Error{Op: op, StorageKey: storageKey, Kind: store.ErrUnavailable, Err: fmt.Errorf("unexpected reply to the %s script", op)}
}
