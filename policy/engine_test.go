package policy_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// mustParse parses a policy or fails the test.
func mustParse(t testing.TB, src string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse(%s): %v", src, err)
	}
	return p
}

// mustRule returns the rule matching POST /v1/payments.
func mustRule(t testing.TB, src string) *policy.Rule {
	t.Helper()
	r, ok := mustParse(t, src).Match("POST", "/v1/payments")
	if !ok {
		t.Fatalf("no rule for POST /v1/payments in %s", src)
	}
	return r
}

// sum fingerprints body under r, or fails the test.
func sum(t testing.TB, r *policy.Rule, body string) fingerprint.Fingerprint {
	t.Helper()
	fp, err := r.Fingerprinter().Sum(fingerprint.Request{Method: "POST", Path: "/v1/payments", Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// fpEqual compares fingerprints, whose fields are unexported, with ==.
var fpEqual = cmp.Comparer(func(a, b fingerprint.Fingerprint) bool { return a == b })

// storageKey is the documented encoding, written independently of the
// package: "idem1", then ":" length ":" bytes per component.
func storageKey(components ...string) string {
	s := "idem1"
	for _, c := range components {
		s += ":" + strconv.Itoa(len(c)) + ":" + c
	}
	return s
}

// outcome is what the decision table checks of a Decision.
type outcome struct {
	Action      policy.Action
	Reason      policy.Reason
	Where       string // "primary", "new" or "" (no storage key)
	Generation  uint64 // of Reserve; 0 without one
	Status      int
	ProblemType string
	RetryAfter  string
	Replayed    string // the Idempotent-Replayed header of a replay
	Body        string // of a replay
}

type keyCase int

const (
	keyPresent keyCase = iota
	keyMissing
	keyMalformed
)

func (k keyCase) String() string { return [...]string{"present", "missing", "malformed"}[k] }

type recCase int

const (
	recAbsent recCase = iota
	recReleased
	recInFlight
	recCompleted
)

func (r recCase) String() string {
	return [...]string{"absent", "released", "in-flight", "completed"}[r]
}

type tableCase struct {
	key                    keyCase
	required               bool
	rec                    recCase
	leaseValid, ttlValid   bool
	fpEqual, specSame      bool
	onMismatch, onSpecChng policy.Resolution
}

func (c tableCase) name() string {
	b := func(ok bool, yes, no string) string {
		if ok {
			return yes
		}
		return no
	}
	return fmt.Sprintf("key=%v,%s/rec=%v/lease=%s/ttl=%s/fp=%s/spec=%s/on_mismatch=%v/on_spec_change=%v",
		c.key, b(c.required, "required", "optional"), c.rec, b(c.leaseValid, "valid", "expired"),
		b(c.ttlValid, "valid", "expired"), b(c.fpEqual, "equal", "different"), b(c.specSame, "same", "changed"),
		c.onMismatch, c.onSpecChng)
}

// verdicts transcribes the decision table of the package documentation:
// row (the record), column (how the request relates to it) and the
// resolution the column's setting declares give a verdict.
var verdicts = map[string]string{
	"running/equal":           "409",
	"running/mismatch/reject": "reject",
	"running/mismatch/replay": "409",
	"running/mismatch/new":    "new",
	"running/spec/reject":     "409",
	"running/spec/replay":     "409",
	"running/spec/new":        "409",

	"stale/equal":           "takeover",
	"stale/mismatch/reject": "reject",
	"stale/mismatch/replay": "takeover",
	"stale/mismatch/new":    "new",
	"stale/spec/reject":     "spec",
	"stale/spec/replay":     "takeover",
	"stale/spec/new":        "new",

	"completed/equal":           "replay",
	"completed/mismatch/reject": "reject",
	"completed/mismatch/replay": "replay",
	"completed/mismatch/new":    "new",
	"completed/spec/reject":     "spec",
	"completed/spec/replay":     "replay",
	"completed/spec/new":        "new",
}

const (
	recGeneration = 7
	storedBody    = `{"id":"pay_1"}`
	mismatchCode  = 409 // the table's policies declare 409, not the default
)

// oracle says what Decide must return for c, from the key rules and the
// verdicts table alone.
func oracle(c tableCase) outcome {
	switch c.key {
	case keyMissing:
		if !c.required {
			return outcome{Action: policy.PassThrough, Reason: policy.ReasonMissingKey}
		}
		return outcome{Action: policy.Reject, Reason: policy.ReasonMissingKey, Status: 400, ProblemType: policy.TypeMissingKey}
	case keyMalformed:
		return outcome{Action: policy.Reject, Reason: policy.ReasonMalformedKey, Status: 400, ProblemType: policy.TypeMalformedKey}
	}

	// Which row: does the record still bind the key, and how?
	row := "free"
	if c.rec == recInFlight && c.leaseValid {
		row = "running"
	} else if c.rec == recInFlight && c.ttlValid {
		row = "stale"
	} else if c.rec == recCompleted && c.ttlValid {
		row = "completed"
	}
	if row == "free" {
		o := outcome{Action: policy.Execute, Reason: policy.ReasonFirst, Where: "primary", Generation: 1}
		if c.rec != recAbsent {
			o.Generation = recGeneration + 1
		}
		return o
	}

	col, reason, resolution := "equal", policy.ReasonRetry, ""
	if !c.specSame {
		col, reason, resolution = "spec", policy.ReasonSpecChanged, "/"+c.onSpecChng.String()
	} else if !c.fpEqual {
		col, reason, resolution = "mismatch", policy.ReasonMismatch, "/"+c.onMismatch.String()
	}
	switch verdicts[row+"/"+col+resolution] {
	case "409":
		return outcome{Action: policy.Reject, Reason: reason, Where: "primary", Status: 409, ProblemType: policy.TypeInFlight, RetryAfter: "10"}
	case "reject":
		return outcome{Action: policy.Reject, Reason: reason, Where: "primary", Status: mismatchCode, ProblemType: policy.TypeKeyReuse}
	case "spec":
		return outcome{Action: policy.Reject, Reason: reason, Where: "primary", Status: 409, ProblemType: policy.TypeSpecChanged}
	case "new":
		return outcome{Action: policy.ExecuteAsNew, Reason: reason, Where: "new", Generation: 1}
	case "takeover":
		return outcome{Action: policy.Execute, Reason: reason, Where: "primary", Generation: recGeneration + 1}
	case "replay":
		return outcome{Action: policy.Replay, Reason: reason, Where: "primary", Status: 201, Replayed: "true", Body: storedBody}
	}
	panic("no verdict for " + row + "/" + col + resolution)
}

// TestDecideTable runs Decide on every combination of key state, key
// requirement, record state, lease, TTL, fingerprint, spec and both
// resolutions, and compares it with the oracle.
func TestDecideTable(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	const tenant, key = "acme", "pay-7f3a"
	resolutions := []policy.Resolution{policy.ResolveReject, policy.ResolveReplay, policy.ResolveNew}
	otherSpec, err := fingerprint.Compile(fingerprint.Spec{Ignore: []string{"note"}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, required := range []bool{true, false} {
		for _, onMismatch := range resolutions {
			for _, onSpec := range resolutions {
				status := ""
				if onMismatch == policy.ResolveReject {
					status = `"mismatch_status": 409,`
				}
				rule := mustRule(t, fmt.Sprintf(`{"rules": [{"route": "POST /v1/payments", "key": {"required": %v},
					"on_mismatch": %q, %s "on_spec_change": %q}]}`, required, onMismatch, status, onSpec))
				fpThis := sum(t, rule, `{"amountCents":1000}`)
				fpOther := sum(t, rule, `{"amountCents":1000000}`)
				primary := storageKey(tenant, "", key)
				for _, k := range []keyCase{keyPresent, keyMissing, keyMalformed} {
					for _, rc := range []recCase{recAbsent, recReleased, recInFlight, recCompleted} {
						for _, leaseValid := range []bool{true, false} {
							for _, ttlValid := range []bool{true, false} {
								for _, fpEqual := range []bool{true, false} {
									for _, specSame := range []bool{true, false} {
										c := tableCase{k, required, rc, leaseValid, ttlValid, fpEqual, specSame, onMismatch, onSpec}
										req := policy.Request{Tenant: tenant, Fingerprint: fpThis}
										switch k {
										case keyPresent:
											req.Key = []string{key}
										case keyMalformed:
											req.Key = []string{key, key}
										}
										var rec *policy.Record
										if rc != recAbsent {
											rec = &policy.Record{
												StorageKey:  primary,
												Generation:  recGeneration,
												Tenant:      tenant,
												Key:         key,
												Route:       rule.Route(),
												Fingerprint: fpThis,
												SpecDigest:  rule.Fingerprinter().SpecDigest(),
												LeaseExpiry: now.Add(-time.Second),
												ExpiresAt:   now.Add(-time.Second),
											}
											if !fpEqual {
												rec.Fingerprint = fpOther
											}
											if !specSame {
												rec.SpecDigest = otherSpec.SpecDigest()
											}
											if leaseValid {
												rec.LeaseExpiry = now.Add(10 * time.Second)
											}
											if ttlValid {
												rec.ExpiresAt = now.Add(time.Hour)
											}
											switch rc {
											case recInFlight:
												rec.State = policy.StateInFlight
											case recCompleted:
												rec.State = policy.StateCompleted
												rec.Status = 201
												rec.Header = policy.Header{{Name: "Location", Value: "/v1/payments/pay_1"}}
												rec.Body = []byte(storedBody)
											}
										}
										n++
										t.Run(c.name(), func(t *testing.T) {
											d, err := rule.Decide(req, rec, nil, now)
											if err != nil {
												t.Fatalf("Decide: %v", err)
											}
											newKey := storageKey(tenant, "", key, fpThis.String(), rule.Fingerprinter().SpecDigest())
											if diff := cmp.Diff(oracle(c), summarize(t, d, primary, newKey)); diff != "" {
												t.Errorf("Decide mismatch (-want +got):\n%s", diff)
											}
											checkDecision(t, d, req, rule, now)
										})
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if want := 2 * 3 * 3 * 3 * 4 * 2 * 2 * 2 * 2; n != want {
		t.Errorf("ran %d cases, want %d", n, want)
	}
}

// summarize reduces d to what the oracle predicts.
func summarize(t *testing.T, d policy.Decision, primary, newKey string) outcome {
	t.Helper()
	o := outcome{Action: d.Action, Reason: d.Reason, Status: d.Response.Status}
	switch d.StorageKey {
	case "":
	case primary:
		o.Where = "primary"
	case newKey:
		o.Where = "new"
	default:
		t.Errorf("StorageKey = %q, neither %q nor %q", d.StorageKey, primary, newKey)
	}
	if d.Reserve != nil {
		o.Generation = d.Reserve.Generation
	}
	if d.Problem != nil {
		o.ProblemType = d.Problem.Type
	}
	o.RetryAfter = d.Response.Header.Get("Retry-After")
	if d.Action == policy.Replay {
		o.Replayed = d.Response.Header.Get("Idempotent-Replayed")
		o.Body = string(d.Response.Body)
	}
	return o
}

// checkDecision checks what every decision of its action must hold.
func checkDecision(t *testing.T, d policy.Decision, req policy.Request, rule *policy.Rule, now time.Time) {
	t.Helper()
	switch d.Action {
	case policy.Execute, policy.ExecuteAsNew:
		want := &policy.Record{
			StorageKey:  d.StorageKey,
			Generation:  d.Reserve.Generation,
			State:       policy.StateInFlight,
			Tenant:      req.Tenant,
			Key:         "pay-7f3a",
			Route:       rule.Route(),
			Fingerprint: req.Fingerprint,
			SpecDigest:  rule.Fingerprinter().SpecDigest(),
			LeaseExpiry: now.Add(rule.Lease()),
			ExpiresAt:   now.Add(rule.TTL()),
		}
		if diff := cmp.Diff(want, d.Reserve, fpEqual); diff != "" {
			t.Errorf("Reserve mismatch (-want +got):\n%s", diff)
		}
		if d.Problem != nil || d.Response.Status != 0 {
			t.Errorf("%v with a response: %+v", d.Action, d.Response)
		}
	case policy.Reject:
		if d.Reserve != nil {
			t.Errorf("Reject reserves %+v", d.Reserve)
		}
		if d.Problem == nil || d.Problem.Status != d.Response.Status || string(d.Problem.AppendJSON(nil)) != string(d.Response.Body) {
			t.Errorf("Reject problem %+v does not match response %d %s", d.Problem, d.Response.Status, d.Response.Body)
		}
		if ct := d.Response.Header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("Reject Content-Type = %q", ct)
		}
	case policy.Replay:
		if d.Reserve != nil || d.Problem != nil {
			t.Errorf("Replay reserves %+v or has problem %+v", d.Reserve, d.Problem)
		}
		if loc := d.Response.Header.Get("Location"); loc != "/v1/payments/pay_1" {
			t.Errorf("Replay lost the stored Location header: %q", loc)
		}
	case policy.PassThrough:
		if d.Reserve != nil || d.Problem != nil || d.StorageKey != "" {
			t.Errorf("PassThrough with state: %+v", d)
		}
	default:
		t.Errorf("Action = %v", d.Action)
	}
}

// TestDecideRaceLoser is the AWS Powertools bug class: two requests with one
// key and different bodies both find no record; the second loses the
// conditional write and must compare itself with the winner's record, in
// flight and completed, instead of waiting for it or replaying it.
func TestDecideRaceLoser(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		onMismatch          string
		inFlight, completed outcome
	}{{
		onMismatch: "reject",
		inFlight:   outcome{Action: policy.Reject, Reason: policy.ReasonMismatch, Where: "primary", Status: 422, ProblemType: policy.TypeKeyReuse},
		completed:  outcome{Action: policy.Reject, Reason: policy.ReasonMismatch, Where: "primary", Status: 422, ProblemType: policy.TypeKeyReuse},
	}, {
		onMismatch: "replay",
		inFlight:   outcome{Action: policy.Reject, Reason: policy.ReasonMismatch, Where: "primary", Status: 409, ProblemType: policy.TypeInFlight, RetryAfter: "30"},
		completed:  outcome{Action: policy.Replay, Reason: policy.ReasonMismatch, Where: "primary", Status: 201, Replayed: "true", Body: storedBody},
	}, {
		onMismatch: "new",
		inFlight:   outcome{Action: policy.ExecuteAsNew, Reason: policy.ReasonMismatch, Where: "new", Generation: 1},
		completed:  outcome{Action: policy.ExecuteAsNew, Reason: policy.ReasonMismatch, Where: "new", Generation: 1},
	}} {
		t.Run(tc.onMismatch, func(t *testing.T) {
			rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "on_mismatch": "`+tc.onMismatch+`"}]}`)
			winner := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, rule, `{"amountCents":1000}`)}
			loser := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, rule, `{"amountCents":1000000}`)}
			dw, _ := rule.Decide(winner, nil, nil, now)
			dl, _ := rule.Decide(loser, nil, nil, now)
			if dw.Action != policy.Execute || dl.Action != policy.Execute || dw.Reserve.Generation != 1 || dl.Reserve.Generation != 1 {
				t.Fatalf("both racers must try to reserve generation 1: %+v %+v", dw, dl)
			}
			primary := storageKey("acme", "", "k")
			newKey := storageKey("acme", "", "k", loser.Fingerprint.String(), rule.Fingerprinter().SpecDigest())
			// The winner's write succeeds; the loser reads its record.
			got, err := rule.Decide(loser, dw.Reserve, nil, now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.inFlight, summarize(t, got, primary, newKey)); diff != "" {
				t.Errorf("loser against the in-flight winner (-want +got):\n%s", diff)
			}
			done, err := rule.Complete(dw.Reserve, policy.Response{Status: 201, Body: []byte(storedBody)}, now)
			if err != nil {
				t.Fatal(err)
			}
			got, err = rule.Decide(loser, &done, nil, now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.completed, summarize(t, got, primary, newKey)); diff != "" {
				t.Errorf("loser against the completed winner (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecideNewIdentity follows on_mismatch "new" to the new identity: the
// record found there is of an equal request, and is retried, waited for or
// taken over like any other; one that is not is an error.
func TestDecideNewIdentity(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "on_mismatch": "new"}]}`)
	first := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, rule, `{"amountCents":1000}`)}
	second := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, rule, `{"amountCents":1000000}`)}
	d1, _ := rule.Decide(first, nil, nil, now)
	rec1, _ := rule.Complete(d1.Reserve, policy.Response{Status: 201, Body: []byte(`{"id":"pay_1"}`)}, now)

	wantPrimary := storageKey("acme", "", "k")
	wantKey := storageKey("acme", "", "k", second.Fingerprint.String(), rule.Fingerprinter().SpecDigest())
	if pk, nk, err := rule.StorageKeys(second); pk != wantPrimary || nk != wantKey || err != nil {
		t.Fatalf("StorageKeys(second) = %q, %q, %v; want %q, %q", pk, nk, err, wantPrimary, wantKey)
	}
	d2, err := rule.Decide(second, &rec1, nil, now)
	if err != nil || d2.Action != policy.ExecuteAsNew {
		t.Fatalf("Decide(second) = %+v, %v; want execute-as-new", d2, err)
	}
	if d2.StorageKey != wantKey || d2.Reserve.StorageKey != wantKey {
		t.Fatalf("new identity = %q, want %q", d2.StorageKey, wantKey)
	}
	// The new identity is occupied by the second request's own reservation.
	got, err := rule.Decide(second, &rec1, d2.Reserve, now.Add(time.Second))
	if err != nil || got.Action != policy.Reject || got.Problem.Type != policy.TypeInFlight || got.StorageKey != wantKey {
		t.Errorf("retry of second while in flight = %+v, %v; want 409 in flight", got, err)
	}
	got, err = rule.Decide(second, &rec1, d2.Reserve, now.Add(time.Minute))
	if err != nil || got.Action != policy.ExecuteAsNew || got.Reason != policy.ReasonRetry || got.Reserve.Generation != 2 || got.StorageKey != wantKey {
		t.Errorf("retry of second after its lease = %+v, %v; want a takeover of the new identity", got, err)
	}
	rec2, _ := rule.Complete(d2.Reserve, policy.Response{Status: 201, Body: []byte(`{"id":"pay_2"}`)}, now)
	got, err = rule.Decide(second, &rec1, &rec2, now.Add(time.Minute))
	if err != nil || got.Action != policy.Replay || string(got.Response.Body) != `{"id":"pay_2"}` {
		t.Errorf("retry of second after completion = %+v, %v; want the replay of pay_2", got, err)
	}
	// The first request, retried, still replays its own answer.
	got, err = rule.Decide(first, &rec1, nil, now.Add(time.Minute))
	if err != nil || got.Action != policy.Replay || string(got.Response.Body) != `{"id":"pay_1"}` {
		t.Errorf("retry of first = %+v, %v; want the replay of pay_1", got, err)
	}
	// Records in the wrong place, or corrupt, are errors.
	bad := rec2
	bad.Fingerprint = first.Fingerprint
	reject := mustRule(t, `{"rules": [{"route": "POST /v1/payments"}]}`)
	for _, tc := range []struct {
		name             string
		rule             *policy.Rule
		primary, created *policy.Record
	}{
		{"NewIdentityHoldsAnotherRequest", rule, &rec1, &bad},
		{"NewIdentityInPrimarySlot", rule, &rec2, nil},
		{"PrimaryInNewIdentitySlot", rule, nil, &rec1},
		{"NewIdentityWithoutNewResolution", reject, nil, &rec2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.rule.Decide(second, tc.primary, tc.created, now); !errors.Is(err, policy.ErrForeignRecord) {
				t.Errorf("Decide: err = %v, want ErrForeignRecord", err)
			}
		})
	}
	if _, nk, _ := reject.StorageKeys(second); nk != "" {
		t.Errorf("StorageKeys under a rule without \"new\": new identity %q, want none", nk)
	}
}

// TestDecideNewIdentityFirst is the decision table of a request that has
// already executed as new: its record under the new identity decides while
// it binds, whatever the primary record holds, including a primary record
// released (the first request failed) or expired (the first request is a
// TTL old). Only a new-identity record that no longer binds hands the
// decision to the primary record, and its generation goes on.
func TestDecideNewIdentityFirst(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		policy string
		other  string // how the primary record's request differs
	}{
		{`{"rules": [{"route": "POST /v1/payments", "on_mismatch": "new"}]}`, "fingerprint"},
		{`{"rules": [{"route": "POST /v1/payments", "on_spec_change": "new"}]}`, "spec"},
	} {
		rule := mustRule(t, tc.policy)
		req := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, rule, `{"amountCents":1000000}`)}
		pk, nk, err := rule.StorageKeys(req)
		if err != nil || nk == "" {
			t.Fatalf("StorageKeys = %q, %q, %v", pk, nk, err)
		}
		record := func(sk string, state policy.State, fp fingerprint.Fingerprint, digest string, lease, ttl time.Duration) *policy.Record {
			rec := &policy.Record{
				StorageKey: sk, Generation: 4, State: state, Tenant: "acme", Key: "k", Route: "POST /v1/payments",
				Fingerprint: fp, SpecDigest: digest, LeaseExpiry: now.Add(lease), ExpiresAt: now.Add(ttl),
			}
			if state == policy.StateCompleted {
				rec.Status, rec.Body = 201, []byte(sk)
			}
			return rec
		}
		otherFP, otherDigest := sum(t, rule, `{"amountCents":1000}`), rule.Fingerprinter().SpecDigest()
		if tc.other == "spec" {
			otherFP, otherDigest = req.Fingerprint, "sha256:an-earlier-spec"
		}
		primaries := map[string]*policy.Record{
			"absent":            nil,
			"released":          record(pk, policy.StateNone, otherFP, otherDigest, -time.Hour, -time.Hour),
			"expired":           record(pk, policy.StateCompleted, otherFP, otherDigest, -25*time.Hour, -time.Second),
			"stale-past-ttl":    record(pk, policy.StateInFlight, otherFP, otherDigest, -25*time.Hour, -time.Second),
			"completed-other":   record(pk, policy.StateCompleted, otherFP, otherDigest, -time.Hour, time.Hour),
			"in-flight-other":   record(pk, policy.StateInFlight, otherFP, otherDigest, 10*time.Second, time.Hour),
			"stale-other":       record(pk, policy.StateInFlight, otherFP, otherDigest, -time.Second, time.Hour),
			"completed-equal":   record(pk, policy.StateCompleted, req.Fingerprint, rule.Fingerprinter().SpecDigest(), -time.Hour, time.Hour),
			"in-flight-equal":   record(pk, policy.StateInFlight, req.Fingerprint, rule.Fingerprinter().SpecDigest(), 10*time.Second, time.Hour),
			"released-then-new": record(pk, policy.StateNone, req.Fingerprint, rule.Fingerprinter().SpecDigest(), -time.Hour, -time.Hour),
		}
		own := req.Fingerprint
		digest := rule.Fingerprinter().SpecDigest()
		news := map[string]*policy.Record{
			"running":   record(nk, policy.StateInFlight, own, digest, 10*time.Second, time.Hour),
			"stale":     record(nk, policy.StateInFlight, own, digest, -time.Second, time.Hour),
			"completed": record(nk, policy.StateCompleted, own, digest, -time.Hour, time.Hour),
			"released":  record(nk, policy.StateNone, own, digest, -time.Hour, -time.Hour),
			"expired":   record(nk, policy.StateCompleted, own, digest, -25*time.Hour, -time.Second),
			"absent":    nil,
		}
		for pName, primary := range primaries {
			for nName, created := range news {
				t.Run(tc.other+"/primary="+pName+"/new="+nName, func(t *testing.T) {
					var want outcome
					switch nName {
					case "running":
						want = outcome{Action: policy.Reject, Reason: policy.ReasonRetry, Where: "new", Status: 409, ProblemType: policy.TypeInFlight, RetryAfter: "10"}
					case "stale":
						want = outcome{Action: policy.ExecuteAsNew, Reason: policy.ReasonRetry, Where: "new", Generation: 5}
					case "completed":
						want = outcome{Action: policy.Replay, Reason: policy.ReasonRetry, Where: "new", Status: 201, Replayed: "true", Body: nk}
					default: // the new identity binds nothing: the primary record decides
						gen := uint64(1)
						if created != nil {
							gen = 5
						}
						reason := policy.ReasonMismatch
						if tc.other == "spec" {
							reason = policy.ReasonSpecChanged
						}
						switch pName {
						case "absent", "released", "expired", "stale-past-ttl", "released-then-new":
							want = outcome{Action: policy.Execute, Reason: policy.ReasonFirst, Where: "primary", Generation: 1}
							if primary != nil {
								want.Generation = 5
							}
						case "completed-other", "stale-other":
							want = outcome{Action: policy.ExecuteAsNew, Reason: reason, Where: "new", Generation: gen}
						case "in-flight-other":
							want = outcome{Action: policy.ExecuteAsNew, Reason: reason, Where: "new", Generation: gen}
							if tc.other == "spec" { // a running spec change is waited for
								want = outcome{Action: policy.Reject, Reason: reason, Where: "primary", Status: 409, ProblemType: policy.TypeInFlight, RetryAfter: "10"}
							}
						case "completed-equal":
							want = outcome{Action: policy.Replay, Reason: policy.ReasonRetry, Where: "primary", Status: 201, Replayed: "true", Body: pk}
						case "in-flight-equal":
							want = outcome{Action: policy.Reject, Reason: policy.ReasonRetry, Where: "primary", Status: 409, ProblemType: policy.TypeInFlight, RetryAfter: "10"}
						}
					}
					d, err := rule.Decide(req, primary, created, now)
					if err != nil {
						t.Fatalf("Decide: %v", err)
					}
					if diff := cmp.Diff(want, summarize(t, d, pk, nk)); diff != "" {
						t.Errorf("Decide mismatch (-want +got):\n%s", diff)
					}
				})
			}
		}
	}
}

// memStore is a store with conditional writes, driven as the package
// documentation's flow says.
type memStore map[string]policy.Record

func (s memStore) read(sk string) *policy.Record {
	if rec, ok := s[sk]; ok {
		return &rec
	}
	return nil
}

func (s memStore) write(rec policy.Record) bool {
	cur, ok := s[rec.StorageKey]
	if rec.Generation == 1 && ok || rec.Generation > 1 && (!ok || cur.Generation != rec.Generation-1) {
		return false
	}
	s[rec.StorageKey] = rec
	return true
}

// handle runs the documented flow for req and returns the final decision.
func (s memStore) handle(t *testing.T, rule *policy.Rule, req policy.Request, now time.Time) policy.Decision {
	t.Helper()
	pk, nk, err := rule.StorageKeys(req)
	if err != nil {
		t.Fatal(err)
	}
	d, err := rule.Decide(req, s.read(pk), s.read(nk), now)
	for i := 0; err == nil && (d.Action == policy.Execute || d.Action == policy.ExecuteAsNew) && !s.write(*d.Reserve); i++ {
		if i == 3 {
			t.Fatal("the decision loop does not end")
		}
		d, err = rule.Decide(req, s.read(pk), s.read(nk), now)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (s memStore) complete(t *testing.T, rule *policy.Rule, d policy.Decision, status int, body string, now time.Time) {
	t.Helper()
	rec, err := rule.Complete(d.Reserve, policy.Response{Status: status, Body: []byte(body)}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !s.write(rec) {
		t.Fatal("the completion lost its reservation")
	}
}

// TestExecuteAsNewOnce runs the stories in which a request that executed as
// new came back after the primary record stopped binding: it must be
// replayed (or waited for), never executed a second time, while its own
// record binds.
func TestExecuteAsNewOnce(t *testing.T) {
	t0 := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "on_mismatch": "new", "ttl": "24h"}]}`)
	a := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, rule, `{"amountCents":1000}`)}
	b := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, rule, `{"amountCents":2000}`)}

	t.Run("PrimaryExpired", func(t *testing.T) {
		s := memStore{}
		s.complete(t, rule, s.handle(t, rule, a, t0), 201, "a", t0)
		t1 := t0.Add(23 * time.Hour)
		d := s.handle(t, rule, b, t1)
		if d.Action != policy.ExecuteAsNew {
			t.Fatalf("b = %v, want execute-as-new", d.Action)
		}
		s.complete(t, rule, d, 201, "b", t1)
		// a's record has expired; b's binds for 23 hours more.
		d = s.handle(t, rule, b, t0.Add(24*time.Hour+time.Minute))
		if d.Action != policy.Replay || string(d.Response.Body) != "b" {
			t.Errorf("b retried within its TTL = %v %v %s, want the replay of b", d.Action, d.Reason, d.Response.Body)
		}
	})
	t.Run("PrimaryReleased", func(t *testing.T) {
		s := memStore{}
		da := s.handle(t, rule, a, t0)
		db := s.handle(t, rule, b, t0.Add(time.Second))
		s.complete(t, rule, db, 201, "b", t0.Add(2*time.Second))
		s.complete(t, rule, da, 500, "a", t0.Add(3*time.Second)) // a failed: its key is free
		d := s.handle(t, rule, b, t0.Add(4*time.Second))
		if d.Action != policy.Replay || string(d.Response.Body) != "b" {
			t.Errorf("b retried = %v %v %s, want the replay of b", d.Action, d.Reason, d.Response.Body)
		}
	})
	t.Run("PrimaryReleasedWhileRunning", func(t *testing.T) {
		s := memStore{}
		da := s.handle(t, rule, a, t0)
		db := s.handle(t, rule, b, t0.Add(time.Second))
		s.complete(t, rule, da, 500, "a", t0.Add(2*time.Second))
		d := s.handle(t, rule, b, t0.Add(3*time.Second))
		if d.Action != policy.Reject || d.Problem.Type != policy.TypeInFlight || d.StorageKey != db.StorageKey {
			t.Errorf("b retried while running = %v %v at %q, want 409 in flight at %q", d.Action, d.Reason, d.StorageKey, db.StorageKey)
		}
	})
}

func TestDecideErrors(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments"}]}`)
	fp := sum(t, rule, `{"a":1}`)
	req := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: fp}
	d, _ := rule.Decide(req, nil, nil, now)
	own := *d.Reserve
	otherTenant := own
	otherTenant.StorageKey = storageKey("globex", "", "k")
	otherTenant.Tenant = "globex"
	lyingTenant := own
	lyingTenant.Tenant = "globex"
	unknownState := own
	unknownState.State = 9
	for _, tc := range []struct {
		name string
		req  policy.Request
		rec  *policy.Record
		want error
	}{
		{"NoTenant", policy.Request{Key: []string{"k"}, Fingerprint: fp}, nil, policy.ErrNoTenant},
		{"NoTenantWithoutKey", policy.Request{}, nil, policy.ErrNoTenant},
		{"NoFingerprint", policy.Request{Tenant: "acme", Key: []string{"k"}}, nil, policy.ErrNoFingerprint},
		{"ForeignRecord/OtherTenantsKey", req, &otherTenant, policy.ErrForeignRecord},
		{"ForeignRecord/TenantContradictsKey", req, &lyingTenant, policy.ErrForeignRecord},
		{"ForeignRecord/UnknownState", req, &unknownState, policy.ErrForeignRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := rule.Decide(tc.req, tc.rec, nil, now)
			if !errors.Is(err, tc.want) {
				t.Errorf("Decide err = %v, want %v", err, tc.want)
			}
			if d.Action != 0 || d.Reserve != nil {
				t.Errorf("Decide returned a decision with its error: %+v", d)
			}
		})
	}
}

