package policy

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// storedHeader returns the fields of h that Complete stores: without the
// headers StoresHeader refuses nor those h's Connection header names. It
// reads h once and allocates once when every name has one value, the
// usual case.
func (r *Rule) storedHeader(h http.Header) Header {
	var named []string // by Connection, in canonical form
	var out Header
	for k, vs := range h {
		if len(k) == len("Connection") && strings.EqualFold(k, "Connection") {
			for _, v := range vs {
				for t := range strings.SplitSeq(v, ",") {
					if t = strings.Trim(t, " \t"); t != "" {
						named = append(named, http.CanonicalHeaderKey(t))
					}
				}
			}
			continue // never stored
		}
		if len(vs) == 0 {
			continue
		}
		if len(r.exclude) > 0 || mayBeNeverStored(k) {
			c := http.CanonicalHeaderKey(k) // no allocation for a name in canonical form
			if neverStored(c) || r.exclude[c] {
				continue
			}
		}
		if out == nil {
			out = make(Header, 0, max(len(h), len(vs)))
		}
		for _, v := range vs {
			out = append(out, HeaderField{k, v})
		}
	}
	if named != nil { // rare: the handler named headers in Connection
		out = slices.DeleteFunc(out, func(f HeaderField) bool {
			return slices.Contains(named, http.CanonicalHeaderKey(f.Name))
		})
	}
	if len(out) == 0 {
		return nil
	}
	out.sort()
	return out
}

// replayHeader returns the stored header as a new http.Header, with the
// replay header.
func (r *Rule) replayHeader(stored Header) http.Header {
	return stored.appendHTTP(r.replayName, r.replayValue) // no name: none added
}

// Complete returns the record that replaces the reservation res once its
// handler has answered with resp at time now. A status the rule caches
// gives a completed record holding the response, replayed until the TTL
// after now; any other releases the reservation (a record in StateNone), so
// that a retry executes again. Nothing is dropped for its size: a store that
// cannot hold the response must fail the write, not skip it.
//
// The stored header is a copy of resp.Header without the headers that
// must not be replayed to another request ([Rule.StoresHeader]):
// Set-Cookie, Set-Cookie2, Authorization and Proxy-Authorization (a
// session or credentials of one client), the hop-by-hop headers
// (Connection, Keep-Alive, Proxy-Connection, TE, Trailer,
// Transfer-Encoding, Upgrade, and those resp's Connection header names),
// Content-Length (the replay computes it again), and those the rule's
// exclude_headers lists; names are compared case-insensitively. A header
// with several values keeps each of them, in order.
//
// Write the record conditionally, like a reservation: if the write fails,
// the reservation was taken over after its lease expired, and this response
// is not stored. The record shares Body with resp; its header is a copy. It
// is an error wrapping ErrNotInFlight when res is not a reservation,
// ErrForeignRecord when res was not made for r's endpoint (for a defaults'
// rule: for its method), and ErrStatus when the status is not a final one
// (200 to 599).
func (r *Rule) Complete(res *Record, resp Response, now time.Time) (Record, error) {
	if err := r.checkReservation(res); err != nil {
		return Record{}, err
	}
	if resp.Status < 200 || resp.Status > 599 {
		return Record{}, errorf(ErrStatus, "policy: invalid response status %d: want a final status, 200 to 599", resp.Status)
	}
	next := *res
	next.Generation++
	if !r.cache.has(resp.Status) {
		next.State = StateNone
		next.Intent = nil
		next.LeaseExpiry = time.Time{}
		return next, nil
	}
	next.State = StateCompleted
	next.Status = resp.Status
	next.Header = r.storedHeader(resp.Header)
	next.Body = resp.Body
	next.ExpiresAt = now.Add(r.ttl)
	return next, nil
}

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
