package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/internal/testenv"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/redisstore"
	"github.com/redis/go-redis/v9"
)

// redisCallers is how many requests run at once against Redis.
const redisCallers = 32

const redisPolicy = `{
  "defaults": {"ttl": "30s", "lease": "10s", "methods": []},
  "rules": [{"route": "POST /v1/payments", "fingerprint": {"intent": ["amount", "currency"]}}]
}`

// A pairer is one way to reserve a key and then complete it. setup
// returns the pair of calls for the i-th key and the bytes both calls
// send as values (the payloads), which every pairer sends alike.
type pairer struct {
	name  string
	setup func(tb testing.TB, client *redis.Client, prefix string) (pair func(ctx context.Context, i int64) error, payload int)
}

var redisResponse = policy.Response{
	Status: 201,
	Header: http.Header{"Content-Type": {"application/json"}, "Location": {"/v1/payments/pay_8f2a"}},
	Body:   bytes.Repeat([]byte(`{"id":"pay_8f2a","status":"succeeded"}`), 7), // 266 bytes
}

var pairers = []pairer{
	{"idemprint-redisstore", func(tb testing.TB, client *redis.Client, prefix string) (func(context.Context, int64) error, int) {
		// What the middleware does: Acquire (one script), then the
		// handler's response completes the reservation (another).
		s, err := redisstore.New(client, redisstore.Options{Prefix: prefix})
		if err != nil {
			tb.Fatal(err)
		}
		rule, base := redisRequest(tb)
		pair := func(ctx context.Context, i int64) error {
			req := base
			req.Key = []string{"k" + strconv.FormatInt(i, 10)}
			c, err := store.Acquire(ctx, s, rule, req)
			if err != nil {
				return err
			}
			done, err := rule.Complete(&c.Record, redisResponse, c.Now)
			if err != nil {
				return err
			}
			return s.Write(ctx, done, store.Guard{})
		}
		reserve, complete := redisPayloads(tb, rule, base)
		return pair, reserve + complete
	}},
	{"raw-setnx", func(tb testing.TB, client *redis.Client, prefix string) (func(context.Context, int64) error, int) {
		// The floor: a lock taken with SET NX PX, then the response
		// stored over it with SET XX PX, values as long as the store's
		// payloads. No fencing, no second key, no clock but the TTLs.
		rule, base := redisRequest(tb)
		n1, n2 := redisPayloads(tb, rule, base)
		v1, v2 := bytes.Repeat([]byte{'r'}, n1), bytes.Repeat([]byte{'c'}, n2)
		pair := func(ctx context.Context, i int64) error {
			k := prefix + "k" + strconv.FormatInt(i, 10)
			if err := client.SetNX(ctx, k, v1, rule.Lease()).Err(); err != nil {
				return err
			}
			return client.SetXX(ctx, k, v2, rule.TTL()).Err()
		}
		return pair, n1 + n2
	}},
}

// redisRequest returns the benchmark's rule and a request of it without a
// key.
func redisRequest(tb testing.TB) (*policy.Rule, policy.Request) {
	pol, err := policy.Parse([]byte(redisPolicy))
	if err != nil {
		tb.Fatal(err)
	}
	rule, _ := pol.Match("POST", "/v1/payments")
	req, err := rule.NewRequest("acme", fingerprint.Request{
		Method: "POST", Path: "/v1/payments",
		Header: http.Header{"Idempotency-Key": {"k0"}},
		Body:   []byte(`{"amount":1250,"currency":"EUR","customer":"cus_91"}`),
	})
	if err != nil {
		tb.Fatal(err)
	}
	return rule, req
}

// redisPayloads returns the payload lengths of the reservation and the
// completion that the store writes for a key like the benchmark's.
func redisPayloads(tb testing.TB, rule *policy.Rule, req policy.Request) (reserve, complete int) {
	req.Key = []string{"k" + strconv.Itoa(1e6)}
	d, err := rule.Decide(req, nil, nil, time.Time{})
	if err != nil || d.Reserve == nil {
		tb.Fatalf("Decide = %v, %v", d.Action, err)
	}
	done, err := rule.Complete(d.Reserve, redisResponse, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	return len(store.AppendPayload(nil, d.Reserve)), len(store.AppendPayload(nil, &done))
}

// BenchmarkRedisPairs measures reserve+complete pairs at 32 concurrent
// callers on the Redis server of IDEMPRINT_TEST_REDIS: through idemprint's
// store, and as raw SET NX PX + SET XX pairs of the same value sizes on
// the same server, in the same run. B/s counts the values sent, the same
// for both, so its ratio is the ratio of pairs per second (also reported
// as pairs/s).
func BenchmarkRedisPairs(b *testing.B) {
	url := testenv.Lookup(b, testenv.Redis, "redis://127.0.0.1:6379/0")
	opts, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	opts.PoolSize = 2 * redisCallers
	opts.ContextTimeoutEnabled = true
	client := redis.NewClient(opts)
	defer client.Close()
	var r [6]byte
	rand.Read(r[:])
	run := "idemprint-bench:" + hex.EncodeToString(r[:]) + ":"
	for _, p := range pairers {
		b.Run("callers32/"+p.name, func(b *testing.B) {
			prefix := run + p.name + ":" + strconv.Itoa(b.N) + ":"
			pair, payload := p.setup(b, client, prefix)
			defer deleteKeys(b, client, prefix)
			b.SetBytes(int64(payload))
			b.ReportAllocs()
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, redisCallers)
			b.ResetTimer()
			start := time.Now()
			for range redisCallers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx := context.Background()
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						if err := pair(ctx, i); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pairs/s")
		})
	}
}

// deleteKeys deletes the keys under prefix, which has no glob characters.
func deleteKeys(tb testing.TB, client *redis.Client, prefix string) {
	ctx := context.Background()
	iter := client.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var batch []string
	flush := func() {
		if len(batch) > 0 {
			if err := client.Unlink(ctx, batch...).Err(); err != nil {
				tb.Error(err)
			}
			batch = batch[:0]
		}
	}
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 1000 {
			flush()
		}
	}
	flush()
	if err := iter.Err(); err != nil {
		tb.Error(err)
	}
}