func TestComplete(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "cache": ["2xx", "4xx", "!429"], "ttl": "1h", "store_intent": true}]}`)
	req := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, rule, `{"a":1}`), Intent: []byte(`{"intent":1}`)}
	d, _ := rule.Decide(req, nil, nil, now)
	res := d.Reserve
	done := now.Add(5 * time.Second)
	for _, tc := range []struct {
		status int
		want   policy.State
	}{
		{200, policy.StateCompleted}, {201, policy.StateCompleted}, {299, policy.StateCompleted},
		{404, policy.StateCompleted}, {409, policy.StateCompleted}, {422, policy.StateCompleted},
		{429, policy.StateNone}, {300, policy.StateNone}, {500, policy.StateNone}, {503, policy.StateNone},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			hdr := http.Header{"Location": {"/v1/payments/pay_1"}}
			got, err := rule.Complete(res, policy.Response{Status: tc.status, Header: hdr, Body: []byte(`{"id":1}`)}, done)
			if err != nil {
				t.Fatal(err)
			}
			want := *res
			want.Generation = res.Generation + 1
			want.State = tc.want
			if tc.want == policy.StateCompleted {
				want.Status, want.Header, want.Body = tc.status, policy.HeaderOf(hdr), []byte(`{"id":1}`)
				want.ExpiresAt = done.Add(time.Hour)
			} else {
				want.Intent, want.LeaseExpiry = nil, time.Time{}
			}
			if diff := cmp.Diff(want, got, fpEqual); diff != "" {
				t.Errorf("Complete(%d) mismatch (-want +got):\n%s", tc.status, diff)
			}
			hdr.Set("Location", "changed")
			if tc.want == policy.StateCompleted && !slices.Equal(got.Header.Values("Location"), []string{"/v1/payments/pay_1"}) {
				t.Errorf("Complete kept the caller's header map instead of a copy")
			}
		})
	}
	t.Run("Errors", func(t *testing.T) {
		completed, _ := rule.Complete(res, policy.Response{Status: 201}, done)
		for _, tc := range []struct {
			name string
			res  *policy.Record
			resp policy.Response
			want error
		}{
			{"Nil", nil, policy.Response{Status: 201}, policy.ErrNotInFlight},
			{"Completed", &completed, policy.Response{Status: 201}, policy.ErrNotInFlight},
			{"Status/Informational", res, policy.Response{Status: 103}, policy.ErrStatus},
			{"Status/Zero", res, policy.Response{}, policy.ErrStatus},
			{"Status/TooLarge", res, policy.Response{Status: 600}, policy.ErrStatus},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if _, err := rule.Complete(tc.res, tc.resp, done); !errors.Is(err, tc.want) {
					t.Errorf("Complete err = %v, want %v", err, tc.want)
				}
			})
		}
	})
}

// TestRecordBinds pins the rule by which a record holds its key, which a
// store judging by its own clock must apply as Decide does.
func TestRecordBinds(t *testing.T) {
	t0 := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	lease, expires := t0.Add(30*time.Second), t0.Add(time.Hour)
	for _, tc := range []struct {
		name string
		rec  *policy.Record
		at   time.Time
		want bool
	}{
		{"Nil", nil, t0, false},
		{"Released", &policy.Record{State: policy.StateNone, ExpiresAt: expires}, t0, false},
		{"Completed/BeforeExpiry", &policy.Record{State: policy.StateCompleted, ExpiresAt: expires}, expires.Add(-time.Nanosecond), true},
		{"Completed/AtExpiry", &policy.Record{State: policy.StateCompleted, ExpiresAt: expires}, expires, false},
		{"Completed/LeaseIrrelevant", &policy.Record{State: policy.StateCompleted, LeaseExpiry: expires.Add(time.Hour), ExpiresAt: expires}, expires, false},
		{"InFlight/Running", &policy.Record{State: policy.StateInFlight, LeaseExpiry: lease, ExpiresAt: expires}, t0, true},
		{"InFlight/Stale", &policy.Record{State: policy.StateInFlight, LeaseExpiry: lease, ExpiresAt: expires}, lease, true},
		{"InFlight/AtExpiry", &policy.Record{State: policy.StateInFlight, LeaseExpiry: lease, ExpiresAt: expires}, expires, false},
		{"InFlight/LeaseOutlivesExpiry", &policy.Record{State: policy.StateInFlight, LeaseExpiry: expires.Add(time.Minute), ExpiresAt: expires}, expires, true},
		{"InFlight/BothOver", &policy.Record{State: policy.StateInFlight, LeaseExpiry: expires.Add(time.Minute), ExpiresAt: expires}, expires.Add(time.Minute), false},
	} {
		if got := tc.rec.Binds(tc.at); got != tc.want {
			t.Errorf("%s: Binds = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCompleteStoredHeaders checks which response headers a completed
// record keeps for replay: never a cookie, credentials, a hop-by-hop
// header (including those Connection names) or Content-Length, nor what
// exclude_headers lists, in any case; every value of the others, in order.
func TestCompleteStoredHeaders(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	rule := mustRule(t, `{"defaults": {"exclude_headers": ["X-Other"]}, "rules": [{"route": "POST /v1/payments", "exclude_headers": ["x-request-id", "Server-Timing"]}]}`)
	req := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, rule, `{"a":1}`)}
	d, _ := rule.Decide(req, nil, nil, now)
	many := make([]string, 40)
	for i := range many {
		many[i] = strconv.Itoa(i)
	}
	resp := http.Header{
		"Location":            {"/v1/payments/pay_1"},
		"Link":                {"</a>; rel=a", "</b>; rel=b"},
		"X-Other":             {"kept: the rule's list replaces the defaults'"},
		"Set-Cookie":          {"session=1", "theme=dark"},
		"set-cookie2":         {"old=1"},
		"Authorization":       {"Bearer t"},
		"Proxy-Authorization": {"Basic p"},
		"Connection":          {"keep-alive, X-Hop", "x-other-hop"},
		"Keep-Alive":          {"timeout=5"},
		"Proxy-Connection":    {"keep-alive"},
		"Te":                  {"trailers"},
		"Trailer":             {"X-Checksum"},
		"Transfer-Encoding":   {"chunked"},
		"Upgrade":             {"h2c"},
		"Content-Length":      {"9"},
		"X-Hop":               {"1"},
		"X-Other-Hop":         {"2"},
		"X-Request-Id":        {"r-1"},
		"server-timing":       {"db;dur=53"},
		"Content-Type":        {"application/json"},
		"connection":          {"X-Lower-Hop"}, // another spelling, named headers too
		"X-Lower-Hop":         {"3"},
		"X-Many":              many, // more values than the header has names
	}
	got, err := rule.Complete(d.Reserve, policy.Response{Status: 201, Header: resp, Body: []byte(`{"id":1}`)}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{
		"Location":     {"/v1/payments/pay_1"},
		"Link":         {"</a>; rel=a", "</b>; rel=b"},
		"X-Other":      {"kept: the rule's list replaces the defaults'"},
		"Content-Type": {"application/json"},
		"X-Many":       many,
	}
	if diff := cmp.Diff(want, got.Header.HTTP()); diff != "" {
		t.Errorf("stored header mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(policy.HeaderOf(want), got.Header); diff != "" {
		t.Errorf("stored header not in a Header's order (-want +got):\n%s", diff)
	}
	resp["Link"][0], many[39] = "changed", "changed"
	if got.Header.Values("Link")[0] != "</a>; rel=a" || got.Header.Values("X-Many")[39] != "39" {
		t.Errorf("the stored values share the response's")
	}
	for name, stored := range map[string]bool{"location": true, "SET-COOKIE": false, "x-request-id": false, "X-Other": true, "content-length": false, "Connection": false, "X-Hop": true} {
		if got := rule.StoresHeader(name); got != stored {
			t.Errorf("StoresHeader(%q) = %v, want %v", name, got, stored)
		}
	}
	if other, _ := mustParse(t, `{"defaults": {"exclude_headers": ["X-Other"]}, "rules": []}`).Match("POST", "/x"); other.StoresHeader("x-other") {
		t.Errorf("the defaults' rule stores X-Other, which its exclude_headers lists")
	}
}

func TestDecideResponseHeaders(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, settings string
		leaseLeft      time.Duration
		replay         http.Header // of a replay, besides Location
		retryAfter     string
	}{
		{"Default", ``, 29 * time.Second, http.Header{"Idempotent-Replayed": {"true"}}, "29"},
		{"Default/RoundsUp", ``, 2100 * time.Millisecond, http.Header{"Idempotent-Replayed": {"true"}}, "3"},
		{"Default/Whole", ``, 2 * time.Second, http.Header{"Idempotent-Replayed": {"true"}}, "2"},
		{"Default/LastNanosecond", ``, time.Nanosecond, http.Header{"Idempotent-Replayed": {"true"}}, "1"},
		{"Declared", `, "replay_header": "x-replayed: yes", "retry_after": "5s"`, 29 * time.Second, http.Header{"X-Replayed": {"yes"}}, "5"},
		{"NoReplayHeader", `, "replay_header": ""`, 29 * time.Second, http.Header{}, "29"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments"`+tc.settings+`}]}`)
			req := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, rule, `{"a":1}`)}
			d, _ := rule.Decide(req, nil, nil, now)
			res := *d.Reserve
			res.LeaseExpiry = now.Add(tc.leaseLeft)
			got, err := rule.Decide(req, &res, nil, now)
			if err != nil {
				t.Fatal(err)
			}
			if ra := got.Response.Header.Get("Retry-After"); got.Problem == nil || got.Problem.Type != policy.TypeInFlight || ra != tc.retryAfter {
				t.Errorf("in flight: %v, Retry-After %q; want %q", got.Action, ra, tc.retryAfter)
			}
			stored := http.Header{"Location": {"/v1/payments/pay_1"}}
			done, _ := rule.Complete(&res, policy.Response{Status: 201, Header: stored, Body: []byte(`{}`)}, now)
			got, _ = rule.Decide(req, &done, nil, now)
			want := tc.replay.Clone()
			want.Set("Location", "/v1/payments/pay_1")
			if diff := cmp.Diff(want, got.Response.Header); diff != "" {
				t.Errorf("replay header mismatch (-want +got):\n%s", diff)
			}
			if len(done.Header) != 1 {
				t.Errorf("the replay header was added to the stored record: %v", done.Header)
			}
		})
	}
}

