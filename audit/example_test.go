package audit_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/idemprint/idemprint/audit"
	"github.com/idemprint/idemprint/policy"
)

// A payment is retried with a new trace ID, and its key is later reused
// for another amount. The audit tells the first from the second and
// suggests ignoring the trace ID.
func ExampleRun() {
	pol, err := policy.Parse([]byte(`{"rules": [{"route": "POST /v1/payments"}]}`))
	if err != nil {
		panic(err)
	}
	log := `{"time":"2025-01-06T09:00:00Z","method":"POST","path":"/v1/payments","headers":{"Idempotency-Key":"k1"},"body":{"amount":10,"traceId":"a"},"status":201}
{"time":"2025-01-06T09:00:02Z","method":"POST","path":"/v1/payments","headers":{"Idempotency-Key":"k1"},"body":{"amount":10,"traceId":"b"},"status":201}
{"time":"2025-01-06T09:05:00Z","method":"POST","path":"/v1/payments","headers":{"Idempotency-Key":"k1"},"body":{"amount":99,"traceId":"c"},"status":201}
`
	rep, err := audit.Run(context.Background(), pol, []audit.Input{{Name: "log", R: strings.NewReader(log), Size: -1}}, audit.Options{})
	if err != nil {
		panic(err)
	}
	r := rep.Rules[0]
	fmt.Println("mismatches:", r.Mismatches)
	for _, d := range r.Differences {
		fmt.Printf("differs at %s in %d, first %s and %s\n", d.Path, d.Mismatches, d.Example[0], d.Example[1])
	}
	for _, s := range r.Suggestions {
		fmt.Printf("ignore %q: varies in %d of %d pairs, removes %d\n", s.Ignore, s.Varies, s.Pairs, s.Removes)
	}
	fmt.Printf("patch %s: %d of %d mismatches become retries\n", r.Patch.Pointer, r.Patch.Removes, r.Mismatches)
	// Output:
	// mismatches: 2
	// differs at traceId in 2, first log:1 and log:2
	// differs at amount in 1, first log:1 and log:3
	// ignore "traceId": varies in 2 of 2 pairs, removes 1
	// patch /rules/0/fingerprint: 1 of 2 mismatches become retries
}
