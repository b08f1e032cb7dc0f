package policy_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
												rec.Header = http.Header{"Location": {"/v1/payments/pay_1"}}
												rec.Body = []byte(storedBody)
											}
										}
										n++
										t.Run(c.name(), func(t *testing.T) {
											d, err := rule.Decide(req, rec, now)
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
			dw, _ := rule.Decide(winner, nil, now)
			dl, _ := rule.Decide(loser, nil, now)
			if dw.Action != policy.Execute || dl.Action != policy.Execute || dw.Reserve.Generation != 1 || dl.Reserve.Generation != 1 {
				t.Fatalf("both racers must try to reserve generation 1: %+v %+v", dw, dl)
			}
			primary := storageKey("acme", "", "k")
			newKey := storageKey("acme", "", "k", loser.Fingerprint.String(), rule.Fingerprinter().SpecDigest())
			// The winner's write succeeds; the loser reads its record.
			got, err := rule.Decide(loser, dw.Reserve, now)
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
			got, err = rule.Decide(loser, &done, now)
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
	d1, _ := rule.Decide(first, nil, now)
	rec1, _ := rule.Complete(d1.Reserve, policy.Response{Status: 201, Body: []byte(`{"id":"pay_1"}`)}, now)

	d2, err := rule.Decide(second, &rec1, now)
	if err != nil || d2.Action != policy.ExecuteAsNew {
		t.Fatalf("Decide(second) = %+v, %v; want execute-as-new", d2, err)
	}
	wantKey := storageKey("acme", "", "k", second.Fingerprint.String(), rule.Fingerprinter().SpecDigest())
	if d2.StorageKey != wantKey || d2.Reserve.StorageKey != wantKey {
		t.Fatalf("new identity = %q, want %q", d2.StorageKey, wantKey)
	}
	// The new identity is occupied by the second request's own reservation.
	got, err := rule.Decide(second, d2.Reserve, now.Add(time.Second))
	if err != nil || got.Action != policy.Reject || got.Problem.Type != policy.TypeInFlight {
		t.Errorf("retry of second while in flight = %+v, %v; want 409 in flight", got, err)
	}
	got, err = rule.Decide(second, d2.Reserve, now.Add(time.Minute))
	if err != nil || got.Action != policy.ExecuteAsNew || got.Reserve.Generation != 2 || got.StorageKey != wantKey {
		t.Errorf("retry of second after its lease = %+v, %v; want a takeover of the new identity", got, err)
	}
	rec2, _ := rule.Complete(d2.Reserve, policy.Response{Status: 201, Body: []byte(`{"id":"pay_2"}`)}, now)
	got, err = rule.Decide(second, &rec2, now.Add(time.Minute))
	if err != nil || got.Action != policy.Replay || string(got.Response.Body) != `{"id":"pay_2"}` {
		t.Errorf("retry of second after completion = %+v, %v; want the replay of pay_2", got, err)
	}
	// The first request, retried, still replays its own answer.
	got, err = rule.Decide(first, &rec1, now.Add(time.Minute))
	if err != nil || got.Action != policy.Replay || string(got.Response.Body) != `{"id":"pay_1"}` {
		t.Errorf("retry of first = %+v, %v; want the replay of pay_1", got, err)
	}
	// A record under the new identity that holds another request is corrupt.
	bad := rec2
	bad.Fingerprint = first.Fingerprint
	if _, err := rule.Decide(second, &bad, now); !errors.Is(err, policy.ErrForeignRecord) {
		t.Errorf("Decide with a corrupt new-identity record: err = %v, want ErrForeignRecord", err)
	}
}

func TestDecideErrors(t *testing.T) {
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments"}]}`)
	fp := sum(t, rule, `{"a":1}`)
	req := policy.Request{Tenant: "acme", Key: []string{"k"}, Fingerprint: fp}
	d, _ := rule.Decide(req, nil, now)
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
			d, err := rule.Decide(tc.req, tc.rec, now)
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
	d, _ := rule.Decide(req, nil, now)
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
				want.Status, want.Header, want.Body = tc.status, hdr, []byte(`{"id":1}`)
				want.ExpiresAt = done.Add(time.Hour)
			} else {
				want.Intent, want.LeaseExpiry = nil, time.Time{}
			}
			if diff := cmp.Diff(want, got, fpEqual); diff != "" {
				t.Errorf("Complete(%d) mismatch (-want +got):\n%s", tc.status, diff)
			}
			hdr.Set("Location", "changed")
			if tc.want == policy.StateCompleted && got.Header.Get("Location") != "/v1/payments/pay_1" {
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
			d, _ := rule.Decide(req, nil, now)
			res := *d.Reserve
			res.LeaseExpiry = now.Add(tc.leaseLeft)
			got, err := rule.Decide(req, &res, now)
			if err != nil {
				t.Fatal(err)
			}
			if ra := got.Response.Header.Get("Retry-After"); got.Problem == nil || got.Problem.Type != policy.TypeInFlight || ra != tc.retryAfter {
				t.Errorf("in flight: %v, Retry-After %q; want %q", got.Action, ra, tc.retryAfter)
			}
			stored := http.Header{"Location": {"/v1/payments/pay_1"}}
			done, _ := rule.Complete(&res, policy.Response{Status: 201, Header: stored, Body: []byte(`{}`)}, now)
			got, _ = rule.Decide(req, &done, now)
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
			d, _ := rule.Decide(first, nil, now)
			if (d.Reserve.Intent != nil) != tc.storeIntent {
				t.Errorf("Reserve.Intent = %s with store_intent %v", d.Reserve.Intent, tc.storeIntent)
			}
			rec, _ := rule.Complete(d.Reserve, policy.Response{Status: 201}, now)
			got, _ := rule.Decide(request(`{"amountCents":1000000,"currency":"USD","traceId":"b"}`), &rec, now)
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
	if req.Tenant != "acme" || !cmp.Equal(req.Key, []string{"k"}) || req.Fingerprint != wantFP || string(req.Intent) != string(wantIntent) {
		t.Errorf("NewRequest = %+v", req)
	}
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
	d, _ := rule.Decide(req, nil, now)
	done, _ := rule.Complete(d.Reserve, policy.Response{Status: 201, Header: http.Header{"Location": {"/v1/payments/pay_1"}}, Body: []byte(`{}`)}, now)
	for _, tc := range []struct {
		name   string
		budget float64
		f      func()
	}{
		{"StorageKey", 1, func() { rule.StorageKey(req) }},                   // the key string
		{"Decide/Execute", 3, func() { rule.Decide(req, nil, now) }},         // the key, the reservation
		{"Decide/Replay", 5, func() { rule.Decide(req, &done, now) }},        // the key, the header copy
		{"Decide/InFlight", 12, func() { rule.Decide(req, d.Reserve, now) }}, // the problem and its body
	} {
		if got := testing.AllocsPerRun(100, tc.f); got > tc.budget {
			t.Errorf("%s allocates %v times, budget %v", tc.name, got, tc.budget)
		}
	}
}