// TestDecideDifferingPaths checks that a key-reuse problem names the
// differing fields only when the rule keeps intent projections.
func TestDecideDifferingPaths(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		storeIntent bool
		want        []string
	}{{true, []string{"amountCents", "currency"}}, {false, nil}} {
		t.Run(fmt.Sprintf("store_intent=%v", tc.storeIntent), func(t *testing.T) {
			rule := mustRule(t, fmt.Sprintf(`{"rules": [{"route": "POST /v1/payments", "fingerprint": {"ignore": ["traceId"]}, "store_intent": %v}]}`, tc.storeIntent))
			request := func(body string) policy.Request {
				fr := fingerprint.Request{Method: "POST", Path: "/v1/payments", Header: http.Header{"Idempotency-Key": {"k"}}, Body: []byte(body)}
				req, err := rule.NewRequest("acme", fr)
				if err != nil {
					t.Fatal(err)
				}
				if req.Intent == nil { // a caller may supply it anyway; the rule decides
					req.Intent, _ = rule.Fingerprinter().AppendIntent(nil, fr)
				}
				return req
			}
			first := request(`{"amountCents":1000,"currency":"EUR","traceId":"a"}`)
			d, _ := rule.Decide(first, nil, nil, now)
			if (d.Reserve.Intent != nil) != tc.storeIntent {
				t.Errorf("Reserve.Intent = %s with store_intent %v", d.Reserve.Intent, tc.storeIntent)
			}
			rec, _ := rule.Complete(d.Reserve, policy.Response{Status: 201}, now)
			got, _ := rule.Decide(request(`{"amountCents":1000000,"currency":"USD","traceId":"b"}`), &rec, nil, now)
			if got.Problem == nil {
				t.Fatalf("Decide = %v, want a rejection", got.Action)
			}
			if diff := cmp.Diff(tc.want, got.Problem.DifferingPaths); diff != "" {
				t.Errorf("DifferingPaths mismatch (-want +got):\n%s", diff)
			}
			if strings.Contains(string(got.Response.Body), "differing_paths") != tc.storeIntent {
				t.Errorf("body: %s", got.Response.Body)
			}
			if strings.Contains(string(got.Response.Body), "1000000") || strings.Contains(string(got.Response.Body), "USD") {
				t.Errorf("the problem echoes request values: %s", got.Response.Body)
			}
		})
	}
}

