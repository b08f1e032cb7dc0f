package policy

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
)

// State is the state of a stored [Record]. The zero value is [StateNone].
type State uint8

const (
	// StateNone is a released reservation: its response was not cached, so
	// the key is free again. The record only keeps the Generation counting,
	// so that a holder whose reservation was released and reused cannot
	// overwrite the new one. A missing record means the same.
	StateNone State = iota
	// StateInFlight is a reservation: a request holds the key and is
	// executing until LeaseExpiry.
	StateInFlight
	// StateCompleted is a stored response, replayed until ExpiresAt.
	StateCompleted
)

// String returns "none", "in-flight" or "completed".
func (s State) String() string {
	switch s {
	case StateNone:
		return "none"
	case StateInFlight:
		return "in-flight"
	case StateCompleted:
		return "completed"
	}
	return "State(" + itoa(int(s)) + ")"
}

// Record is what a store keeps under one storage key. The engine creates
// records ([Decision].Reserve, [Rule.Complete]); a store keeps them as they
// are and hands them back to [Rule.Decide].
//
// A store must write records conditionally: a record with Generation g
// replaces the stored one only if that one has Generation g-1 (g = 1: only if
// there is none). Every record the engine returns for a storage key has the
// next generation of the record it was decided from, so of two requests
// racing for one key exactly one write succeeds; the loser reads the
// records again and calls Decide again.
//
// The zero value is a released reservation of no key.
type Record struct {
	// StorageKey is the key under which the record is stored.
	StorageKey string
	// Generation counts the writes under StorageKey, from 1.
	Generation uint64
	// Tenant and Key are the tenant and the key (its content, unquoted) of
	// the request that created the record.
	Tenant, Key string
	// Route is the endpoint of the request that created the record: the
	// rule's route with its parameter names erased ("POST
	// /v1/payments/{}"), or, under a defaults' rule, the method and the
	// request's path ("POST /v1/orders").
	Route string
	// State is the record's state. (It sits beside Fingerprint, whose
	// bytes leave room for it: a record fills 256 bytes exactly.)
	State State
	// Fingerprint is the fingerprint of the request that created the
	// record, computed under the spec whose digest is SpecDigest.
	Fingerprint fingerprint.Fingerprint
	SpecDigest  string
	// Intent is the request's intent projection (the document of
	// [fingerprint.Fingerprinter.AppendIntent]), kept only when the rule
	// stores intent; nil otherwise.
	Intent []byte
	// LeaseExpiry is when an in-flight reservation becomes stale and may be
	// taken over.
	LeaseExpiry time.Time
	// ExpiresAt is when the record stops binding its key: for a completed
	// record, the TTL after completion; for a reservation, the TTL after it
	// was made. A store may delete a record after ExpiresAt.
	ExpiresAt time.Time
	// Status, Header and Body are the stored response of a completed
	// record. Header holds what the rule stores of the response's header
	// ([Rule.StoresHeader]).
	Status int
	Header Header
	Body   []byte
}

// Binds reports whether rec still binds its storage key at now: a
// completed record until ExpiresAt, an in-flight reservation until both
// its LeaseExpiry and its ExpiresAt are over (Parse keeps the lease shorter
// than the TTL, but a record is judged as it is), a released record
// (StateNone) never, nor a nil one. Instants are compared with
// [time.Time.Before]: a record stops binding at ExpiresAt itself.
//
// It is the rule by which [Rule.Decide] tells whether a record holds its
// key at the time it is given. A store that judges by its own clock
// whether a record still binds (to expire it, to delete it, to refuse or
// allow a write) must judge with exactly this rule, or it and the engine
// will disagree about who holds a key.
func (rec *Record) Binds(now time.Time) bool {
	if rec == nil || rec.State == StateNone {
		return false
	}
	return now.Before(rec.ExpiresAt) || rec.State == StateInFlight && now.Before(rec.LeaseExpiry)
}

