package idemclient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/idemprint/idemprint/idemclient"
	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// A payment whose response is lost on its way back: the client sends it
// again with the same key and the same bytes, the server replays its
// record, and the card is charged once. A later attempt to reuse the key
// for another amount is refused, and never retried.
func Example() {
	// The server: a payments API behind the idempotency middleware.
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
	mw, err := idemhttp.New(pol, st, idemhttp.Options{SingleTenant: "acme"})
	if err != nil {
		panic(err)
	}
	var charges atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/payments", func(w http.ResponseWriter, r *http.Request) {
		n := charges.Add(1) // the side effect that must happen once
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":"pay_%d"}`, n)
	})
	api := mw.Wrap(mux)
	// The network: the first answer is lost after the payment executed.
	var lost atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lost.CompareAndSwap(false, true) {
			api.ServeHTTP(httptest.NewRecorder(), r)
			panic(http.ErrAbortHandler) // the connection drops: no answer
		}
		api.ServeHTTP(w, r)
	}))
	defer srv.Close()

	// The client: every request gets a key, kept for its retries.
	tr, err := idemclient.New(http.DefaultTransport, idemclient.Options{
		BaseDelay: 10 * time.Millisecond,
		OnAttempt: func(a idemclient.Attempt) {
			if a.Err != nil {
				fmt.Printf("attempt %d: no answer, retry %v\n", a.N, a.Retry)
				return
			}
			fmt.Printf("attempt %d: %d, retry %v\n", a.N, a.Status, a.Retry)
		},
	})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: tr}

	// One operation: its key is in op once the first attempt is made
	// (persist it to retry the payment after a restart).
	op := &idemclient.Operation{}
	ctx := idemclient.WithOperation(context.Background(), op)
	pay := func(body string) {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/api/payments", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if errors.Is(err, idemclient.ErrKeyReused) {
			var e *idemclient.Error
			errors.As(err, &e)
			fmt.Println("refused:", e.Problem.Title)
			return
		}
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), string(b))
	}
	pay(`{"orderId":"ord_8842","amountCents":1000,"currency":"EUR"}`)
	pay(`{"orderId":"ord_8842","amountCents":1000000,"currency":"EUR"}`) // the same operation's key, another amount
	fmt.Println("charges:", charges.Load(), "key kept:", op.Key != "")
	// Output:
	// attempt 1: no answer, retry true
	// attempt 2: 201, retry false
	// 201 true {"id":"pay_1"}
	// attempt 1: 422, retry false
	// refused: Idempotency key reused with a different request
	// charges: 1 key kept: true
}