// deepReuse returns a rule that stores intent, a completed record of a
// first request and a second request that reuses its key: bodies nested
// depth arrays deep, with size bytes at the bottom that differ. It is the
// shape with which a client once made Decide spend seconds in Diff.
func deepReuse(t testing.TB, depth, size int) (*policy.Rule, policy.Record, policy.Request) {
	t.Helper()
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "store_intent": true}]}`)
	request := func(fill string) policy.Request {
		body := `{"amountCents":1,"currency":"EUR","destination":{"iban":"x"},"x":` +
			strings.Repeat("[", depth) + `"` + strings.Repeat(fill, size) + `"` + strings.Repeat("]", depth) + `}`
		req, err := rule.NewRequest("acme", fingerprint.Request{Method: "POST", Path: "/v1/payments", Header: http.Header{"Idempotency-Key": {"k"}}, Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	d, err := rule.Decide(request("A"), nil, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := rule.Complete(d.Reserve, policy.Response{Status: 201}, now)
	if err != nil {
		t.Fatal(err)
	}
	return rule, rec, request("B")
}

// TestDecideDeepKeyReuse checks the answer to a key reused with a deeply
// nested body: one differing path, cut to a bounded length, and a problem
// of bounded size. (fingerprint's TestDiffWork counts the work.)
func TestDecideDeepKeyReuse(t *testing.T) {
	rule, rec, second := deepReuse(t, 4000, 10_000)
	d, err := rule.Decide(second, &rec, nil, rec.ExpiresAt.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if d.Reason != policy.ReasonMismatch || d.Problem == nil {
		t.Fatalf("Decide = %v (%v), want a key-reuse rejection", d.Action, d.Reason)
	}
	want := "x" + strings.Repeat(".0", 63) + ".…" // the first 128 bytes, then the cut
	if diff := cmp.Diff([]string{want}, d.Problem.DifferingPaths); diff != "" {
		t.Errorf("DifferingPaths mismatch (-want +got):\n%s", diff)
	}
	if n := len(d.Response.Body); n > 1024 {
		t.Errorf("the problem has %d bytes", n)
	}
}

// TestDecideManyDifferences checks that a key-reuse problem lists at most
// fingerprint.MaxDifferences paths and its detail names five.
func TestDecideManyDifferences(t *testing.T) {
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "store_intent": true}]}`)
	body := func(v int) string {
		var b strings.Builder
		for i := range 500 {
			fmt.Fprintf(&b, `,"f%03d":%d`, i, v)
		}
		return "{" + b.String()[1:] + "}"
	}
	request := func(body string) policy.Request {
		req, err := rule.NewRequest("acme", fingerprint.Request{Method: "POST", Path: "/v1/payments", Header: http.Header{"Idempotency-Key": {"k"}}, Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	d, _ := rule.Decide(request(body(1)), nil, nil, now)
	rec, _ := rule.Complete(d.Reserve, policy.Response{Status: 201}, now)
	d, _ = rule.Decide(request(body(2)), &rec, nil, now)
	if got := len(d.Problem.DifferingPaths); got != fingerprint.MaxDifferences {
		t.Errorf("%d differing paths, want %d", got, fingerprint.MaxDifferences)
	}
	if got := d.Problem.DifferingPaths[99]; got != "f099" {
		t.Errorf("the last path listed is %q, want f099", got)
	}
	if want := "differs at f000, f001, f002, f003, f004 and more (see differing_paths)."; !strings.Contains(d.Problem.Detail, want) {
		t.Errorf("Detail = %q, want it to contain %q", d.Problem.Detail, want)
	}
}

// BenchmarkDecideDeepKeyReuse measures Decide on a key reused with a deeply
// nested body of several depths and sizes: the time grows with the size of
// the bodies, not with depth times size.
func BenchmarkDecideDeepKeyReuse(b *testing.B) {
	for _, depth := range []int{1000, 2000, 4000, 8000} {
		for _, size := range []int{10_000, 100_000} {
			rule, rec, second := deepReuse(b, depth, size)
			now := rec.ExpiresAt.Add(-time.Hour)
			b.Run(fmt.Sprintf("depth=%d/size=%d", depth, size), func(b *testing.B) {
				b.SetBytes(int64(len(rec.Intent) + len(second.Intent)))
				b.ReportAllocs()
				for b.Loop() {
					if d, err := rule.Decide(second, &rec, nil, now); err != nil || d.Problem == nil {
						b.Fatal(d.Action, err)
					}
				}
			})
		}
	}
}

// TestNewRequestHost checks that a rule whose fingerprint declares Host
// tells requests to two hosts apart, and fails a request whose header has
// no Host (as net/http's has not) rather than leave the host out.
func TestNewRequestHost(t *testing.T) {
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "fingerprint": {"headers": ["host"]}}]}`)
	request := func(h http.Header) (policy.Request, error) {
		h.Set("Idempotency-Key", "k")
		return rule.NewRequest("acme", fingerprint.Request{Method: "POST", Path: "/v1/payments", Header: h, Body: []byte(`{}`)})
	}
	a, errA := request(http.Header{"Host": {"a.example"}})
	b, errB := request(http.Header{"host": {"b.example"}})
	if errA != nil || errB != nil || a.Fingerprint == b.Fingerprint {
		t.Errorf("hosts a and b: %v, %v; fingerprints equal: %v", errA, errB, a.Fingerprint == b.Fingerprint)
	}
	_, err := request(http.Header{})
	var re *fingerprint.RequestError
	if !errors.As(err, &re) || re.Part != "header" || re.Name != "host" || !errors.Is(err, fingerprint.ErrMissingRequired) {
		t.Errorf("without Host: %v, want a RequestError for header host wrapping ErrMissingRequired", err)
	}
	if req, err := rule.NewRequest("acme", fingerprint.Request{Method: "POST", Path: "/v1/payments"}); err != nil || req.Key != nil {
		t.Errorf("without a key: %+v, %v; want a pass-through request, nothing fingerprinted", req, err)
	}
}

func TestNewRequest(t *testing.T) {
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "store_intent": true, "key": {"header": "X-Key"}}]}`)
	fr := fingerprint.Request{Method: "POST", Path: "/v1/payments", Header: http.Header{}, Body: []byte(`{"a":1,"a":2}`)}
	req, err := rule.NewRequest("acme", fr)
	if err != nil || req.Key != nil || !req.Fingerprint.IsZero() {
		t.Errorf("without a key: %+v, %v; want nothing fingerprinted and no error", req, err)
	}
	fr.Header.Set("x-key", "k")
	if _, err := rule.NewRequest("acme", fr); err == nil {
		t.Errorf("a body with a duplicate name was fingerprinted")
	}
	fr.Body = []byte(`{"a":1}`)
	req, err = rule.NewRequest("acme", fr)
	if err != nil {
		t.Fatal(err)
	}
	wantFP, _ := rule.Fingerprinter().Sum(fr)
	wantIntent, _ := rule.Fingerprinter().AppendIntent(nil, fr)
	if req.Tenant != "acme" || !cmp.Equal(req.Key, []string{"k"}) || req.Path != "/v1/payments" || req.Fingerprint != wantFP || string(req.Intent) != string(wantIntent) {
		t.Errorf("NewRequest = %+v", req)
	}
}

