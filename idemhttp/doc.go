// Package idemhttp is net/http middleware that enforces an idempotency
// policy end to end: it reads the key, scopes it per tenant, fingerprints
// the body, replays a stored answer to a true retry, rejects a reuse of
// the key with another request, reserves the key atomically in the store
// so that two racing retries cannot both execute (on one instance or
// fifty), runs the handler while capturing its response, and stores what
// the rule caches.
//
//	pol, _ := policy.Parse(policyFile)
//	st, _ := store.NewMemory(store.MemoryOptions{}) // or redisstore, pgstore
//	mw, _ := idemhttp.New(pol, st, idemhttp.Options{Tenant: tenantOf})
//	http.ListenAndServe(":8080", mw.Wrap(mux))
//
// # The flow
//
// For a request a rule governs ([policy.Policy.Match] on the decoded
// path): the tenant ([Options].Tenant, or the one SingleTenant); the body,
// read once up to MaxRequestBody (413 beyond) and handed to the handler
// byte for byte; the fingerprint, built as
// [fingerprint.Fingerprinter.HTTPRequest] builds it (a body that is not
// strict JSON is a 400 problem naming line, column and JSON Pointer, and
// the handler does not run); then [store.Acquire], which reserves the key
// or gives the records that hold it to the engine. The decision is acted
// on: a replay writes the stored status, headers (value by value) and body
// with the rule's replay header; a rejection writes the engine's RFC 9457
// problem, with Retry-After for a request in flight; an execution runs
// the handler while teeing its response to the client and to a capture
// buffer, then completes the record: the response for a status the rule
// caches, a release for any other (a 500 stays retryable). A first request
// costs two round trips to the store (reserve, complete), a replay or a
// rejection one.
//
// Headers the engine never stores ([policy.Rule.Complete]: Set-Cookie,
// Authorization, hop-by-hop headers, those the rule excludes) are sent to
// the first client and never replayed. Trailers reach the first client
// and are not stored: a replay has none.
//
// # Failure paths
//
//   - A store fault fails closed: a 503 problem with Retry-After, and the
//     handler does not run, unless [Options].FailOpen says otherwise. A
//     record that cannot be used (corrupt, contradicting its key) is a 500
//     problem, failing open or not.
//   - A panicking handler: its reservation is released, so a retry
//     executes, and the panic goes on to the server's recovery; unless it
//     called [HoldReservation] first (a proxy whose upstream broke off
//     mid-response), when the reservation holds.
//   - A client that disconnects while the handler runs: the handler's
//     writes are still captured and reported to it as done, so it finishes
//     its answer, and the record is completed under a context the
//     request's cancellation does not cancel, with its own timeout
//     ([Options].CompletionTimeout). The retry replays.
//   - A handler that runs longer than the lease: the lease is renewed every
//     third of it while the handler runs, so nobody takes over a live
//     request. If the reservation was taken over anyway (the store was
//     unreachable for a whole lease), the completion is not written, and
//     this is logged and reported to the hook ([Overtaken]).
//   - A response larger than MaxResponseBody: it is sent in full, and the
//     request is completed as executed with its response not kept: a retry
//     gets a 409 problem saying so and never executes again; a truncated
//     body is never replayed.
//   - A handler that hijacks the connection (http.Hijacker or
//     http.ResponseController): the middleware sees no response, so the
//     request is completed as executed with its response not kept, like an
//     oversized one.
//
// # Waiting
//
// A rule's wait setting ([policy.Rule.Wait], 0 by default) lets a request
// that meets a running reservation of an equal request wait up to that
// long for its result, polling the store with backoff and jitter, before
// it is answered 409. A request with another body never waits: its
// rejection does not depend on the first request's outcome.
//
// # Observability
//
// The middleware logs warnings and errors through [Options].Logger, and
// every decision at debug level; [Options].OnDecision receives an [Event]
// for every governed request (rule, action, reason, outcome, status,
// store round trips and latency), and [Middleware.Stats] the requests
// executing and waiting. Keys are never logged: [Event.KeyHash] names
// them.
package idemhttp
