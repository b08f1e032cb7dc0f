package store

import (
	"context"
	"errors"
	"time"

	"github.com/idemprint/idemprint/policy"
)

// Claim is what [Acquire] found for a request.
type Claim struct {
	// Decision is the engine's decision for the request. For Execute and
	// ExecuteAsNew the request holds a reservation, Record, and runs;
	// for Replay and Reject, answer Decision.Response; for PassThrough,
	// run without idempotency. Its Reserve is always nil: Record is the
	// reservation, as the store wrote it.
	Decision policy.Decision
	// Record is the reservation the request holds when it executes, as
	// stored: complete, renew or release it with the rule and [Store.Write].
	Record policy.Record
	// Now is the store's time at the last operation that read it (zero
	// when Acquire did not reach the store). Add the time elapsed since to
	// know the store's time without asking it.
	Now time.Time
	// Calls is how many operations (round trips) Acquire made on the store.
	Calls int

	at time.Time // this process's (monotonic) time when Now came back
}

// StoreTime returns the store's time now, without asking the store: Now
// plus the time elapsed since, on this process's monotonic clock, which
// no change of its wall clock affects. Use it for the times written
// later: a completion's expiry, a renewed lease.
func (c *Claim) StoreTime() time.Time {
	if c.Now.IsZero() {
		return time.Time{}
	}
	return c.Now.Add(time.Since(c.at))
}

// maxAttempts bounds how often [Acquire] decides again after losing a
// race: each loss means another request wrote the key in between.
const maxAttempts = 8

// Acquire runs the engine's flow for req under rule: it reserves the key
// for a first execution, or gives the records that hold it to
// [policy.Rule.Decide] and, when the decision is to execute (taking over a
// stale reservation, or a new identity), writes its reservation
// conditionally. A lost write means another request wrote first; Acquire
// then decides again on the winner's record, up to a few times, and
// returns an error wrapping [ErrContention] after that.
//
// A first execution costs one round trip, a replay, a rejection or an
// in-flight answer one, a takeover or new identity two. A missing or
// malformed key is decided without the store. Every record the store
// returns goes through Decide: nothing is replayed or rejected without
// the engine's comparison.
//
// The error is the store's ([*Error]) or the engine's (a request without
// tenant, or a record that contradicts its storage key).
func Acquire(ctx context.Context, s Store, rule *policy.Rule, req policy.Request) (c Claim, err error) {
	// c is the result itself, so that returning it copies none of its
	// hundreds of bytes. Without records, the engine answers what needs
	// no store (a missing or malformed key) and otherwise gives the
	// reservation to make; the store sets its generation and times.
	d, err := rule.Decide(req, nil, nil, time.Time{})
	if err != nil || d.Action != policy.Execute {
		return Claim{Decision: d}, err
	}
	first := *d.Reserve
	d.Reserve = nil
	pk, nk, err := rule.StorageKeys(req)
	if err != nil {
		return Claim{}, err
	}
	res := Reservation{Record: first, Lease: rule.Lease(), TTL: rule.TTL(), NewIdentity: nk}
	for range maxAttempts {
		out, err := s.Reserve(ctx, res)
		c.Calls++
		if err != nil {
			return c, err
		}
		c.Now, c.at = out.Now, time.Now()
		if out.Reserved {
			c.Decision, c.Record = d, out.Record // the store's generation and times
			return c, nil
		}
		d2, err := rule.Decide(req, out.Primary, out.NewIdentity, out.Now)
		if err != nil {
			return c, err
		}
		if d2.Action != policy.Execute && d2.Action != policy.ExecuteAsNew {
			c.Decision = d2
			return c, nil
		}
		err = s.Write(ctx, *d2.Reserve, guardFor(d2, pk, nk, out.Primary))
		c.Calls++
		if err == nil {
			c.Decision, c.Record = d2, *d2.Reserve
			c.Decision.Reserve = nil
			return c, nil
		}
		if !errors.Is(err, ErrConflict) {
			return c, err
		}
	}
	return c, &Error{Op: "acquire", StorageKey: pk, Kind: ErrContention}
}

// guardFor returns the condition on the request's other storage key under
// which the reservation of d may be written: a new identity taken because
// the primary record holds another request only while that record still
// binds unchanged, and a takeover of the primary key only while the new
// identity holds nothing. Either way one request never runs under both
// keys at once.
func guardFor(d policy.Decision, pk, nk string, primary *policy.Record) Guard {
	switch {
	case d.Action == policy.ExecuteAsNew && d.Reason != policy.ReasonRetry && primary != nil:
		return Guard{StorageKey: pk, Generation: primary.Generation}
	case d.Action == policy.Execute && nk != "":
		return Guard{StorageKey: nk}
	}
	return Guard{}
}
