// Package storetest is the conformance suite of [store.Store]: every
// backend of this module passes it, and so should yours. One call runs it,
// in the manner of testing/fstest.TestFS:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Subject {
//			return storetest.Subject{Store: newIsolatedStore(t)}
//		})
//	}
//
// The suite checks what idempotency depends on: conditional writes and
// fencing (a stale generation never wins), one winner among many
// goroutines racing for a key, racing takeovers and reclaims of a lapsed
// record, the two storage keys of an execute-as-new request never both
// executing, expiry by the store's clock, callers with skewed clocks,
// tenant isolation, binary keys and bodies, a 1 MiB body, multi-valued
// headers, context cancellation and deadlines, and a corrupt record. Its
// subtests run in parallel, each on a store of its own.
//
// A store with a settable clock is tested without sleeping; any other is
// tested in real time with leases of a fraction of a second, and every
// expectation is computed from the time the store reports, so a slow
// machine changes which path a check takes, never whether it passes.
package storetest

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// Subject is one store under test, empty and isolated from every other
// Subject (its own key prefix, schema or instance).
type Subject struct {
	// Store is the store under test.
	Store store.Store
	// Advance, when set, moves the store's clock forward by d; the suite
	// then never sleeps. When nil, the suite waits in real time.
	Advance func(d time.Duration)
	// Corrupt, when set, damages the stored form of the record under
	// storageKey so that it no longer decodes. When nil (a store that
	// keeps Go values has nothing to corrupt), that subtest is skipped.
	Corrupt func(storageKey string) error
}

// Run runs the conformance suite, calling newSubject once for each
// subtest, from the subtest's goroutine. Subtests run in parallel.
func Run(t *testing.T, newSubject func(t *testing.T) Subject) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newFixture(t, newSubject(t)))
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, f *fixture)
}

// cases lists the subtests, by concept; each file of this package adds
// its own.
var cases []testCase

func register(name string, run func(t *testing.T, f *fixture)) bool {
	cases = append(cases, testCase{name, run})
	return true
}

// Durations of the suite's policy. The lease is short so that real-time
// stores are tested quickly; the TTL is long enough that a lapsed lease
// is observed well before the record expires.
const (
	lease = 400 * time.Millisecond
	ttl   = 3 * time.Second
	// margin is added to every wait past a deadline: the store's clock
	// must have passed it.
	margin = 100 * time.Millisecond
)

// suitePolicy has a rule that rejects mismatches, one that executes them
// as new operations, and one that stores intent.
var suitePolicy = `{
  "defaults": {"ttl": "` + ttl.String() + `", "lease": "` + lease.String() + `", "methods": []},
  "rules": [
    {"route": "POST /pay", "fingerprint": {"intent": ["amount"]}},
    {"route": "POST /new", "fingerprint": {"intent": ["amount"]}, "on_mismatch": "new"},
    {"route": "POST /intent", "fingerprint": {"intent": ["amount", "note"]}, "store_intent": true}
  ]
}`

// fixture is a subtest's store with the suite's policy.
type fixture struct {
	t       *testing.T
	s       store.Store
	advance func(time.Duration)
	corrupt func(string) error
	pay     *policy.Rule // on_mismatch reject
	newRule *policy.Rule // on_mismatch new
	intent  *policy.Rule // store_intent
}

func newFixture(t *testing.T, sub Subject) *fixture {
	t.Helper()
	if sub.Store == nil {
		t.Fatal("storetest: the Subject has no Store")
	}
	pol, err := policy.Parse([]byte(suitePolicy))
	if err != nil {
		t.Fatalf("storetest: the suite's policy: %v", err)
	}
	f := &fixture{t: t, s: sub.Store, advance: sub.Advance, corrupt: sub.Corrupt}
	f.pay, _ = pol.Match("POST", "/pay")
	f.newRule, _ = pol.Match("POST", "/new")
	f.intent, _ = pol.Match("POST", "/intent")
	return f
}

// pass lets d go by on the store's clock.
func (f *fixture) pass(d time.Duration) {
	if f.advance != nil {
		f.advance(d)
		return
	}
	time.Sleep(d)
}

// request returns a request under rule with the given tenant, key and
// amount.
func (f *fixture) request(rule *policy.Rule, tenant, key string, amount int) policy.Request {
	f.t.Helper()
	path := rule.Route()[len("POST "):]
	req, err := rule.NewRequest(tenant, fingerprint.Request{
		Method: "POST",
		Path:   path,
		Header: http.Header{"Idempotency-Key": {key}},
		Body:   []byte(`{"amount":` + strconv.Itoa(amount) + `,"note":"n` + strconv.Itoa(amount) + `"}`),
	})
	if err != nil {
		f.t.Fatalf("NewRequest: %v", err)
	}
	return req
}

// keys returns the storage keys of req.
func (f *fixture) keys(rule *policy.Rule, req policy.Request) (pk, nk string) {
	f.t.Helper()
	pk, nk, err := rule.StorageKeys(req)
	if err != nil {
		f.t.Fatalf("StorageKeys: %v", err)
	}
	return pk, nk
}

// reservation returns the reservation of req's first execution.
func (f *fixture) reservation(rule *policy.Rule, req policy.Request) store.Reservation {
	f.t.Helper()
	d, err := rule.Decide(req, nil, nil, time.Time{})
	if err != nil || d.Action != policy.Execute {
		f.t.Fatalf("Decide without records = %v, %v; want execute", d.Action, err)
	}
	_, nk := f.keys(rule, req)
	return store.Reservation{Record: *d.Reserve, Lease: rule.Lease(), TTL: rule.TTL(), NewIdentity: nk}
}

// reserve reserves req's key and fails unless the reservation was
// written.
func (f *fixture) reserve(rule *policy.Rule, req policy.Request) store.Outcome {
	f.t.Helper()
	out, err := f.s.Reserve(context.Background(), f.reservation(rule, req))
	if err != nil {
		f.t.Fatalf("Reserve: %v", err)
	}
	if !out.Reserved {
		f.t.Fatalf("Reserve of a free key did not reserve it; found primary %v, new identity %v", describe(out.Primary), describe(out.NewIdentity))
	}
	return out
}

// write writes rec and fails on error.
func (f *fixture) write(rec policy.Record, g store.Guard) {
	f.t.Helper()
	if err := f.s.Write(context.Background(), rec, g); err != nil {
		f.t.Fatalf("Write(generation %d, %v): %v", rec.Generation, rec.State, err)
	}
}

// read reads the record under key and fails on error.
func (f *fixture) read(key string) *policy.Record {
	f.t.Helper()
	rec, err := f.s.Read(context.Background(), key)
	if err != nil {
		f.t.Fatalf("Read: %v", err)
	}
	return rec
}

// complete completes the reservation res with a 201 and the given body at
// the store's time now, writes it and returns it.
func (f *fixture) complete(rule *policy.Rule, res policy.Record, now time.Time, body string) policy.Record {
	f.t.Helper()
	done, err := rule.Complete(&res, policy.Response{Status: 201, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}, now)
	if err != nil {
		f.t.Fatalf("Complete: %v", err)
	}
	f.write(done, store.Guard{})
	return done
}

// fingerprintRequestWithoutKey is a request of the "POST /pay" rule that
// has no key.
func fingerprintRequestWithoutKey() fingerprint.Request {
	return fingerprint.Request{Method: "POST", Path: "/pay", Body: []byte(`{"amount":1}`)}
}

func describe(rec *policy.Record) string {
	if rec == nil {
		return "none"
	}
	return rec.State.String() + " generation " + strconv.FormatUint(rec.Generation, 10)
}