// TestNewRequestKeyHeaderCase reads the key header whatever the case of its
// name in a hand-built header map, as the fingerprint reads the headers it
// declares; two spellings, each with a value, are a repeated header.
func TestNewRequestKeyHeaderCase(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "key": {"required": false}, "fingerprint": {"headers": ["X-Account"]}}]}`)
	for _, tc := range []struct {
		name   string
		header http.Header
		key    []string
		action policy.Action
		reason policy.Reason
	}{
		{"Canonical", http.Header{"Idempotency-Key": {"k1"}}, []string{"k1"}, policy.Execute, policy.ReasonFirst},
		{"LowerCase", http.Header{"idempotency-key": {"k1"}, "x-account": {"acc_1"}}, []string{"k1"}, policy.Execute, policy.ReasonFirst},
		{"UpperCase", http.Header{"IDEMPOTENCY-KEY": {"k1"}}, []string{"k1"}, policy.Execute, policy.ReasonFirst},
		{"TwoSpellings", http.Header{"Idempotency-Key": {"k1"}, "idempotency-key": {"k2"}}, nil, policy.Reject, policy.ReasonMalformedKey},
		{"TwoSpellingsOneEmpty", http.Header{"Idempotency-Key": {}, "idempotency-key": {"k1"}}, []string{"k1"}, policy.Execute, policy.ReasonFirst},
		{"Absent", http.Header{"Idempotency-Keys": {"k1"}}, nil, policy.PassThrough, policy.ReasonMissingKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fmt.Sprint(tc.header)
			req, err := rule.NewRequest("acme", fingerprint.Request{Method: "POST", Path: "/v1/payments", Header: tc.header, Body: []byte(`{"a":1}`)})
			if err != nil {
				t.Fatal(err)
			}
			if tc.key != nil && !cmp.Equal(tc.key, req.Key) {
				t.Errorf("Key = %q, want %q", req.Key, tc.key)
			}
			d, err := rule.Decide(req, nil, nil, now)
			if err != nil || d.Action != tc.action || d.Reason != tc.reason {
				t.Errorf("Decide = %v %v, %v; want %v %v", d.Action, d.Reason, err, tc.action, tc.reason)
			}
			if tc.reason == policy.ReasonMalformedKey && d.Response.Status != 400 {
				t.Errorf("status %d, want 400", d.Response.Status)
			}
			if fmt.Sprint(tc.header) != before {
				t.Errorf("NewRequest changed the header map: %v", tc.header)
			}
		})
	}
}

// TestDecideRoutes compares records by endpoint: a renamed route parameter
// is the same endpoint, and a record of another endpoint is rejected, never
// replayed or executed as new on, whatever the rule's on_mismatch, unless
// scope.route keeps the two apart.
func TestDecideRoutes(t *testing.T) {
	t0 := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	request := func(t *testing.T, rule *policy.Rule, path, key, body string) policy.Request {
		t.Helper()
		req, err := rule.NewRequest("acme", fingerprint.Request{Method: "POST", Path: path,
			Header: http.Header{"Idempotency-Key": {key}}, Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	match := func(t *testing.T, pol *policy.Policy, path string) *policy.Rule {
		t.Helper()
		r, ok := pol.Match("POST", path)
		if !ok {
			t.Fatalf("no rule for %s", path)
		}
		return r
	}

	t.Run("RenamedParameter", func(t *testing.T) {
		for _, scope := range []string{"false", "true"} {
			before := mustParse(t, `{"rules": [{"route": "POST /v1/p/{id}/capture", "scope": {"route": `+scope+`}}]}`)
			after := mustParse(t, `{"rules": [{"route": "POST /v1/p/{payment}/capture", "scope": {"route": `+scope+`}}]}`)
			r1, r2 := match(t, before, "/v1/p/1/capture"), match(t, after, "/v1/p/1/capture")
			s := memStore{}
			d := s.handle(t, r1, request(t, r1, "/v1/p/1/capture", "k", `{"a":1}`), t0)
			s.complete(t, r1, d, 201, "captured", t0)
			got := s.handle(t, r2, request(t, r2, "/v1/p/1/capture", "k", `{"a":1}`), t0.Add(time.Second))
			if got.Action != policy.Replay || got.Reason != policy.ReasonRetry || string(got.Response.Body) != "captured" {
				t.Errorf("scope.route %s: retry after the rename = %v %v, want the replay", scope, got.Action, got.Reason)
			}
		}
	})

	// A key first used on POST /v1/orders, which the defaults govern, then
	// on another endpoint.
	pol := mustParse(t, `{"defaults": {"on_mismatch": "replay"}, "rules": [
  {"route": "POST /v1/refunds", "on_mismatch": "replay"},
  {"route": "POST /v1/transfers", "on_mismatch": "new"},
  {"route": "POST /v1/payments", "on_mismatch": "reject", "mismatch_status": 409},
  {"route": "POST /v1/scoped", "scope": {"route": true}, "on_mismatch": "replay"}
]}`)
	orders := match(t, pol, "/v1/orders")
	for _, tc := range []struct {
		path     string
		inFlight bool // the order is still running
		want     outcome
	}{
		{"/v1/refunds", false, outcome{Action: policy.Reject, Reason: policy.ReasonOtherRoute, Where: "primary", Status: 422, ProblemType: policy.TypeOtherRoute}},
		{"/v1/refunds", true, outcome{Action: policy.Reject, Reason: policy.ReasonOtherRoute, Where: "primary", Status: 422, ProblemType: policy.TypeOtherRoute}},
		{"/v1/transfers", false, outcome{Action: policy.Reject, Reason: policy.ReasonOtherRoute, Where: "primary", Status: 422, ProblemType: policy.TypeOtherRoute}},
		{"/v1/transfers", true, outcome{Action: policy.Reject, Reason: policy.ReasonOtherRoute, Where: "primary", Status: 422, ProblemType: policy.TypeOtherRoute}},
		{"/v1/payments", false, outcome{Action: policy.Reject, Reason: policy.ReasonOtherRoute, Where: "primary", Status: 409, ProblemType: policy.TypeOtherRoute}},
		{"/v1/invoices", false, outcome{Action: policy.Reject, Reason: policy.ReasonOtherRoute, Where: "primary", Status: 422, ProblemType: policy.TypeOtherRoute}},
		{"/v1/invoices", true, outcome{Action: policy.Reject, Reason: policy.ReasonOtherRoute, Where: "primary", Status: 422, ProblemType: policy.TypeOtherRoute}},
		{"/v1/scoped", false, outcome{Action: policy.Execute, Reason: policy.ReasonFirst, Where: "primary", Generation: 1}},
		{"/v1/orders", false, outcome{Action: policy.Replay, Reason: policy.ReasonMismatch, Where: "primary", Status: 201, Replayed: "true", Body: `{"order":"o_1"}`}},
	} {
		t.Run(fmt.Sprintf("OtherRoute%s/inFlight=%v", tc.path, tc.inFlight), func(t *testing.T) {
			s := memStore{}
			d := s.handle(t, orders, request(t, orders, "/v1/orders", "k", `{"item":1}`), t0)
			if !tc.inFlight {
				s.complete(t, orders, d, 201, `{"order":"o_1"}`, t0)
			}
			rule := match(t, pol, tc.path)
			req := request(t, rule, tc.path, "k", `{"item":2}`)
			pk, nk, err := rule.StorageKeys(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := rule.Decide(req, s.read(pk), s.read(nk), t0.Add(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summarize(t, got, pk, nk)); diff != "" {
				t.Errorf("Decide mismatch (-want +got):\n%s", diff)
			}
			if got.Action == policy.Reject && strings.Contains(string(got.Response.Body), "o_1") {
				t.Errorf("the rejection shows the order: %s", got.Response.Body)
			}
		})
	}

	t.Run("DefaultsKeepPathsApart", func(t *testing.T) {
		a, b := policy.Request{Tenant: "acme", Key: []string{"k"}, Path: "/v1/orders"}, policy.Request{Tenant: "acme", Key: []string{"k"}, Path: "/v1/orders:x"}
		scoped := match(t, mustParse(t, `{"defaults": {"scope": {"route": true}}, "rules": []}`), "/v1/orders")
		ka, _, _ := scoped.StorageKeys(a)
		kb, _, _ := scoped.StorageKeys(b)
		if ka == kb || ka != storageKey("acme", "POST /v1/orders", "k") {
			t.Errorf("scoped defaults' storage keys %q and %q", ka, kb)
		}
		if _, _, err := orders.StorageKeys(policy.Request{Tenant: "acme", Key: []string{"k"}}); !errors.Is(err, policy.ErrNoPath) {
			t.Errorf("StorageKeys without a path: err = %v, want ErrNoPath", err)
		}
		req := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, orders, `{}`)}
		if _, err := orders.Decide(req, nil, nil, t0); !errors.Is(err, policy.ErrNoPath) {
			t.Errorf("Decide without a path: err = %v, want ErrNoPath", err)
		}
	})

	t.Run("ForeignRecords", func(t *testing.T) {
		scoped := match(t, pol, "/v1/scoped")
		req := request(t, scoped, "/v1/scoped", "k", `{"a":1}`)
		d, _ := scoped.Decide(req, nil, nil, t0)
		lying := *d.Reserve
		lying.Route = "POST /v1/refunds"
		if _, err := scoped.Decide(req, &lying, nil, t0); !errors.Is(err, policy.ErrForeignRecord) {
			t.Errorf("a record whose route contradicts its scoped key: err = %v, want ErrForeignRecord", err)
		}
		if _, err := match(t, pol, "/v1/refunds").Complete(d.Reserve, policy.Response{Status: 201}, t0); !errors.Is(err, policy.ErrForeignRecord) {
			t.Errorf("Complete by another rule: err = %v, want ErrForeignRecord", err)
		}
		o, _ := orders.Decide(request(t, orders, "/v1/orders", "k", `{}`), nil, nil, t0)
		if o.Reserve.Route != "POST /v1/orders" {
			t.Errorf("a defaults' reservation has route %q", o.Reserve.Route)
		}
		if _, err := orders.Complete(o.Reserve, policy.Response{Status: 201}, t0); err != nil {
			t.Errorf("Complete by the defaults' rule: %v", err)
		}
	})
}

func TestProblemDetailsJSON(t *testing.T) {
	for _, p := range []policy.ProblemDetails{
		{},
		{Type: policy.TypeKeyReuse, Title: "t", Status: 422, Detail: "quote \" backslash \\ newline \n é", DifferingPaths: []string{"a.b", `c"d`}},
		{Status: 409},
	} {
		b, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Type, Title, Detail string
			Status              int
			DifferingPaths      []string `json:"differing_paths"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if got.Type != p.Type || got.Title != p.Title || got.Detail != p.Detail || got.Status != p.Status || !cmp.Equal(got.DifferingPaths, p.DifferingPaths) {
			t.Errorf("round trip of %+v through %s gave %+v", p, b, got)
		}
	}
}

// TestDecideAllocs holds the engine to its allocation budget: Decide runs on
// every request of a guarded route.
func TestDecideAllocs(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments"}]}`)
	req := policy.Request{Tenant: "acme", Key: []string{"pay-7f3a"}, Fingerprint: sum(t, rule, `{"a":1}`)}
	d, _ := rule.Decide(req, nil, nil, now)
	done, _ := rule.Complete(d.Reserve, policy.Response{Status: 201, Header: http.Header{"Location": {"/v1/payments/pay_1"}}, Body: []byte(`{}`)}, now)
	for _, tc := range []struct {
		name   string
		budget float64
		f      func()
	}{
		{"StorageKeys", 1, func() { rule.StorageKeys(req) }},                      // the key string
		{"Decide/Execute", 3, func() { rule.Decide(req, nil, nil, now) }},         // the key, the reservation
		{"Decide/Replay", 5, func() { rule.Decide(req, &done, nil, now) }},        // the key, the header copy
		{"Decide/InFlight", 12, func() { rule.Decide(req, d.Reserve, nil, now) }}, // the problem and its body
	} {
		if got := testing.AllocsPerRun(100, tc.f); got > tc.budget {
			t.Errorf("%s allocates %v times, budget %v", tc.name, got, tc.budget)
		}
	}
}

// TestCompleteNeverStored checks every header StoresHeader's documentation
// says is never stored, in three spellings, one response each: none is kept.
func TestCompleteNeverStored(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments"}]}`)
	req := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: sum(t, rule, `{"a":1}`)}
	d, _ := rule.Decide(req, nil, nil, now)
	for _, name := range []string{"Set-Cookie", "Set-Cookie2", "Authorization", "Proxy-Authorization",
		"Connection", "Keep-Alive", "Proxy-Connection", "TE", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length"} {
		for _, spelling := range []string{name, strings.ToLower(name), strings.ToUpper(name)} {
			resp := http.Header{spelling: {"x"}, "X-Kept": {"1"}}
			got, err := rule.Complete(d.Reserve, policy.Response{Status: 201, Header: resp}, now)
			if err != nil {
				t.Fatal(err)
			}
			if want := (policy.Header{{Name: "X-Kept", Value: "1"}}); !cmp.Equal(want, got.Header) {
				t.Errorf("%s: stored %q, want %q", spelling, got.Header, want)
			}
			if rule.StoresHeader(spelling) {
				t.Errorf("StoresHeader(%q) = true", spelling)
			}
		}
	}
}
