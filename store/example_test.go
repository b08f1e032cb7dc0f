package store_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// The flow a middleware runs for each request: Acquire decides with the
// store's records, the handler runs only when the decision says so, and
// its response is completed into the record that retries replay.
func ExampleAcquire() {
	pol, err := policy.Parse([]byte(`{"rules": [{"route": "POST /v1/payments", "fingerprint": {"intent": ["amountCents", "currency"]}}]}`))
	if err != nil {
		panic(err)
	}
	rule, _ := pol.Match("POST", "/v1/payments")
	st, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	send := func(body string) {
		req, err := rule.NewRequest("acme", fingerprint.Request{
			Method: "POST", Path: "/v1/payments",
			Header: http.Header{"Idempotency-Key": {"abc-123"}},
			Body:   []byte(body),
		})
		if err != nil {
			panic(err)
		}
		c, err := store.Acquire(ctx, st, rule, req)
		if err != nil {
			panic(err) // a store fault: answer 503, never execute unguarded
		}
		switch d := c.Decision; d.Action {
		case policy.Execute, policy.ExecuteAsNew:
			resp := policy.Response{Status: 201, Body: []byte(`{"id":"pay_1"}`)} // the handler runs
			done, err := rule.Complete(&c.Record, resp, c.StoreTime())
			if err != nil {
				panic(err)
			}
			if err := st.Write(ctx, done, store.Guard{}); err != nil {
				panic(err) // ErrConflict: the reservation was taken over; nothing is stored
			}
			fmt.Println(d.Action, "→", resp.Status, "in", c.Calls, "round trip")
		default:
			fmt.Println(d.Action, "→", d.Response.Status, "in", c.Calls, "round trip")
		}
	}
	send(`{"amountCents": 1000, "currency": "EUR"}`)
	send(`{"currency":"EUR","amountCents":1000.0}`) // the same payment, re-spelled
	send(`{"amountCents": 1000000, "currency": "EUR"}`)
	// Output:
	// execute → 201 in 1 round trip
	// replay → 201 in 1 round trip
	// reject → 422 in 1 round trip
}
