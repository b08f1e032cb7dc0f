package idemhttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// A payments API behind the middleware: the retry of a payment is
// answered from the record, the reuse of its key for another amount is
// refused, and the handler runs once.
func Example() {
	pol, err := policy.Parse([]byte(`{
	  "rules": [{"route": "POST /api/payments",
	             "fingerprint": {"intent": ["orderId", "amountCents", "currency"]},
	             "store_intent": true}]
	}`))
	if err != nil {
		panic(err)
	}
	st, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		panic(err)
	}
	mw, err := idemhttp.New(pol, st, idemhttp.Options{
		// The tenant is whoever the API key belongs to; here, a header.
		Tenant: func(r *http.Request) (string, bool) {
			t := r.Header.Get("X-Account")
			return t, t != ""
		},
	})
	if err != nil {
		panic(err)
	}

	charges := 0
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/payments", func(w http.ResponseWriter, r *http.Request) {
		charges++ // the side effect that must happen once
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":"pay_%d"}`, charges)
	})
	srv := httptest.NewServer(mw.Wrap(mux))
	defer srv.Close()

	pay := func(body string) {
		req, _ := http.NewRequest("POST", srv.URL+"/api/payments", strings.NewReader(body))
		req.Header.Set("X-Account", "acme")
		req.Header.Set("Idempotency-Key", "abc-123")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		respBody, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), string(respBody))
	}
	pay(`{"orderId":"ord_8842","amountCents":1000,"currency":"EUR"}`)
	pay(`{"currency":"EUR","amountCents":1000.0,"orderId":"ord_8842"}`)
	pay(`{"orderId":"ord_8842","amountCents":1000000,"currency":"EUR"}`)
	fmt.Println("charges:", charges)
	// Output:
	// 201  {"id":"pay_1"}
	// 201 true {"id":"pay_1"}
	// 422  {"type":"https://idemprint.dev/problems/idempotency-key-reuse","title":"Idempotency key reused with a different request","status":422,"detail":"This key was first used with a request that differs at amountCents. Retry with the original request, or use a new key for a new operation.","differing_paths":["amountCents"]}
	// charges: 1
}
