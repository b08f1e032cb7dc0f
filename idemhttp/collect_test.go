package idemhttp_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// A Middleware that is no longer used, and its store with every record
// in it, can be collected at once: the goroutine that renews leases,
// which outlives the last request by many ticks, must not keep them.
// (It did: with the default 30 s lease, for up to 500 s.)
func TestMiddlewareCollected(t *testing.T) {
	pol, err := policy.Parse([]byte(paymentsPolicy))
	if err != nil {
		t.Fatal(err)
	}
	collected := make(chan struct{})
	func() {
		st, err := store.NewMemory(store.MemoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		runtime.AddCleanup(st, func(ch chan struct{}) { close(ch) }, collected)
		mw, err := idemhttp.New(pol, st, idemhttp.Options{SingleTenant: "acme", Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		h := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) }))
		r := httptest.NewRequest("POST", "/api/payments", strings.NewReader(`{"amountCents":1000}`))
		r.Header.Set("Idempotency-Key", "abc-123")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusCreated {
			t.Fatalf("status %d, want 201", w.Code)
		}
	}()
	deadline := time.After(10 * time.Second)
	for {
		runtime.GC()
		select {
		case <-collected:
			return
		case <-deadline:
			t.Fatal("the store of a dropped Middleware was not collected in 10 s")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
