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
