package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

var (
	_ = register("Race/Reserve", testRaceReserve)
	_ = register("Race/Takeover", testRaceTakeover)
	_ = register("Race/Reclaim", testRaceReclaim)
	_ = register("Race/TwoKeys", testRaceTwoKeys)
)

// racers is how many goroutines race for one key.
const racers = 64

// race runs fn in n goroutines released at once and returns their
// results.
func race[T any](n int, fn func(i int) T) []T {
	out := make([]T, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			out[i] = fn(i)
		}()
	}
	start.Done()
	done.Wait()
	return out
}

type acquired struct {
	c   store.Claim
	err error
}

// executions counts the claims that execute and fails on errors other
// than contention. concurrent counts the executions that began, at the
// store's time, before the lease of an earlier one ended. A slow machine
// may delay a racer past the lease of the winner, whom nobody completes
// here; it then rightly takes the lapsed reservation over: a later
// execution, not a second one at once.
func executions(t *testing.T, results []acquired) (n, concurrent int, gens map[uint64]int) {
	t.Helper()
	gens = map[uint64]int{}
	var runs []store.Claim
	for _, r := range results {
		if r.err != nil {
			if !errors.Is(r.err, store.ErrContention) {
				t.Errorf("Acquire: %v", r.err)
			}
			continue
		}
		if a := r.c.Decision.Action; a == policy.Execute || a == policy.ExecuteAsNew {
			runs = append(runs, r.c)
			gens[r.c.Record.Generation]++
		}
	}
	slices.SortFunc(runs, func(a, b store.Claim) int { return a.Now.Compare(b.Now) })
	var leaseEnd time.Time // the latest end of a lease among earlier executions
	for i, c := range runs {
		if i > 0 && c.Now.Before(leaseEnd) {
			concurrent++
		}
		if c.Record.LeaseExpiry.After(leaseEnd) {
			leaseEnd = c.Record.LeaseExpiry
		}
	}
	return len(runs), concurrent, gens
}

// Many goroutines reserve one free key: exactly one wins, and every other
// sees the winner's reservation.
func testRaceReserve(t *testing.T, f *fixture) {
	type reserved struct {
		out store.Outcome
		err error
	}
	req := f.request(f.pay, "acme", "k1", 10)
	res := f.reservation(f.pay, req)
	outs := race(racers, func(int) reserved {
		out, err := f.s.Reserve(context.Background(), res)
		return reserved{out, err}
	})
	var won []policy.Record
	for _, o := range outs {
		if o.err != nil {
			t.Fatalf("Reserve: %v", o.err)
		}
		if o.out.Reserved {
			won = append(won, o.out.Record)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d of %d racing reservations won, want exactly 1", len(won), racers)
	}
	for _, o := range outs {
		if !o.out.Reserved {
			if d := diff(&won[0], o.out.Primary); d != "" {
				t.Errorf("a loser saw another record than the winner's:%s", d)
			}
		}
	}
}

// Many retries find a reservation whose lease lapsed while its TTL runs:
// exactly one takes it over.
func testRaceTakeover(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	f.reserve(f.pay, req)
	f.pass(lease + margin)
	results := race(racers, func(int) acquired {
		c, err := store.Acquire(context.Background(), f.s, f.pay, req)
		return acquired{c, err}
	})
	n, concurrent, gens := executions(t, results)
	if n == 0 || concurrent > 0 {
		t.Fatalf("%d racing retries took over the lapsed reservation, %d while another's lease ran; want one at a time (generations %v)", n, concurrent, gens)
	}
	for _, r := range results {
		if r.err == nil && r.c.Decision.Action == policy.Reject && r.c.Decision.Response.Status != 409 {
			t.Errorf("a losing retry was answered %d, want 409 (in flight)", r.c.Decision.Response.Status)
		}
	}
}

// Many requests find a record past its TTL: exactly one reclaims the key.
func testRaceReclaim(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	f.complete(f.pay, first.Record, first.Now, `{"a":1}`)
	f.pass(ttl + margin)
	other := f.request(f.pay, "acme", "k1", 99) // another body: a mismatch only while the record binds
	results := race(racers, func(i int) acquired {
		r := req
		if i%2 == 1 {
			r = other
		}
		c, err := store.Acquire(context.Background(), f.s, f.pay, r)
		return acquired{c, err}
	})
	if n, concurrent, gens := executions(t, results); n == 0 || concurrent > 0 {
		t.Fatalf("%d racing requests reclaimed the expired key, %d while another's lease ran; want one at a time (generations %v)", n, concurrent, gens)
	}
}

// A request executing as new and its retries race while the primary
// record that made it "new" is released: the request runs once, under
// one of its two keys, never under both.
func testRaceTwoKeys(t *testing.T, f *fixture) {
	a := f.request(f.newRule, "acme", "k1", 10)
	b := f.request(f.newRule, "acme", "k1", 20)
	first := f.reserve(f.newRule, a)
	results := race(racers+1, func(i int) acquired {
		if i == racers { // a's holder gives up its reservation mid-race
			rel, err := f.newRule.Release(&first.Record)
			if err == nil {
				err = f.s.Write(context.Background(), rel, store.Guard{})
			}
			return acquired{err: err}
		}
		c, err := store.Acquire(context.Background(), f.s, f.newRule, b)
		return acquired{c, err}
	})
	if err := results[racers].err; err != nil {
		t.Fatalf("releasing a's reservation: %v", err)
	}
	n, concurrent, gens := executions(t, results[:racers])
	if n == 0 || concurrent > 0 {
		t.Fatalf("request b executed %d times across its two storage keys, %d while another's lease ran; want once at a time (generations %v)", n, concurrent, gens)
	}
}
