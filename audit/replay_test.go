package audit_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/audit"
	"github.com/idemprint/idemprint/policy"
)

// jsonl joins envelope lines.
func jsonl(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func auditString(t *testing.T, policySrc, log string, opts audit.Options) *audit.Report {
	t.Helper()
	pol, err := policy.Parse([]byte(policySrc))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Run(context.Background(), pol, []audit.Input{{Name: "log", R: strings.NewReader(log), Size: -1}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestLeaseAndTTL replays a handler that outlives its lease and a key that
// comes back after its TTL, by the log's clock.
func TestLeaseAndTTL(t *testing.T) {
	const pol = `{"defaults": {"methods": []}, "rules": [{"route": "POST /p", "ttl": "1m", "lease": "10s"}]}`
	req := func(at, extra string) string {
		return `{"time":"2025-01-06T09:` + at + `Z","method":"POST","path":"/p","headers":{"Idempotency-Key":"k"},"body":{"a":1}` + extra + `}`
	}
	rep := auditString(t, pol, jsonl(
		req("00:00", `,"status":201,"duration":"20s"`), // runs past its lease
		req("00:05", ``), // in flight: 409
		req("00:12", `,"status":201,"duration":"1s"`), // stale: taken over
		req("00:30", ``),              // replay
		req("02:00", `,"status":201`), // after the TTL: a first execution again
	), audit.Options{})
	r := rep.Rules[0]
	want := []audit.Answer{
		{Action: "execute", Reason: "first", Requests: 2},
		{Action: "execute", Reason: "retry", Requests: 1},
		{Action: "reject", Reason: "retry", Status: 409, Problem: "idempotency-key-in-flight", Requests: 1},
		{Action: "replay", Reason: "retry", Status: 201, Requests: 1},
	}
	if diff := cmp.Diff(want, r.Answers); diff != "" {
		t.Errorf("answers mismatch (-want +got):\n%s", diff)
	}
	if r.LateCompletions != 1 || r.Keys != 2 || r.KeysReused != 1 || rep.AssumedStatus != 0 {
		t.Errorf("late completions %d, keys %d, reused %d, assumed %d; want 1, 2, 1, 0", r.LateCompletions, r.Keys, r.KeysReused, rep.AssumedStatus)
	}
}

// TestReorder decides requests in time order within the window, and counts
// as late those beyond it.
func TestReorder(t *testing.T) {
	const pol = `{"defaults": {"methods": []}, "rules": [{"route": "POST /p"}]}`
	req := func(at, key, amount string) string {
		return `{"time":"2025-01-06T09:` + at + `Z","method":"POST","path":"/p","headers":{"Idempotency-Key":"` + key + `"},"body":{"a":` + amount + `}}`
	}
	rep := auditString(t, pol, jsonl(
		req("00:05", "k", "2"), // read first, but later: a mismatch of the next one
		req("00:00", "k", "1"), // within the window: decided first
		req("01:00", "j", "1"),
		req("00:02", "j", "1"), // before a request decided: late
	), audit.Options{ReorderWindow: 30e9})
	r := rep.Rules[0]
	if r.Mismatches != 1 || rep.Late != 1 || rep.LateRequests[0].Line != 4 {
		t.Errorf("mismatches %d, late %d (%v); want 1, 1 at line 4", r.Mismatches, rep.Late, rep.LateRequests)
	}
	if got, want := r.Differences[0].Example, [2]audit.Ref{{Input: "log", Line: 2}, {Input: "log", Line: 1}}; got != want {
		t.Errorf("example = %v, want %v", got, want)
	}
	if rep.AssumedStatus != 2 {
		t.Errorf("assumed status = %d, want 2", rep.AssumedStatus)
	}
}

// TestEnvelope checks what a malformed envelope is reported as.
func TestEnvelope(t *testing.T) {
	const pol = `{"rules": [{"route": "POST /p"}]}`
	for _, tc := range []struct{ name, line, want string }{
		{"UnknownMember", `{"time":"2025-01-06T09:00:00Z","method":"POST","path":"/p","bdy":{}}`, `unknown member "bdy"`},
		{"DuplicateMember", `{"time":"2025-01-06T09:00:00Z","method":"POST","path":"/p","path":"/q"}`, `duplicate member "path"`},
		{"MissingTime", `{"method":"POST","path":"/p"}`, `missing member "time"`},
		{"BadTime", `{"time":"09:00","method":"POST","path":"/p"}`, `"time" is not an RFC 3339 time`},
		{"BadMethod", `{"time":"2025-01-06T09:00:00Z","method":"PO ST","path":"/p"}`, `is not an HTTP token`},
		{"AbsolutePath", `{"time":"2025-01-06T09:00:00Z","method":"POST","path":"https://x/p"}`, `"path" must start with "/"`},
		{"HeaderNumber", `{"time":"2025-01-06T09:00:00Z","method":"POST","path":"/p","headers":{"A":1}}`, `neither a string nor an array`},
		{"Status", `{"time":"2025-01-06T09:00:00Z","method":"POST","path":"/p","status":101}`, `"status" is not a final status`},
		{"Duration", `{"time":"2025-01-06T09:00:00Z","method":"POST","path":"/p","duration":"-1s"}`, `"duration" is not a non-negative`},
		{"NotObject", `{"time":"2025-01-06T09:00:00Z","method":"GET","path":"/"}` + "\n" + `[1,2]`, `not a JSON object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := auditString(t, pol, tc.line+"\n", audit.Options{})
			if rep.Malformed != 1 || !strings.Contains(rep.MalformedRequests[0].Error, tc.want) {
				t.Errorf("malformed %d %+v, want an error with %q", rep.Malformed, rep.MalformedRequests, tc.want)
			}
		})
	}
}

// TestBodies reads a body given as a JSON value and as a string holding
// JSON as the same request, and counts invalid ones.
func TestBodies(t *testing.T) {
	const pol = `{"rules": [{"route": "POST /p", "fingerprint": {"required": ["a"]}}]}`
	req := func(at, body string) string {
		return `{"time":"2025-01-06T09:00:0` + at + `Z","method":"POST","path":"/p","tenant":"t","headers":{"Idempotency-Key":"k"},"body":` + body + `}`
	}
	rep := auditString(t, pol, jsonl(
		req("0", `{"a": 1, "b": [1, 2]}`),
		req("1", `"{\"b\":[1,2.0],\"a\":1}"`),
		req("2", `{"b": 1}`),
		req("3", `"{\"a\":1,\"a\":2}"`),
	), audit.Options{})
	r := rep.Rules[0]
	wantReasons := []audit.Count{{Name: "body is not strict JSON", Count: 1}, {Name: "required value missing: a", Count: 1}}
	if r.Retries != 1 || r.Invalid != 2 || !cmp.Equal(wantReasons, r.InvalidReasons) {
		t.Errorf("retries %d, invalid %d %v; want 1, 2 %v", r.Retries, r.Invalid, r.InvalidReasons, wantReasons)
	}
	if rep.DefaultTenant != 0 {
		t.Errorf("default tenant = %d, want 0", rep.DefaultTenant)
	}
}

// TestTenantHeader keeps two tenants' keys apart and answers 400 without
// the header.
func TestTenantHeader(t *testing.T) {
	const pol = `{"rules": [{"route": "POST /p"}]}`
	req := func(at, tenant, amount string) string {
		h := `"Idempotency-Key":"k"`
		if tenant != "" {
			h += `,"X-Tenant":"` + tenant + `"`
		}
		return `{"time":"2025-01-06T09:00:0` + at + `Z","method":"POST","path":"/p","headers":{` + h + `},"body":{"a":` + amount + `}}`
	}
	rep := auditString(t, pol, jsonl(req("0", "a", "1"), req("1", "b", "2"), req("2", "", "3")), audit.Options{TenantHeader: "X-Tenant"})
	r := rep.Rules[0]
	if r.Keys != 2 || r.Mismatches != 0 || r.Invalid != 1 || rep.TenantHeader != "X-Tenant" {
		t.Errorf("keys %d, mismatches %d, invalid %d; want 2, 0, 1", r.Keys, r.Mismatches, r.Invalid)
	}
}

// TestHostilePairs bounds the analysis: a mismatch that differs in
// thousands of members, or very deep, is counted, not followed.
func TestHostilePairs(t *testing.T) {
	const pol = `{"rules": [{"route": "POST /p"}]}`
	wide := func(v int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range 5000 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"m%d":%d`, i, v+i)
		}
		b.WriteString("}")
		return b.String()
	}
	deep := func(v int) string {
		return strings.Repeat(`{"a":`, 5000) + fmt.Sprint(v) + strings.Repeat("}", 5000)
	}
	req := func(at, body string) string {
		return `{"time":"2025-01-06T09:00:0` + at + `Z","method":"POST","path":"/p","headers":{"Idempotency-Key":"k"},"body":` + body + `}`
	}
	for _, tc := range []struct {
		name       string
		a, b       string
		unanalysed int64
	}{
		{"Wide", wide(0), wide(1), 1},
		{"Deep", deep(0), deep(1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := auditString(t, pol, jsonl(req("0", tc.a), req("1", tc.b)), audit.Options{})
			r := rep.Rules[0]
			if r.Mismatches != 1 || r.Unanalysed != tc.unanalysed || r.Patch != nil || len(r.Differences) > 64 {
				t.Errorf("mismatches %d, unanalysed %d, patch %v, %d differences; want 1, %d, nil, at most 64",
					r.Mismatches, r.Unanalysed, r.Patch, len(r.Differences), tc.unanalysed)
			}
		})
	}
}

// TestWorkers audits a log of many batches with one worker and with
// several: the reports are equal, whatever order the batches are parsed
// in and however their memory is reused.
func TestWorkers(t *testing.T) {
	const pol = `{"defaults": {"methods": []}, "rules": [{"route": "POST /p", "ttl": "1m", "lease": "5s"}]}`
	var b strings.Builder
	for i := range 6000 {
		at := time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * 50 * time.Millisecond)
		key, amount, trace := i/3, i/3, i
		if i%3 == 2 && i%7 == 0 {
			amount++ // a real reuse
		}
		fmt.Fprintf(&b, `{"time":%q,"method":"POST","path":"/p","tenant":"t%d","headers":{"Idempotency-Key":"k%d"},"body":{"amount":%d,"traceId":"x%d"},"status":201,"duration":"80ms"}`+"\n",
			at.Format(time.RFC3339Nano), key%5, key, amount, trace)
	}
	var want []byte
	for _, workers := range []int{1, 2, 7} {
		rep := auditString(t, pol, b.String(), audit.Options{Workers: workers})
		var got bytes.Buffer
		if err := rep.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = got.Bytes()
			if rep.Rules[0].Patch == nil || rep.Rules[0].Keys != 2000 {
				t.Fatalf("keys %d, patch %+v: want 2000 keys and a patch", rep.Rules[0].Keys, rep.Rules[0].Patch)
			}
			continue
		}
		if diff := cmp.Diff(string(want), got.String()); diff != "" {
			t.Errorf("report with %d workers differs (-1 worker +%d):\n%s", workers, workers, diff)
		}
	}
}
