package idemhttp_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// reusableBody is a request body that is reset instead of allocated.
type reusableBody struct{ strings.Reader }

func (*reusableBody) Close() error { return nil }

// The middleware's own allocations per request, with the memory store and
// a handler that allocates nothing: the budgets of issue 10 (at most 20
// per request, a benchmark's own included) with room for the benchmark.
func TestAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled values")
	}
	pol, err := policy.Parse([]byte(benchPolicy))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := store.NewMemory(store.MemoryOptions{})
	mw, err := idemhttp.New(pol, st, idemhttp.Options{
		SingleTenant: "acme",
		Logger:       slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	contentType, answer := []string{"application/json"}, []byte(`{"id":"pay_1"}`)
	h := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = contentType
		w.WriteHeader(201)
		w.Write(answer)
	}))
	body := &reusableBody{}
	r := httptest.NewRequest("POST", "/api/payments", body)
	r.Header.Set("Idempotency-Key", "k")
	w := &discard{h: http.Header{}}
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	serve := func(key string) {
		r.Header["Idempotency-Key"][0] = key
		body.Reset(firstPayment)
		r.Body, r.ContentLength = body, int64(len(firstPayment))
		clear(w.h)
		h.ServeHTTP(w, r)
	}
	i := 0
	for _, tc := range []struct {
		name   string
		f      func()
		budget float64
		reason string
	}{
		{"Execute", func() { serve(keys[i%len(keys)]); i++ }, 9,
			"stored header (3), reservation, storage key (Decide's and StorageKeys', as Request keeps no cache), body reader and its GetBody, stored body, the store's growth"},
		{"Replay", func() { serve("k0") }, 9,
			"first decision's reservation, storage key (built by each Decide and by StorageKeys, as Request keeps no cache), record copy, replayed header (4), Content-Length"},
	} {
		if got := testing.AllocsPerRun(200, tc.f); got > tc.budget {
			t.Errorf("%s: %v allocations per request, want at most %v: %s", tc.name, got, tc.budget, tc.reason)
		}
	}
}
