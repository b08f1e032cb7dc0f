// Package idemclient is the client side of idempotency keys: an
// [http.RoundTripper] that wraps any other and uses a request's key as
// its licence to retry. A payment whose response was lost is sent again
// with the same key and the same bytes, and the server answers it from
// its record instead of charging twice.
//
//	tr, _ := idemclient.New(http.DefaultTransport, idemclient.Options{})
//	client := &http.Client{Transport: tr}
//	resp, err := client.Post(url, "application/json", body) // retried safely
//	if errors.Is(err, idemclient.ErrKeyReused) { ... }       // never retried
//
// # One operation, one key
//
// A call of RoundTrip is one logical operation. A request without the key
// header ([Options].Header, Idempotency-Key by default) on a method that
// is not idempotent gets a new key from crypto/rand, in the text form of
// a random (version 4) UUID unless [Options].NewKey mints another, and
// every attempt carries that key and exactly the same body bytes: the
// body is taken from the request's GetBody, or read once into memory (up
// to [Options].MaxBody; a larger body is refused with [ErrBodyTooLarge]
// before anything is sent). A key the request already carries is kept.
// The key is in the header of the request the response answers
// (resp.Request), in an [*Error], and in the [Operation] the request's
// context holds, if any: an operation that must survive the process (a
// retry tomorrow, after a crash) keeps its key and start time there.
//
// # When it retries
//
// A request that carries a key, or whose method is idempotent (RFC 9110,
// section 9.2.2), is retried after a transport error, whether or not the
// server may have seen it; after a 409 that says a request with the key
// is still in flight; after a 429, 502, 503 or 504. It is never retried
// after an answer that says the key was used with another request: that
// is returned as an [*Error] wrapping [ErrKeyReused], with the server's
// RFC 9457 problem. No other answer is retried. A request without a key
// on a method that is not idempotent is retried only when its connection
// could not be opened, so it was certainly never sent.
//
// net/http's own Transport, beneath, also counts a request with an
// Idempotency-Key header as replayable, and may resend it once on a
// fresh connection when a reused one broke before any answer: the same
// key and bytes, so as safe, but not an attempt this package counts.
//
// Answers are read in three dialects: idemprint's problem types (under
// https://idemprint.dev/problems/), the statuses of the IETF httpapi
// draft "The Idempotency-Key HTTP Header Field" (409 for a request in
// flight, 422 for a key reused, when the answer names idempotency), and
// Stripe's error objects (code idempotency_key_in_use, type
// idempotency_error). [Options].Classify teaches it another API.
//
// # How long it waits
//
// Before attempt n+1 it waits a random time between 0 and
// BaseDelay·2^(n-1), capped at MaxDelay ("full jitter"), or the answer's
// Retry-After (seconds or an HTTP date), capped at MaxDelay. If the
// attempt could not start before the context's deadline it does not wait
// for nothing: it stops at once with the last answer or error. A wait
// ends as soon as the context is cancelled. A key is not retried once it
// is older than [Options].Retention, when the server may have forgotten
// it and would execute the request again: the operation stops with
// [ErrKeyExpired].
//
// # Specifications
//
//   - RFC 9110, section 9.2.2 (idempotent methods) and 10.2.3
//     (Retry-After).
//   - RFC 9457 (problem details).
//   - draft-ietf-httpapi-idempotency-key-header (the Idempotency-Key
//     header and its 400, 409 and 422 answers).
//
// # Security Considerations
//
// A key is a capability: whoever holds it can read the operation's stored
// answer from a server that does not scope keys by account. Keys are
// minted from crypto/rand and logged only at debug level.
package idemclient
