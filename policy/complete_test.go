package policy_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// reservation returns a fresh reservation under the rule of src, made at
// t0.
func reservation(t *testing.T, src string, t0 time.Time) (*policy.Rule, policy.Record) {
	t.Helper()
	r := mustRule(t, src)
	req, err := r.NewRequest("acme", fingerprint.Request{
		Method: "POST", Path: "/v1/payments",
		Header: http.Header{"Idempotency-Key": {"k1"}}, Body: []byte(`{"amountCents":1000}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Decide(req, nil, nil, t0)
	if err != nil || d.Action != policy.Execute {
		t.Fatalf("Decide = %v, %v", d.Action, err)
	}
	return r, *d.Reserve
}

const leasePolicy = `{"defaults": {"ttl": "1m", "lease": "10s"}, "rules": [{"route": "POST /v1/payments"}]}`

func TestRenew(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r, res := reservation(t, leasePolicy, t0)
	for _, tc := range []struct {
		name                string
		at                  time.Time
		wantLease, wantExpy time.Time
	}{
		{"WithinTTL", t0.Add(5 * time.Second), t0.Add(15 * time.Second), t0.Add(time.Minute)},
		{"PastTTL", t0.Add(55 * time.Second), t0.Add(65 * time.Second), t0.Add(65 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Renew(&res, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			want := res
			want.Generation++
			want.LeaseExpiry, want.ExpiresAt = tc.wantLease, tc.wantExpy
			if diff := cmp.Diff(want, got, fpEqual); diff != "" {
				t.Errorf("Renew mismatch (-want +got):\n%s", diff)
			}
			if !got.Binds(tc.at) || !got.Binds(tc.wantLease.Add(-time.Nanosecond)) {
				t.Error("a renewed reservation does not bind until its new lease ends")
			}
		})
	}
}

func TestRelease(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r, res := reservation(t, leasePolicy, t0)
	got, err := r.Release(&res)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != policy.StateNone || got.Generation != res.Generation+1 || got.Binds(t0) {
		t.Errorf("Release = %v generation %d (binds %v), want a released record of generation %d", got.State, got.Generation, got.Binds(t0), res.Generation+1)
	}
	if _, err := r.Release(&got); !errors.Is(err, policy.ErrNotInFlight) {
		t.Errorf("Release of a released record: error %v, want ErrNotInFlight", err)
	}
	refunds, _ := mustParse(t, `{"rules": [{"route": "POST /v1/refunds"}]}`).Match("POST", "/v1/refunds")
	if _, err := refunds.Release(&res); !errors.Is(err, policy.ErrForeignRecord) {
		t.Errorf("Release by another rule: error %v, want ErrForeignRecord", err)
	}
}

func TestCompleteWithoutResponse(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r, res := reservation(t, leasePolicy, t0)
	for _, tc := range []struct {
		name      string
		status    int
		size      int64
		wantState policy.State
		wantErr   error
	}{
		{"CachedTooLarge", 201, 5 << 20, policy.StateCompleted, nil},
		{"Hijacked", 0, 0, policy.StateCompleted, nil},
		{"NotCached", 500, 5 << 20, policy.StateNone, nil},
		{"Informational", 101, 0, 0, policy.ErrStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.CompleteWithoutResponse(&res, tc.status, tc.size, t0.Add(time.Second))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got.State != tc.wantState || got.Generation != res.Generation+1 {
				t.Fatalf("state %v generation %d, want %v generation %d", got.State, got.Generation, tc.wantState, res.Generation+1)
			}
			if got.State != policy.StateCompleted {
				return
			}
			var p map[string]any
			if err := json.Unmarshal(got.Body, &p); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			if got.Status != 409 || p["type"] != policy.TypeResponseNotKept || got.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("record = %d %v %q, want a 409 response-not-kept problem", got.Status, got.Header, got.Body)
			}
			if !got.ExpiresAt.Equal(t0.Add(time.Second + time.Minute)) {
				t.Errorf("ExpiresAt = %v, want the TTL after completion", got.ExpiresAt)
			}
			// A retry is answered from it: replayed, never executed.
			req, _ := r.NewRequest("acme", fingerprint.Request{Method: "POST", Path: "/v1/payments", Header: http.Header{"Idempotency-Key": {"k1"}}, Body: []byte(`{"amountCents":1000}`)})
			d, err := r.Decide(req, &got, nil, t0.Add(2*time.Second))
			if err != nil || d.Action != policy.Replay || d.Response.Status != 409 {
				t.Errorf("retry = %v %d, %v; want a replay of the 409", d.Action, d.Response.Status, err)
			}
		})
	}
}

// NewRequest remembers the storage keys it computed; a request changed
// afterwards must not be answered with the keys of what it was.
func TestRequestChangedAfterNewRequest(t *testing.T) {
	r := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "on_mismatch": "new"}]}`)
	build := func(tenant, key, body string) policy.Request {
		req, err := r.NewRequest(tenant, fingerprint.Request{
			Method: "POST", Path: "/v1/payments", Header: http.Header{"Idempotency-Key": {key}}, Body: []byte(body),
		})
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	keys := func(req policy.Request) [2]string {
		pk, nk, err := r.StorageKeys(req)
		if err != nil {
			t.Fatal(err)
		}
		return [2]string{pk, nk}
	}
	base := build("acme", "k1", `{"a":1}`)
	for name, tc := range map[string]struct {
		change func(*policy.Request)
		want   policy.Request
	}{
		"Tenant":      {func(q *policy.Request) { q.Tenant = "globex" }, build("globex", "k1", `{"a":1}`)},
		"Key":         {func(q *policy.Request) { q.Key = []string{"k2"} }, build("acme", "k2", `{"a":1}`)},
		"Fingerprint": {func(q *policy.Request) { q.Fingerprint = build("acme", "k1", `{"a":2}`).Fingerprint }, build("acme", "k1", `{"a":2}`)},
	} {
		t.Run(name, func(t *testing.T) {
			req := base
			tc.change(&req)
			if got, want := keys(req), keys(tc.want); got != want {
				t.Errorf("StorageKeys of a changed request = %q, want %q", got, want)
			}
			d, err := r.Decide(req, nil, nil, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if want := keys(tc.want)[0]; d.StorageKey != want || d.Reserve.Tenant != tc.want.Tenant {
				t.Errorf("Decide of a changed request reserves %q for %q, want %q for %q", d.StorageKey, d.Reserve.Tenant, want, tc.want.Tenant)
			}
		})
	}
}
