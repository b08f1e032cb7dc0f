package redisstore

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// appendPayload returns the payload of rec in a buffer allocated once.
func appendPayload(rec *policy.Record) []byte {
	return store.AppendPayload(make([]byte, 0, payloadBound(rec)), rec)
}

// payloadBound bounds the length of rec's payload: the fields' lengths,
// a varint of at most 10 bytes per field and per header entry, and room
// for the version, the fingerprint's text and the checksum.
func payloadBound(rec *policy.Record) int {
	n := 256 + len(rec.Tenant) + len(rec.Key) + len(rec.Route) + len(rec.SpecDigest) + len(rec.Intent) + len(rec.Body)
	for name, values := range rec.Header {
		n += 20 + len(name)
		for _, v := range values {
			n += 10 + len(v)
		}
	}
	return n
}

// formatTime returns t as a time field, and false when the store cannot
// keep it: before 1970 or from 2^53 µs on.
func formatTime(t time.Time) (string, bool) {
	if t.IsZero() {
		return "", true
	}
	us := t.UnixMicro()
	if t.Before(time.Unix(0, 0)) || us >= maxMicros {
		return "", false
	}
	return strconv.FormatInt(us, 10), true
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

var errFields = errors.New("hash fields do not parse")

// record builds the record stored under storageKey from a script's reply:
// 0 for none, or its fields {g, s, l, e, r, n}, the nonce ignored. Fields
// that do not parse or a payload that does not decode are an error
// wrapping [store.ErrCorrupt].
func record(op, storageKey string, v any) (*policy.Record, error) {
	if v == int64(0) {
		return nil, nil
	}
	f, ok := v.([]any)
	if !ok || len(f) != 6 {
		return nil, unexpected(op, storageKey)
	}
	rec := &policy.Record{StorageKey: storageKey}
	var okS, okL, okE bool
	rec.Generation, ok = generation(f[0])
	state, _ := f[1].(string)
	if okS = state == "0" || state == "1" || state == "2"; okS {
		rec.State = policy.State(state[0] - '0')
	}
	l, _ := f[2].(string)
	e, _ := f[3].(string)
	rec.LeaseExpiry, okL = parseTime(l)
	rec.ExpiresAt, okE = parseTime(e)
	payload, okP := f[4].(string)
	if !ok || !okS || !okL || !okE || !okP {
		return nil, corruptFields(op, storageKey)
	}
	if err := store.DecodePayload(rec, []byte(payload)); err != nil {
		var se *store.Error
		if errors.As(err, &se) && se.Err != nil {
			err = se.Err
		}
		return nil, &store.Error{Op: op, StorageKey: storageKey, Kind: store.ErrCorrupt, Err: err}
	}
	return rec, nil
}

func corruptFields(op, storageKey string) error {
	return &store.Error{Op: op, StorageKey: storageKey, Kind: store.ErrCorrupt, Err: errFields}
}

// unexpected reports a script reply of another shape than the script
// returns: a server that is not Redis, or a proxy that changed it.
func unexpected(op, storageKey string) error {
	return &store.Error{Op: op, StorageKey: storageKey, Kind: store.ErrUnavailable, Err: fmt.Errorf("unexpected reply to the %s script", op)}
}