// Request describes an incoming request to [Rule.Decide]. Build one with
// [Rule.NewRequest] or by hand. The zero value has no tenant and is
// rejected with ErrNoTenant.
type Request struct {
	// Tenant is the caller on whose behalf the request runs (an account, an
	// API key's owner); keys of two tenants never meet. It must not be
	// empty: a single-tenant service passes a fixed name, so that sharing
	// one key space is a decision and not an accident.
	Tenant string
	// Key holds the values of the rule's key header, whatever the case of
	// its name: nil when absent. [Rule.NewRequest] collects the values of
	// every spelling, so that two spellings are a repeated header.
	Key []string
	// Path is the request's path as it is fingerprinted: the escaped form
	// (URL.EscapedPath) that [fingerprint.Fingerprinter.HTTPRequest] gives
	// and [Rule.NewRequest] copies, in which /a%2Fb and /a/b differ. A
	// defaults' rule, which matches any path, needs it: each path is an
	// endpoint of its own, and a key used on one is never taken for an
	// operation of another. A rule with a route ignores it.
	Path string
	// Fingerprint is the request's fingerprint under the rule's spec. It
	// must be set when Key is.
	Fingerprint fingerprint.Fingerprint
	// Intent is the request's intent projection. It is kept in the reserved
	// record only when the rule stores intent, and compared with the stored
	// one to list the fields a key-reuse rejection differs at.
	Intent []byte

	cache keyCache // where NewRequest found the records to be
}

// target is where a request's records are: its key's content, its
// endpoint, and its two storage keys (newIdentity "" for a rule that
// resolves nothing with "new").
type target struct {
	key, route, primary, newIdentity string
}

// keyCache keeps the target NewRequest computed for a request, with what
// it was computed from, so that StorageKeys and Decide do not build the
// same storage keys again; a request changed since is computed afresh.
type keyCache struct {
	rule         *Rule
	tenant, path string
	value        string // the key header's one value
	fp           fingerprint.Fingerprint
	target
}

// cached returns the cached target of req under r, if it is still req's.
func (r *Rule) cached(req *Request) (target, bool) {
	c := &req.cache
	if c.rule != r || c.tenant != req.Tenant || c.path != req.Path || c.fp != req.Fingerprint || len(req.Key) != 1 || c.value != req.Key[0] {
		return target{}, false
	}
	return c.target, true
}

// targetOf returns the target of req, whose key's content is key.
func (r *Rule) targetOf(req *Request, key string) (target, error) {
	route, err := r.routeOf(req)
	if err != nil {
		return target{}, err
	}
	t := target{key: key, route: route, primary: r.primaryKey(req.Tenant, route, key)}
	if r.resolvesNew() {
		if req.Fingerprint.IsZero() {
			return target{}, errNoFingerprint
		}
		t.newIdentity = r.newKey(req.Tenant, route, key, req.Fingerprint)
	}
	return t, nil
}

// NewRequest computes the Request for fr under r: the key header's values
// (its name compared case-insensitively, as the fingerprint compares header
// names), the path, and, when there is a key, the fingerprint and (when the
// rule stores intent) the intent projection. Without a key nothing is
// fingerprinted, so a pass-through request may have any body. The error is
// the fingerprint package's: a *canonical.Error for a body that is not
// strict JSON, a *fingerprint.RequestError for a missing required value;
// answer it with a 400.
//
// Build fr from an *http.Request with [fingerprint.Fingerprinter.HTTPRequest]
// of r.Fingerprinter(): net/http moves the Host header out of
// Request.Header into Request.Host, and that builder puts it back when the
// rule's fingerprint declares it ("headers": ["Host"]), so that requests
// to two hosts differ. A caller that builds fr by hand sets fr.Header's
// Host itself. When the rule's fingerprint declares Host and fr.Header has
// none, NewRequest fails (a *fingerprint.RequestError wrapping
// fingerprint.ErrMissingRequired; a client must send the host, RFC 9110
// §7.2) rather than fingerprint the request without it.
func (r *Rule) NewRequest(tenant string, fr fingerprint.Request) (Request, error) {
	req := Request{Tenant: tenant, Key: headerValues(fr.Header, r.keyHeader), Path: fr.Path}
	if len(req.Key) == 0 {
		req.Key = nil
		return req, nil
	}
	if r.fpHost && len(headerValues(fr.Header, "Host")) == 0 {
		return Request{}, &fingerprint.RequestError{Part: "header", Name: "host", Err: errorf(fingerprint.ErrMissingRequired,
			"required value missing: the rule's fingerprint declares Host, which net/http keeps in Request.Host; build the request with Fingerprinter.HTTPRequest")}
	}
	var err error
	if r.storeIntent {
		req.Fingerprint, req.Intent, err = r.fp.SumIntent(nil, fr)
	} else {
		req.Fingerprint, err = r.fp.Sum(fr)
	}
	if err != nil {
		return Request{}, err
	}
	if tenant != "" {
		if key, err := r.parseKey(req.Key); err == nil {
			if t, err := r.targetOf(&req, key); err == nil {
				req.cache = keyCache{rule: r, tenant: tenant, path: req.Path, value: req.Key[0], fp: req.Fingerprint, target: t}
			}
		}
	}
	return req, nil
}

