package idemhttp_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// TestEventKept checks that an Event a hook keeps, as it was given, still
// says what it said once later requests were answered: the Event is the
// hook's own value, not the middleware's pooled one.
func TestEventKept(t *testing.T) {
	pol, err := policy.Parse([]byte(paymentsPolicy))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := store.NewMemory(store.MemoryOptions{})
	var kept []idemhttp.Event
	mw, err := idemhttp.New(pol, st, idemhttp.Options{
		SingleTenant: "acme",
		Logger:       slog.New(slog.DiscardHandler),
		OnDecision:   func(ev idemhttp.Event) { kept = append(kept, ev) },
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(201) }))
	for _, tc := range []struct{ key, body string }{
		{"k-1", `{"amountCents":1000}`}, // stored
		{"k-1", `{"amountCents":1000}`}, // replayed
		{"k-1", `{"amountCents":9}`},    // rejected
		{"", `{"amountCents":9}`},       // rejected: no key
	} {
		r := httptest.NewRequest("POST", "/api/payments", strings.NewReader(tc.body))
		if tc.key != "" {
			r.Header.Set("Idempotency-Key", tc.key)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	type summary struct {
		Outcome idemhttp.Outcome
		Action  policy.Action
		Reason  policy.Reason
		Status  int
		Tenant  string
		Keyed   bool
	}
	want := []summary{
		{idemhttp.Stored, policy.Execute, policy.ReasonFirst, 201, "acme", true},
		{idemhttp.Replayed, policy.Replay, policy.ReasonRetry, 201, "acme", true},
		{idemhttp.Rejected, policy.Reject, policy.ReasonMismatch, 422, "acme", true},
		{idemhttp.Rejected, policy.Reject, policy.ReasonMissingKey, 400, "acme", false},
	}
	if len(kept) != len(want) {
		t.Fatalf("%d events kept, want %d", len(kept), len(want))
	}
	for i, ev := range kept {
		got := summary{ev.Outcome, ev.Action, ev.Reason, ev.Status, ev.Tenant, ev.KeyHash() != ""}
		if got != want[i] {
			t.Errorf("kept event %d = %+v, want %+v", i, got, want[i])
		}
	}
	if kept[0].KeyHash() != kept[1].KeyHash() || kept[0].Fingerprint != kept[1].Fingerprint || kept[0].Fingerprint == kept[2].Fingerprint {
		t.Errorf("kept events' keys and fingerprints do not tell the requests apart")
	}
}
