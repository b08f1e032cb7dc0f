package idemclient

import (
	"context"
	"crypto/rand"
	"time"
)

// Operation is one logical operation whose key outlives a call of
// RoundTrip: a payment the caller may retry tomorrow, after a restart.
// Put it in a request's context with [WithOperation]; every request sent
// with that context and no key header of its own carries Key, and Key is
// not retried once it is older than the retention counted from Started.
// Persist both to retry the operation later.
//
// The zero value is an operation not yet started: the first RoundTrip
// that uses it sets Key (minting one) and Started (to the time of its
// first attempt). An Operation may be shared by concurrent requests only
// once Key and Started are set.
type Operation struct {
	// Key is the operation's idempotency key.
	Key string
	// Started is when the operation was first attempted: the key's age
	// counts from it.
	Started time.Time
}

type operationKey struct{}

// WithOperation returns a copy of ctx that carries op, for requests of
// that operation.
func WithOperation(ctx context.Context, op *Operation) context.Context {
	return context.WithValue(ctx, operationKey{}, op)
}

// operationFrom returns the operation ctx carries, or nil.
func operationFrom(ctx context.Context) *Operation {
	op, _ := ctx.Value(operationKey{}).(*Operation)
	return op
}

// NewOperation returns an operation started at now with a new key, minted
// as the transport mints them ([Options].NewKey).
func (t *Transport) NewOperation(now time.Time) (*Operation, error) {
	key, err := t.mint()
	if err != nil {
		return nil, err
	}
	return &Operation{Key: key, Started: now}, nil
}

// mint returns a new key, or an [*Error] wrapping [ErrKey].
func (t *Transport) mint() (string, error) {
	if t.opts.NewKey == nil {
		return newUUID()
	}
	key, err := t.opts.NewKey()
	if err != nil || key == "" {
		return "", &Error{Err: errorsJoin(ErrKey, err)}
	}
	return key, nil
}

// newUUID returns a random (version 4) UUID in its text form, from
// crypto/rand.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", &Error{Err: errorsJoin(ErrKey, err)}
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	const hex = "0123456789abcdef"
	var s [36]byte
	j := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			s[j] = '-'
			j++
		}
		s[j], s[j+1] = hex[c>>4], hex[c&0x0f]
		j += 2
	}
	return string(s[:]), nil
}
