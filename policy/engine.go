package policy

import (
	"net/http"
	"strconv"
	"time"
)

// Decide tells what to do with req at time now, given the records stored
// under its two storage keys ([Rule.StorageKeys]): primary, under its
// tenant and key, and newIdentity, under its new identity. Each is nil when
// nothing is stored there; newIdentity is nil for a rule that resolves
// nothing with "new". Decide is a pure function: it reads no clock and
// writes nothing; the caller writes Decision.Reserve. After a lost write,
// read both records again and call Decide again: the loser of a race is
// compared with the winner's record like any other request.
//
// The checks run in this order: the tenant; the key (missing: a 400
// problem, or pass-through when the key is optional; malformed: a 400
// problem); then the records.
//
// The new identity comes first: a record there that still binds is, by
// construction of its storage key, of this very request (it executed as a
// new operation), so the request is its retry, whatever the primary record
// says. Otherwise, a primary record that no longer binds the key (none,
// released, expired, or a stale reservation past its TTL) lets the request
// execute. A record that binds is compared with the request: an equal
// fingerprint under the same spec is a retry (the fingerprint covers the
// method and the path); a record of another endpoint is rejected (422, or
// the rule's mismatch status), since a key used on one endpoint never names
// an operation of another; another spec digest gets the rule's
// on_spec_change, another fingerprint its on_mismatch. A retry, or a replay
// resolution, meets an in-flight reservation with a 409 problem and
// Retry-After, a stale one (past its lease) by taking it over, and a
// completed record by replaying it. A mismatch is found whatever the
// record's state, including when Decide is called again after losing the
// race to reserve.
//
// A record stored under another key than its argument's, or contradicting
// its storage key, or a binding record under the new identity that holds
// another request, is an error wrapping ErrForeignRecord; so is an empty
// tenant (ErrNoTenant), a defaults' rule's request without a path
// (ErrNoPath) or a key without a fingerprint (ErrNoFingerprint).
//
// The decision's Reserve and Response share Intent and Body with req and
// the records; the Response header is a copy.
func (r *Rule) Decide(req Request, primary, newIdentity *Record, now time.Time) (Decision, error) {
	t, d, err := r.resolve(&req)
	if err != nil || d.Action != 0 {
		return d, err
	}
	key, route, pk := t.key, t.route, t.primary
	if err := r.checkRecord(primary, pk, req.Tenant, key, route); err != nil {
		return Decision{}, err
	}
	digest := r.fp.SpecDigest()
	if newIdentity != nil {
		if !r.resolvesNew() {
			return Decision{}, errorf(ErrForeignRecord, "policy: a new-identity record for a rule that resolves nothing with \"new\"")
		}
		if err := r.checkRecord(newIdentity, t.newIdentity, req.Tenant, key, route); err != nil {
			return Decision{}, err
		}
		if newIdentity.Binds(now) {
			if newIdentity.Route != route || newIdentity.SpecDigest != digest || newIdentity.Fingerprint != req.Fingerprint {
				return Decision{}, errorf(ErrForeignRecord, "policy: the record under the request's new identity holds another request")
			}
			// This request executed as new before: answer as to a retry.
			return r.retry(&req, &t, ReasonRetry, newIdentity, true, now), nil
		}
	}

	if !primary.Binds(now) {
		return r.execute(&req, &t, ReasonFirst, primary, false, now), nil
	}
	rec := primary
	reason := ReasonRetry
	switch {
	case rec.SpecDigest == digest && rec.Fingerprint == req.Fingerprint:
	case rec.Route != route:
		reason = ReasonOtherRoute
	case rec.SpecDigest != digest:
		reason = ReasonSpecChanged
	default:
		reason = ReasonMismatch
	}
	inFlight := rec.State == StateInFlight && now.Before(rec.LeaseExpiry)

	resolution := ResolveReplay // a retry is answered as a replay is
	switch reason {
	case ReasonOtherRoute:
		return r.reject(reason, pk, problemOtherRoute(r.mismatchStatus), 0), nil
	case ReasonMismatch:
		resolution = r.onMismatch
	case ReasonSpecChanged:
		if inFlight { // cannot tell a retry from a new request; wait
			return r.inFlight(reason, rec, now), nil
		}
		resolution = r.onSpecChange
	}
	switch resolution {
	case ResolveReject:
		if reason == ReasonSpecChanged {
			return r.reject(reason, pk, problemSpecChanged(), 0), nil
		}
		return r.reject(reason, pk, problemKeyReuse(r.mismatchStatus, rec.Intent, req.Intent), 0), nil
	case ResolveNew:
		// newIdentity, if any, no longer binds: its generation goes on.
		return r.execute(&req, &t, reason, newIdentity, true, now), nil
	}
	return r.retry(&req, &t, reason, rec, false, now), nil
}

