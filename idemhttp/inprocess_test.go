package idemhttp_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// deadlineStore counts the writes that come with a deadline.
type deadlineStore struct {
	store.Store
	deadlines atomic.Int32
}

func (s *deadlineStore) Write(ctx context.Context, rec policy.Record, g store.Guard) error {
	if _, ok := ctx.Deadline(); ok {
		s.deadlines.Add(1)
	}
	return s.Store.Write(ctx, rec, g)
}

// unwrapping is a deadlineStore that says what it wraps.
type unwrapping struct{ *deadlineStore }

func (s unwrapping) Unwrap() store.Store { return s.Store }

// A store in another process gets a deadline for the completion of a
// record; a store.Memory, even behind a wrapper that says it wraps one,
// needs none.
func TestCompletionDeadline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		unwrap bool
		want   int32
	}{
		{"Opaque", false, 1},
		{"UnwrapsToMemory", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := &deadlineStore{Store: memory(t)}
			var st store.Store = ds
			if tc.unwrap {
				st = unwrapping{ds}
			}
			a := newApp(t, st, paymentsPolicy, idemhttp.Options{})
			if w := a.send("acme", "k", firstPayment); w.Code != 201 {
				t.Fatalf("answer %d %s", w.Code, w.Body)
			}
			if got := ds.deadlines.Load(); got != tc.want {
				t.Errorf("writes with a deadline = %d, want %d", got, tc.want)
			}
		})
	}
}
