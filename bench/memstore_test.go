package bench

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// A memPairer reserves a key and completes it, in memory. Both take the
// same records, built the same way, so that what differs is the store.
type memPairer struct {
	name string
	new  func(tb testing.TB) func(ctx context.Context, res store.Reservation, done policy.Record) error
}

var memPairers = []memPairer{
	{"idemprint-memory", func(tb testing.TB) func(context.Context, store.Reservation, policy.Record) error {
		// Keys are never reused: room for more than any run makes.
		s, err := store.NewMemory(store.MemoryOptions{MaxRecords: 1 << 26})
		if err != nil {
			tb.Fatal(err)
		}
		return func(ctx context.Context, res store.Reservation, done policy.Record) error {
			out, err := s.Reserve(ctx, res)
			if err != nil {
				return err
			}
			if !out.Reserved {
				return errTaken
			}
			done.Generation = out.Record.Generation + 1
			return s.Write(ctx, done, store.Guard{})
		}
	}},
	{"mutex-map", func(testing.TB) func(context.Context, store.Reservation, policy.Record) error {
		// The floor: one map behind one mutex, the same two steps (take
		// the key unless a record binds it; replace the reservation if
		// it is still the one taken), no sharding, sweeping, limit,
		// validation or copies.
		var (
			mu   sync.Mutex
			recs = map[string]*policy.Record{}
			gen  uint64
		)
		return func(ctx context.Context, res store.Reservation, done policy.Record) error {
			key := res.Record.StorageKey
			now := time.Now()
			mu.Lock()
			if cur := recs[key]; cur != nil && cur.Binds(now) {
				mu.Unlock()
				return errTaken
			}
			gen++
			rec := res.Record
			rec.Generation, rec.LeaseExpiry, rec.ExpiresAt = gen, now.Add(res.Lease), now.Add(res.TTL)
			recs[key] = &rec
			mu.Unlock()

			done.Generation = rec.Generation + 1
			mu.Lock()
			defer mu.Unlock()
			if cur := recs[key]; cur == nil || cur.Generation != done.Generation-1 {
				return errTaken
			}
			recs[key] = &done
			return nil
		}
	}},
}

var errTaken = errors.New("the benchmark's fresh key was taken")

// BenchmarkMemoryPairs measures reserve+complete pairs, one fresh key
// each, on all GOMAXPROCS (run it with -cpu 1,2 to see it scale): through
// store.Memory, and through a map behind a mutex doing the same two steps
// with the same records, in the same run. Both build each key's storage
// key and records alike.
func BenchmarkMemoryPairs(b *testing.B) {
	rule, req := redisRequest(b)
	d, err := rule.Decide(req, nil, nil, time.Now())
	if err != nil || d.Reserve == nil {
		b.Fatalf("Decide = %v, %v", d.Action, err)
	}
	done, err := rule.Complete(d.Reserve, redisResponse, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	// The storage key ends with the client's key, after its length: each
	// pair puts its own there.
	k0 := req.Key[0]
	prefix, ok := strings.CutSuffix(d.Reserve.StorageKey, strconv.Itoa(len(k0))+":"+k0)
	if !ok {
		b.Fatalf("storage key %q does not end with the key %q", d.Reserve.StorageKey, k0)
	}
	for _, p := range memPairers {
		b.Run("impl="+p.name, func(b *testing.B) {
			pair := p.new(b)
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				buf := make([]byte, 0, 64)
				res := store.Reservation{Record: *d.Reserve, Lease: rule.Lease(), TTL: rule.TTL()}
				for pb.Next() {
					k := "k" + strconv.FormatInt(next.Add(1), 36)
					buf = append(append(strconv.AppendInt(append(buf[:0], prefix...), int64(len(k)), 10), ':'), k...)
					// The record's key is its storage key's, as in the
					// engine's records.
					res.Record.StorageKey, res.Record.Key = string(buf), k
					d := done
					d.StorageKey, d.Key = res.Record.StorageKey, k
					// Completed now, as the engine completes a record:
					// it ends a TTL from its completion, after its
					// reservation's end.
					d.ExpiresAt = time.Now().Add(rule.TTL())
					if err := pair(ctx, res, d); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}