// Action is what the caller does with a request. The zero value is not an
// action (its String is "none": no decision was reached); Decide never
// returns it.
type Action uint8

const (
	// Execute runs the handler after writing Decision.Reserve.
	Execute Action = iota + 1
	// Replay answers with Decision.Response, the stored one, without
	// running the handler.
	Replay
	// ExecuteAsNew runs the handler as a new operation (on_mismatch or
	// on_spec_change "new"), or runs again one whose reservation under the
	// new identity went stale, after writing Decision.Reserve under the new
	// identity, Decision.StorageKey.
	ExecuteAsNew
	// Reject answers with Decision.Response, an RFC 9457 problem, without
	// running the handler.
	Reject
	// PassThrough runs the handler without idempotency: the key is
	// optional and absent.
	PassThrough
)

// String returns the action's name: "execute", "replay", "execute-as-new",
// "reject" or "pass-through", or "none" for the zero value.
func (a Action) String() string {
	switch a {
	case 0:
		return "none"
	case Execute:
		return "execute"
	case Replay:
		return "replay"
	case ExecuteAsNew:
		return "execute-as-new"
	case Reject:
		return "reject"
	case PassThrough:
		return "pass-through"
	}
	return "Action(" + itoa(int(a)) + ")"
}

// MarshalText returns the action's name.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// Reason says how the request relates to the stored record. The zero value
// is not a reason (its String is "none"); Decide never returns it.
type Reason uint8

const (
	// ReasonMissingKey: the request has no key.
	ReasonMissingKey Reason = iota + 1
	// ReasonMalformedKey: the key header is repeated or breaks the syntax.
	ReasonMalformedKey
	// ReasonFirst: no record binds the key (none, released or expired).
	ReasonFirst
	// ReasonRetry: the record was made by a request with an equal
	// fingerprint under the same spec: this is a retry.
	ReasonRetry
	// ReasonMismatch: the record was made by a request with another
	// fingerprint: the key is being reused.
	ReasonMismatch
	// ReasonSpecChanged: the record was fingerprinted under another spec,
	// so the two requests cannot be compared.
	ReasonSpecChanged
	// ReasonOtherRoute: the record was made by a request to another
	// endpoint (compared with parameter names erased): the key is being
	// reused across endpoints, which is always rejected.
	ReasonOtherRoute
)

// String returns the reason's name: "missing-key", "malformed-key",
// "first", "retry", "mismatch", "spec-changed" or "other-route", or "none"
// for the zero value.
func (r Reason) String() string {
	switch r {
	case 0:
		return "none"
	case ReasonMissingKey:
		return "missing-key"
	case ReasonMalformedKey:
		return "malformed-key"
	case ReasonFirst:
		return "first"
	case ReasonRetry:
		return "retry"
	case ReasonMismatch:
		return "mismatch"
	case ReasonSpecChanged:
		return "spec-changed"
	case ReasonOtherRoute:
		return "other-route"
	}
	return "Reason(" + itoa(int(r)) + ")"
}

// MarshalText returns the reason's name.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Response is an HTTP response: what a handler produced ([Rule.Complete]) or
// what to answer ([Decision].Response). The zero value has no status, which
// Complete rejects.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decision is what [Rule.Decide] tells the caller to do. Decide returns a
// complete Decision or an error, never the zero value, whose Action is
// invalid.
type Decision struct {
	// Action is what to do; Reason why.
	Action Action
	Reason Reason
	// StorageKey is where the decision was made: where Reserve goes for
	// Execute and ExecuteAsNew, where the record came from for Replay and
	// Reject. It is empty when the key is missing or malformed.
	StorageKey string
	// Reserve is the in-flight record to write, conditionally, before
	// executing (Execute, ExecuteAsNew); nil otherwise. When the write
	// fails because another request wrote first, read the records under
	// both storage keys again and call Decide again with them.
	Reserve *Record
	// Response is what to answer with for Replay and Reject: the stored
	// response with the replay header added, or a problem.
	Response Response
	// Problem is the problem of a Reject, also encoded in Response.Body.
	Problem *ProblemDetails
}

