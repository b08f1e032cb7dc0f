package sidecar

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/idemprint/idemprint/policy"
)

// Problem types of the sidecar's own answers, under [policy.ProblemBase],
// beside the middleware's and the engine's.
const (
	// TypeUpstreamUnreachable: the request could not be sent to the
	// upstream (502). It did not execute; its reservation was released,
	// so a retry with the same key runs.
	TypeUpstreamUnreachable = policy.ProblemBase + "upstream-unreachable"
	// TypeUpstreamOutcomeUnknown: the request was sent to the upstream,
	// which gave no answer in time or broke the connection (504, with
	// Retry-After: the rule's lease). It may have executed; its
	// reservation holds until its lease lapses.
	TypeUpstreamOutcomeUnknown = policy.ProblemBase + "upstream-outcome-unknown"
)

// problem is an RFC 9457 problem.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// writeProblem answers with p, and Retry-After when retryAfter, in
// seconds, is positive.
func writeProblem(w http.ResponseWriter, p *problem, retryAfter int) {
	b, _ := json.Marshal(p) // strings and a number: cannot fail
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(p.Status)
	w.Write(b)
}