// checkRecord returns an error wrapping ErrForeignRecord when rec, found
// under storage key sk, is not a record of the request's tenant and key
// there.
func (r *Rule) checkRecord(rec *Record, sk, tenant, key, route string) error {
	switch {
	case rec == nil:
		return nil
	case rec.StorageKey != sk:
		return errorf(ErrForeignRecord, "policy: the record is stored under another key than the request's")
	case rec.Tenant != tenant || rec.Key != key:
		return errorf(ErrForeignRecord, "policy: the record was made for another tenant or key than its storage key says")
	case r.scopeRoute && rec.Route != route:
		return errorf(ErrForeignRecord, "policy: the record was made on another route than its storage key says")
	case rec.State > StateCompleted:
		return errorf(ErrForeignRecord, "policy: the record's state %v is unknown", rec.State)
	}
	return nil
}

// retry answers req as a retry of the binding record rec (at the new
// identity when atNew): wait for a running reservation, take over a stale
// one, replay a completed record.
func (r *Rule) retry(req *Request, t *target, reason Reason, rec *Record, atNew bool, now time.Time) Decision {
	switch {
	case rec.State == StateInFlight && now.Before(rec.LeaseExpiry):
		return r.inFlight(reason, rec, now)
	case rec.State == StateInFlight: // stale: its holder is presumed dead
		return r.execute(req, t, reason, rec, atNew, now)
	}
	return Decision{
		Action:     Replay,
		Reason:     reason,
		StorageKey: rec.StorageKey,
		Response:   Response{Status: rec.Status, Header: r.replayHeader(rec.Header), Body: rec.Body},
	}
}

// resolve returns the target of req, or, when req is decided without its
// records (a missing or malformed key), that decision, or an error. The
// decision's Action is 0 when there is a target.
func (r *Rule) resolve(req *Request) (target, Decision, error) {
	if req.Tenant == "" {
		return target{}, Decision{}, errNoTenant
	}
	key, err := r.parseKey(req.Key)
	if err != nil {
		if len(req.Key) == 0 {
			if !r.keyRequired {
				return target{}, Decision{Action: PassThrough, Reason: ReasonMissingKey}, nil
			}
			return target{}, r.reject(ReasonMissingKey, "", problemMissingKey(r.keyHeader), 0), nil
		}
		return target{}, r.reject(ReasonMalformedKey, "", problemMalformedKey(err), 0), nil
	}
	if req.Fingerprint.IsZero() {
		return target{}, Decision{}, errNoFingerprint
	}
	t, err := r.targetOf(req, key)
	return t, Decision{}, err
}

// execute reserves the key (or the new identity, when atNew) for req,
// replacing prev, the record stored there (nil for none).
func (r *Rule) execute(req *Request, t *target, reason Reason, prev *Record, atNew bool, now time.Time) Decision {
	d := Decision{Action: Execute, Reason: reason, StorageKey: t.primary}
	if atNew {
		d.Action, d.StorageKey = ExecuteAsNew, t.newIdentity
	}
	gen := uint64(1)
	if prev != nil {
		gen = prev.Generation + 1
	}
	res := r.reservation(req, t, d.StorageKey, gen, now)
	d.Reserve = &res
	return d
}

// reservation returns the in-flight record of req under storageKey, of
// generation gen, made at now.
func (r *Rule) reservation(req *Request, t *target, storageKey string, gen uint64, now time.Time) Record {
	res := Record{
		StorageKey:  storageKey,
		Generation:  gen,
		State:       StateInFlight,
		Tenant:      req.Tenant,
		Key:         t.key,
		Route:       t.route,
		Fingerprint: req.Fingerprint,
		SpecDigest:  r.fp.SpecDigest(),
		LeaseExpiry: now.Add(r.lease),
		ExpiresAt:   now.Add(r.ttl),
	}
	if r.storeIntent {
		res.Intent = req.Intent
	}
	return res
}

// inFlight rejects a request whose key is held by a live reservation.
func (r *Rule) inFlight(reason Reason, rec *Record, now time.Time) Decision {
	wait := r.retryAfter
	if wait == 0 {
		wait = rec.LeaseExpiry.Sub(now)
	}
	secs := int64((wait + time.Second - 1) / time.Second) // never less than the wait
	return r.reject(reason, rec.StorageKey, problemInFlight(secs), secs)
}

func (r *Rule) reject(reason Reason, storageKey string, p *ProblemDetails, retryAfter int64) Decision {
	h := http.Header{"Content-Type": {"application/problem+json"}}
	if retryAfter > 0 {
		h["Retry-After"] = []string{strconv.FormatInt(retryAfter, 10)}
	}
	return Decision{
		Action:     Reject,
		Reason:     reason,
		StorageKey: storageKey,
		Response:   Response{Status: p.Status, Header: h, Body: p.AppendJSON(nil)},
		Problem:    p,
	}
}
