package storetest

import (
	"testing"
	"time"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// executions tells a second execution while a lease runs, which no store
// may allow, from a takeover after the lease lapsed at the store's time,
// which a slow machine may cause.
func TestExecutions(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := func(now time.Duration) acquired {
		return acquired{c: store.Claim{
			Decision: policy.Decision{Action: policy.Execute},
			Record:   policy.Record{Generation: uint64(now), LeaseExpiry: t0.Add(now + lease)},
			Now:      t0.Add(now),
		}}
	}
	rejected := acquired{c: store.Claim{Decision: policy.Decision{Action: policy.Reject}, Now: t0}}
	for _, tc := range []struct {
		reason        string
		results       []acquired
		n, concurrent int
	}{
		{"one winner", []acquired{rejected, run(0), rejected}, 1, 0},
		{"none", []acquired{rejected}, 0, 0},
		{"two at once", []acquired{run(0), rejected, run(lease / 2)}, 2, 1},
		{"two at the same time", []acquired{run(0), run(0)}, 2, 1},
		{"a takeover after the lease", []acquired{run(lease), run(0)}, 2, 0},
		{"one during the lease of the first, one during its own", []acquired{run(lease + 1), run(0), run(lease - 1)}, 3, 2},
		{"three in turn", []acquired{run(2 * lease), run(lease), run(0)}, 3, 0},
	} {
		n, concurrent, _ := executions(t, tc.results)
		if n != tc.n || concurrent != tc.concurrent {
			t.Errorf("executions(%s) = %d, %d concurrent; want %d, %d", tc.reason, n, concurrent, tc.n, tc.concurrent)
		}
	}
}