// StorageKeys returns where the records of req are stored under r: primary,
// the storage key of the tenant and the key (and, when the rule's scope
// includes the route, the endpoint), and newIdentity, the storage key of
// the new identity that on_mismatch or on_spec_change "new" gives the
// request: its key together with its fingerprint and spec digest.
// newIdentity is "" for a rule that resolves nothing with "new"; then pass
// a nil record for it. See the package documentation for the encoding.
//
// Read the records under both keys and pass them to [Rule.Decide]. The
// error wraps ErrNoTenant, ErrNoPath, ErrNoFingerprint (a rule with a new
// identity needs the fingerprint, which [Rule.NewRequest] computes),
// ErrMissingKey or ErrMalformedKey; with the latter two, call Decide with
// nil records to learn the answer.
func (r *Rule) StorageKeys(req Request) (primary, newIdentity string, err error) {
	if req.Tenant == "" {
		return "", "", errNoTenant
	}
	if t, ok := r.cached(&req); ok {
		return t.primary, t.newIdentity, nil
	}
	key, err := r.parseKey(req.Key)
	if err != nil {
		return "", "", err
	}
	t, err := r.targetOf(&req, key)
	if err != nil {
		return "", "", err
	}
	return t.primary, t.newIdentity, nil
}

// resolvesNew reports whether some resolution of r is "new", so that its
// requests have a new identity.
func (r *Rule) resolvesNew() bool {
	return r.onMismatch == ResolveNew || r.onSpecChange == ResolveNew
}

// routeOf returns the endpoint of req under r: the rule's, or for a
// defaults' rule the method and the request's path.
func (r *Rule) routeOf(req *Request) (string, error) {
	if r.endpoint != "" {
		return r.endpoint, nil
	}
	if req.Path == "" {
		return "", errNoPath
	}
	return r.method + " " + req.Path, nil
}

func (r *Rule) primaryKey(tenant, route, key string) string {
	if !r.scopeRoute {
		route = ""
	}
	return storageKey(tenant, route, key)
}

// newKey returns the storage key of the new identity that on_mismatch and
// on_spec_change "new" give a request: its key together with its
// fingerprint and spec digest, so that a record found there is, by
// construction, of an equal request.
func (r *Rule) newKey(tenant, route, key string, fp fingerprint.Fingerprint) string {
	if !r.scopeRoute {
		route = ""
	}
	return storageKey(tenant, route, key, fp.String(), r.fp.SpecDigest())
}

var (
	errNoTenant      = errorf(ErrNoTenant, "policy: empty tenant: pass a fixed name when there is one tenant")
	errNoPath        = errorf(ErrNoPath, "policy: empty path: a defaults' rule keeps the records of each path apart")
	errNoFingerprint = errorf(ErrNoFingerprint, "policy: the request has a key but a zero fingerprint")
)

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

// DecideFirst is [Rule.Decide] for a request whose storage keys hold no
// record, Decide(req, nil, nil, now), with the reservation returned as a
// value: for Execute, res is the record Decide would give as Reserve, and
// d.Reserve is nil; for any other decision res is the zero Record. It
// allocates nothing for a first execution, which is the first step of
// every request to a store that reserves in one round trip.
func (r *Rule) DecideFirst(req Request, now time.Time) (d Decision, res Record, err error) {
	t, d, err := r.resolve(&req)
	if err != nil || d.Action != 0 {
		return d, Record{}, err
	}
	return Decision{Action: Execute, Reason: ReasonFirst, StorageKey: t.primary}, r.reservation(&req, &t, t.primary, 1, now), nil
}

// resolve returns the target of req, or, when req is decided without its
// records (a missing or malformed key), that decision, or an error. The
// decision's Action is 0 when there is a target.
func (r *Rule) resolve(req *Request) (target, Decision, error) {
	if req.Tenant == "" {
		return target{}, Decision{}, errNoTenant
	}
	if t, ok := r.cached(req); ok {
		return t, Decision{}, nil
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
