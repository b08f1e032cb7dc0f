// Package sidecar is the reverse proxy behind "idemprint serve": an
// [httputil.ReverseProxy] to one upstream, wrapped in the idemhttp
// middleware, with the metrics, the request log and the admin endpoints
// of a service that runs in front of an API written in any language.
//
// # Upstream failures
//
// A request the middleware executes either reached the upstream or did
// not, and only the first may have had an effect (charged the card). The
// proxy tells the two apart by what the transport did, not by the text of
// its error: it traces every attempt the transport makes
// ([httptrace.ClientTrace]), and a request is "sent" as soon as the
// transport begins writing it on a connection (WroteHeaders or
// WroteRequest, whether the write then succeeded or not), since from then
// on some of its bytes may have reached the upstream.
//
//   - Never sent (the dial was refused or timed out, no route, DNS or TLS
//     failure, the client left before a connection was ready): a 502
//     problem, [TypeUpstreamUnreachable], and the reservation is released
//     ([idemhttp.ReleaseReservation]): nothing executed, a retry runs.
//   - Sent, then failed (the upstream silent for longer than its
//     timeout, the connection reset or closed before or during the
//     response): a 504 problem, [TypeUpstreamOutcomeUnknown], when
//     nothing was answered yet, or an aborted response when part of it
//     was; either way the reservation is held ([idemhttp.HoldReservation]). It is neither
//     completed nor released, and holds until its lease lapses, so that a
//     quick retry gets 409 instead of running beside a request that may
//     still be executing upstream. The rule's lease is the knob: after it,
//     a retry takes the key over and executes.
//
// When in doubt the proxy holds: a request the transport tried more than
// once counts as sent if any attempt began writing, and a write that
// failed before a byte left counts as sent too. net/http's transport
// repeats a request on its own only when it knows no byte was written,
// or, for a request without a body, when it deems it replayable, which it
// does for any request carrying an Idempotency-Key header; the proxy
// sends that header under a map key the transport does not look at (the
// name's lower case, the same header on the wire), so that a request
// that may have executed is never repeated behind the middleware's back.
// Methods that net/http always deems replayable (GET, HEAD, OPTIONS,
// TRACE) keep that behaviour; a policy rarely governs them.
//
// # Metrics
//
// With a registry ([Config].Registry), the sidecar exports these series,
// whose labels are bounded by the policy and by this package, never by
// keys, tenants or paths:
//
//	idemprint_decisions_total{rule,route,action,reason,outcome}  counter: governed requests
//	idemprint_request_duration_seconds{rule,outcome}             histogram: arrival to answer and record completed
//	idemprint_store_duration_seconds{op,result}                  histogram: store operations
//	idemprint_requests_in_flight                                 gauge: requests being served, governed or not
//	idemprint_requests_executing                                 gauge: governed requests running under a reservation
//	idemprint_requests_waiting                                   gauge: governed requests waiting for a reservation
//	idemprint_upstream_errors_total{kind}                        counter: unreachable, outcome-unknown, aborted
//
// rule is the rule's JSON Pointer in the policy file ("/rules/0",
// "/defaults"), route its "METHOD /pattern"; action, reason and outcome
// are the engine's and the middleware's names ("none" where no decision
// was reached); op is reserve, write, read or delete, and result ok,
// conflict, unavailable, full, corrupt, canceled or error.
package sidecar
