// Package policy reads a declared idempotency policy and decides, for every
// state of a key, what happens to a request: execute it, replay the stored
// response, execute it as a new operation, reject it, or let it pass
// through.
//
// # Why a declared policy
//
// When a key comes back with a request of another intent, real APIs split
// three ways. Stripe, AWS (IdempotentParameterMismatch) and the IETF
// Idempotency-Key draft reject it; Qonto replays the stored answer whatever
// the new body says; Checkbook treats it as a new operation. Each is right
// for some endpoint and wrong for another, so a policy file declares, per
// route, which one applies ("on_mismatch"), along with everything else that
// decides the outcome: where the key is read, what part of the request is
// its intent, which responses are stored, for how long. The model is
// Temporal's workflow-ID reuse and conflict policies: a declared resolution
// keyed on the state of the prior run.
//
// The engine, [Rule.Decide] and [Rule.Complete], is a pure function of the
// rule, the request, the stored records and the time, which is passed in (as
// golang.org/x/time/rate does): no clock, no goroutine, no store. The caller
// reads and writes records in its own store, conditionally; see [Record].
// A request has two storage keys: the primary one (tenant and key) and, for
// a rule that resolves a mismatch or a spec change with "new", its new
// identity (key, fingerprint and spec digest), where it runs when it
// executes as a new operation. Decide reads both. One flow, with a store
// whose Write(rec) succeeds only if the stored generation is
// rec.Generation-1 and whose Read("") is nil:
//
//	rule, ok := pol.Match(r.Method, r.URL.Path)                   // !ok: no idempotency
//	req, err := rule.NewRequest(tenant, fingerprint.Request{...}) // err: 400
//	pk, nk, _ := rule.StorageKeys(req)                            // "" when the key is missing or malformed; nk "" without "new"
//	d, err := rule.Decide(req, store.Read(pk), store.Read(nk), now)
//	for (d.Action == policy.Execute || d.Action == policy.ExecuteAsNew) && !store.Write(d.Reserve) {
//		d, err = rule.Decide(req, store.Read(pk), store.Read(nk), now) // lost the race: decide on the winner
//	}
//	switch d.Action { // Execute/ExecuteAsNew: run, then store.Write(rule.Complete(d.Reserve, resp, now))
//	}                 // Replay/Reject: answer d.Response; PassThrough: run
//
// Calling Decide again with the winner's record is what AWS Powertools once
// skipped (its TypeScript issues #1499 and #2058, Java #2260): the loser of
// the race replayed the winner's response without comparing payloads. Here
// every record, however it was obtained, goes through the same comparison.
//
// # The policy file
//
// A policy is a JSON object with "defaults" and "rules". Each rule has a
// "route" and any of the settings below; a setting a rule leaves out comes
// from "defaults", then from the built-in default. The first rule whose
// method and pattern match a request governs it; for a method listed in
// "defaults"."methods" (POST and PATCH unless set; [] for none) the
// defaults govern the requests no rule matches; other methods pass through.
//
//	field             value                                  default
//	route             "METHOD /pattern": segments are        (required in a rule)
//	                  literals or {param}, which matches
//	                  any one non-empty segment; no empty,
//	                  "." or ".." segment, which a router
//	                  cleans away
//	key.header        header name, not one net/http moves    "Idempotency-Key"
//	                  out of Request.Header (Host,
//	                  Content-Length, Transfer-Encoding,
//	                  Trailer) nor a hop-by-hop one
//	                  (Connection, TE, Upgrade, ...)
//	key.required      false: a request without a key         true
//	                  passes through
//	key.syntax        "printable" (1 to max_length of        "printable"
//	                  0x20-0x7E, no outer space) or "uuid"
//	                  (RFC 9562 text form; either case, the
//	                  same key)
//	key.max_length    1 to 1024                              255
//	scope.route       true: the rule's endpoint is part of   false (tenant and
//	                  the storage key                        key only)
//	fingerprint       a fingerprint.Spec: intent, ignore,    the whole body
//	                  required, numbers, headers, query;
//	                  headers as key.header allows, and
//	                  Host (see Rule.NewRequest)
//	on_mismatch       "reject", "replay" or "new"            "reject"
//	mismatch_status   422, 409 or 400                        422
//	on_spec_change    "reject", "replay" or "new"            "reject"
//	cache             statuses stored and replayed:          ["2xx"]
//	                  classes, codes, "!" to exclude,
//	                  such as ["2xx", "4xx", "!429"]
//	ttl               Go duration a response is kept         "24h"
//	                  (positive, unsigned: "24h", "90m")
//	lease             Go duration a reservation holds the    "30s"
//	                  key; shorter than ttl
//	retry_after       whole seconds answered to a request    the rest of the lease
//	                  that meets a reservation; at most
//	                  the lease
//	wait              Go duration a request that meets the   "0s" (answer at once)
//	                  running reservation of an equal
//	                  request may wait for its result
//	                  before its 409 (see Rule.Wait); "0s"
//	                  or more, at most the lease: past the
//	                  lease the reservation is stale and the
//	                  request takes it over
//	replay_header     "Name: value" added to replays, or ""; "Idempotent-Replayed: true"
//	                  not hop-by-hop (Connection, TE,
//	                  Transfer-Encoding, ...) nor Content-*,
//	                  ETag or Last-Modified
//	store_intent      true: keep the intent projection to    false (it may hold
//	                  name differing fields; only with       personal data)
//	                  on_mismatch "reject"
//	exclude_headers   response header names never stored     [] (none beyond those
//	                  for replay, such as ["X-Request-Id"]:  never stored)
//	                  tokens, each once, in any case; not
//	                  one that is never stored anyway
//
// Strict by default: an unknown field, a value of the wrong type, a
// duration that is not positive (negative, for wait), a status outside the
// list, a cache entry that is repeated, redundant or without effect, a
// setting without effect (mismatch_status or store_intent when not
// rejecting, a retry_after or a wait longer than the lease, an
// exclude_headers entry never stored anyway), a rule that overlaps an
// earlier one or that an earlier
// one makes unreachable: each is a [Finding] with its JSON Pointer, and
// [Parse] reports all of them ([MaxFindings] in detail, in document order,
// and the count of the rest). A setting that has no effect only in
// combination with an inherited one is reported where the object sets it;
// store_intent inherited by a rule that does not reject is simply off.
//
// Rules are tried in order, so two rules of one method may share paths
// only when the earlier one is strictly more specific
// ("POST /v1/payments/batch" before "POST /v1/payments/{id}"). The check is
// exact, by the paths each rule actually receives: a rule is an overlap
// (ErrOverlap) when some path it matches goes, by first match, to an
// earlier rule that is not more specific than it (one that also matches
// paths it does not), and unreachable (ErrUnreachable) when every path it
// matches goes to earlier rules. A path that a yet earlier rule takes is no
// overlap: "POST /a/b", "POST /{x}/b",
// "POST /a/{y}" is valid, since the only path the last two share goes to
// the first, which is more specific than both. A rule is reported once,
// naming the first rule it overlaps. The check's time grows near-linearly
// with the number of rules for the shapes policies have, and its work is
// bounded: rules so many and so alike that checking them would cost more
// are rejected (ErrTooComplex) rather than checked slowly.
//
// # Decisions
//
// With a valid key, the record under the primary key and the request
// decide:
//
//	record                               equal request     other fingerprint (on_mismatch)   other spec (on_spec_change)
//	none, released, expired              execute           execute                           execute
//	in flight, lease running             409 Retry-After   reject | 409 | execute-as-new     409 Retry-After
//	in flight, lease over (stale)        execute (takeover) reject | execute | execute-as-new reject | execute | execute-as-new
//	completed, before its TTL            replay            reject | replay | execute-as-new  reject | replay | execute-as-new
//
// The request is equal when its fingerprint is, under the same spec digest;
// since the fingerprint covers the method and the path, an equal request
// is one of the same endpoint. A record that binds the key and was made on
// another endpoint is rejected in every state, whatever on_mismatch says
// (reason other-route; the rule's mismatch status, 422 by default): a
// response is never replayed to, nor a request executed as new on, another
// endpoint than the one that first used the key. Endpoints are compared by
// route with parameter names erased ("POST /v1/payments/{}"), so a deploy
// that renames a parameter changes nothing; under the defaults, each path
// is an endpoint. scope.route keeps the endpoints' keys apart instead.
//
// With a "new" resolution, the record under the request's new identity
// comes first: while it binds, it is of this very request, which is its
// retry (409 Retry-After while it runs, a takeover once stale, a replay once
// completed), whatever the primary record holds, even when that record was
// released or has expired. A request executes as new at most once while its
// own record binds (but see the security considerations for the one window
// that two separately written keys leave).
//
// A missing key is a 400 problem (or passes through when the key is
// optional), a malformed one (repeated header, bad syntax) a 400 problem.
// A key-reuse rejection has the rule's mismatch status (422 by default, as
// the IETF draft says; 409 as in brandur's design; 400 as at Stripe) and,
// when the rule stores intent, lists the differing fields. A spec-changed
// rejection is a 409: the server cannot tell whether the two requests
// differ. Problems are RFC 9457 documents whose type URIs, under
// [ProblemBase], are stable.
//
// After completion, a status the rule caches (2xx by default, so that a 500
// stays retryable) is stored with its headers and body and replayed until
// the TTL; any other status releases the reservation so that a retry
// executes again. Some headers are never stored, since they are not the
// replayed request's: Set-Cookie, Set-Cookie2, Authorization and
// Proxy-Authorization, the hop-by-hop headers (Connection, Keep-Alive,
// Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade, and those
// the response's Connection header names), Content-Length (the replay
// computes it again), and those the rule's exclude_headers lists (a
// request ID, a server timing).
//
// # Storage keys
//
// A storage key always holds the tenant ([Request].Tenant must not be
// empty), the key's content, and, when the scope says so, the endpoint
// ("POST /v1/payments/{}", or under the defaults "POST /v1/orders"; "" when
// not scoped). It is "idem1" followed by each component as ":" length ":"
// bytes, so no two tuples, of any length, share a key: tenant "a:b" with
// key "c" is not tenant "a" with key "b:c". The new identity of
// execute-as-new adds the fingerprint and the spec digest, so whatever is
// stored there is, by construction, of an equal request. Keys in the RFC
// 8941 string form ("\"abc\"") are the same key as their content (abc);
// a UUID key is stored in lower case (RFC 9562 §4: the two cases are one
// UUID). [PrimaryKey] returns the primary key that a new identity's key
// begins with, so that a store can keep both keys of a request together;
// a store that expires records by its own clock judges whether a record
// still holds its key with [Record.Binds], the engine's own rule.
//
// # Deploying a changed policy
//
// Records outlive deploys: a request made under one policy is retried,
// within its TTL, under the next. What a retry finds depends on the
// settings that make its storage key and on those its record is compared
// by, and the spec digest covers neither:
//
//   - scope.route, key.header, key.syntax (and, under scope.route, the
//     endpoint): the storage key changes. The retry finds no record and
//     executes again; a payment is made twice. key.header counts among
//     them since the client sends the key where the old rule read it.
//   - The endpoint otherwise (a rule added where the defaults governed,
//     a pattern generalized, a rule removed), key.max_length lowered, or
//     "new" no longer a resolution: the retry finds its record but is
//     rejected (other-route, malformed key, or on_mismatch).
//   - The fingerprint spec: the retry finds its record but cannot be
//     compared with it, and on_spec_change answers ("new" executes it
//     again).
//   - TTL, lease, cache, wait, replay_header, exclude_headers,
//     store_intent, mismatch_status: they apply to new records only.
//
// [Compare] tells, route by route, which of these a deploy does;
// `idemprint lint --previous OLD.json NEW.json` prints it and fails when a
// route orphans records. A storage-key setting changes safely only where
// no record of the old rule is retried any more: on a new route that
// clients move to, or once the old TTL has passed since the route last
// stored a record.
//
// # Specifications
//
//   - IETF draft-ietf-httpapi-idempotency-key-header: the Idempotency-Key
//     header, 400 for a missing key, 409 for a request in progress, 422 for
//     a reused key.
//   - RFC 8941, Structured Field Values for HTTP: §3.3.3 (sf-string), the
//     quoted form of a key.
//   - RFC 9457, Problem Details for HTTP APIs: the rejection bodies.
//   - RFC 9110, HTTP Semantics: §5.6.2 (tokens: methods and header names),
//     §7.6.1 (hop-by-hop fields), §8 (representation metadata), §10.2.3
//     (Retry-After), §15 (status classes).
//   - RFC 9562, Universally Unique IDentifiers: §4, the text form of a UUID
//     key and its case.
//   - RFC 6901, JSON Pointer: the location of every [Finding].
//
// # Security considerations
//
// A replay hands one request's response to another, so the engine replays
// only when the storage key matches (tenant included) and the record was
// made by a request with an equal fingerprint under the same spec, or when
// the rule says "replay" on a mismatch of the same endpoint; a record of
// another endpoint is never replayed. Storage keys are injective, so two
// tenants or two keys never share a record by a collision of their
// encodings; a record whose tenant, key or (scoped) endpoint contradicts
// its storage key is an error, not an answer. A lease that expires while
// its handler still runs lets a second execution start: set it above the
// handler's deadline. The intent projection may hold personal data (an
// IBAN, a name) and is kept only when a rule opts in and rejects
// mismatches.
//
// A request that executed as new is stored under its new identity, and its
// retries find it there first. The two keys are written separately,
// though, so one narrow window remains: if the primary record is released
// or expires between the moment a request reads both records and the
// moment it reserves its new identity, a concurrent retry of the very same
// request may reserve the primary key, and both run. A store that can make
// a write conditional on a second key (a transaction) closes it by writing
// a reservation only while the record under the request's other key is
// still the one it read.
package policy
