package sidecar

import "github.com/idemprint/idemprint/policy"

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
