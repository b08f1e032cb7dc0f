package idemhttp

import "net/http"

// These functions let a handler tell the middleware what its response
// means for the request's reservation, when the status alone cannot: a
// proxy knows whether the upstream ever received the request. Each takes
// the ResponseWriter the middleware gave the handler (or one wrapping it
// with an Unwrap method) and reports false when there is none, as for a
// request that passed through or no rule governs.

// ReleaseReservation says the request was not executed (the upstream
// refused the connection, so it never saw it): whatever the response's
// status, the reservation is released, and a retry executes.
func ReleaseReservation(w http.ResponseWriter) bool {
	c := findCapture(w)
	if c != nil {
		c.disposition = dispositionRelease
	}
	return c != nil
}

// HoldReservation says the request's outcome is unknown (the upstream
// received it, then timed out or reset the connection: it may have
// charged the card): the reservation is neither completed nor released,
// and holds until its lease lapses, so that a quick retry gets 409
// instead of running beside a request that may still be executing. The
// rule's lease is the knob: after it, a retry takes the key over. The
// reservation holds even when the handler then panics, as
// net/http/httputil.ReverseProxy does with [http.ErrAbortHandler] when the
// upstream breaks off in the middle of its response.
func HoldReservation(w http.ResponseWriter) bool {
	c := findCapture(w)
	if c != nil {
		c.disposition = dispositionHold
	}
	return c != nil
}

// disposition is what the handler said about its reservation.
type disposition uint8

const (
	dispositionComplete disposition = iota // the default: complete by the response
	dispositionRelease
	dispositionHold
)

// findCapture finds the middleware's writer in w's Unwrap chain.
func findCapture(w http.ResponseWriter) *capture {
	for range 32 { // a bound against cyclic Unwrap chains
		switch v := w.(type) {
		case *capture:
			return v
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return nil
		}
	}
	return nil
}
