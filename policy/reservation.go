package policy

import (
	"strings"
	"time"
)

// Renew returns the record that extends the lease of the reservation res
// at now, while its handler is still running: the lease runs again from
// now, and the record binds at least until the lease ends. Write it
// conditionally, like a reservation; a failed write means the reservation
// was taken over after its lease lapsed, and renewing is pointless. It is
// an error wrapping ErrNotInFlight or ErrForeignRecord, as for
// [Rule.Complete].
//
// Renew before the lease runs out (a third of it is a safe period), so a
// long handler is never taken for a dead one.
func (r *Rule) Renew(res *Record, now time.Time) (Record, error) {
	if err := r.checkReservation(res); err != nil {
		return Record{}, err
	}
	next := *res
	next.Generation++
	next.LeaseExpiry = now.Add(r.lease)
	if next.ExpiresAt.Before(next.LeaseExpiry) {
		next.ExpiresAt = next.LeaseExpiry
	}
	return next, nil
}

// Release returns the record that gives up the reservation res without a
// response: a released reservation (StateNone), so that a retry executes
// again. Use it when the handler produced no answer that may be stored:
// it panicked, or the request never reached the service that would have
// executed it. Write it conditionally, like a completion. It is an error
// wrapping ErrNotInFlight or ErrForeignRecord, as for [Rule.Complete].
func (r *Rule) Release(res *Record) (Record, error) {
	if err := r.checkReservation(res); err != nil {
		return Record{}, err
	}
	next := *res
	next.Generation++
	next.State = StateNone
	next.Intent = nil
	next.LeaseExpiry = time.Time{}
	return next, nil
}

// CompleteWithoutResponse returns the record that completes the
// reservation res when its handler executed but its response cannot be
// kept for replay: it was larger than the caller keeps (size is the size
// seen, or 0 when unknown), or the handler took over the connection
// (status 0: no response was seen). A status the rule caches, or status 0,
// gives a completed record whose replay is a 409 problem of type
// [TypeResponseNotKept]: a retry is told that the request executed, and
// never executes it again. Skipping the record instead would let the
// retry repeat the side effect; keeping a truncated body would replay a
// response that was never sent. Any other status releases the
// reservation, as [Rule.Complete] does, since a retry may execute again.
// Write it conditionally, like a completion. It is an error wrapping
// ErrNotInFlight, ErrForeignRecord or ErrStatus (a status other than 0
// and 200 to 599), as for Complete.
func (r *Rule) CompleteWithoutResponse(res *Record, status int, size int64, now time.Time) (Record, error) {
	if status != 0 && (status < 200 || status > 599) {
		return Record{}, errorf(ErrStatus, "policy: invalid response status %d: want a final status, 200 to 599, or 0 for none seen", status)
	}
	if status != 0 && !r.cache.has(status) {
		return r.Complete(res, Response{Status: status}, now)
	}
	if err := r.checkReservation(res); err != nil {
		return Record{}, err
	}
	p := problemResponseNotKept(status, size)
	next := *res
	next.Generation++
	next.State = StateCompleted
	next.Status = p.Status
	next.Header = Header{{"Content-Type", "application/problem+json"}}
	next.Body = p.AppendJSON(nil)
	next.ExpiresAt = now.Add(r.ttl)
	return next, nil
}

// checkReservation returns an error unless res is an in-flight reservation
// made by r: for r's endpoint, or, for a defaults' rule, for its method.
func (r *Rule) checkReservation(res *Record) error {
	if res == nil || res.State != StateInFlight {
		return errorf(ErrNotInFlight, "policy: only an in-flight reservation can be completed, renewed or released")
	}
	if r.endpoint != "" && res.Route != r.endpoint || r.endpoint == "" && !strings.HasPrefix(res.Route, r.method+" ") {
		return errorf(ErrForeignRecord, "policy: the reservation was made for %s, not by the rule for %s", res.Route, r.route)
	}
	return nil
}
