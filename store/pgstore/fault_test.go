package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/pgstore"
)

// Bounds of the fault test: it stops at whichever comes first.
const (
	faultCalls   = 3000
	faultTime    = 4 * time.Second
	faultWorkers = 4
	killEvery    = 25 * time.Millisecond
)

// faultKey is what the fault test knows of one key: its reservation, and
// its completion when the store acknowledged it.
type faultKey struct {
	res       policy.Record
	completed *policy.Record
}

// The test's own backends are terminated (pg_terminate_backend, by their
// application_name, on this machine's server) again and again while
// workers run Acquire and completions. Every call succeeds or fails with
// a *store.Error; every row left decodes, with the generation of what was
// acknowledged (or, for a write whose reply was lost, of the write); and
// the same Store works again once the terminations stop.
func TestFaultTerminatedBackends(t *testing.T) {
	var b [6]byte
	rand.Read(b[:])
	app := "idemprint-pgstore-fault-" + hex.EncodeToString(b[:])
	pool := testPool(t, app, faultWorkers)
	s := newStore(t, pool, storeOptions())
	killer := testPool(t, app+"-killer", 1)
	rule := payRule(t)

	var (
		calls  atomic.Int64
		kills  atomic.Int64
		mu     sync.Mutex
		kinds  = map[string]int{}
		keys   = map[string]*faultKey{}
		wg     sync.WaitGroup
		ctx    = context.Background()
		stop   = make(chan struct{})
		begin  = time.Now()
		failed = func(err error) {
			var se *store.Error
			if !errors.As(err, &se) {
				t.Errorf("an error that is not a *store.Error: %T %v", err, err)
				return
			}
			if !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("an error of kind %v, want ErrUnavailable: %v", se.Kind, err)
			}
			mu.Lock()
			kinds[se.Op+": "+se.Kind.Error()]++
			mu.Unlock()
		}
	)
	// The killer terminates one backend of the workers' pool at a time.
	go func() {
		tick := time.NewTicker(killEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			var n int64
			err := killer.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM
				(SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY random() LIMIT 1) one`, app).Scan(&n)
			if err != nil {
				t.Errorf("terminating the test's backends: %v", err)
				return
			}
			kills.Add(n)
		}
	}()
	for w := range faultWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Since(begin) < faultTime; i++ {
				if calls.Load() >= faultCalls {
					return
				}
				req := payRequest(t, rule, fmt.Sprintf("w%d-%d", w, i))
				c, err := store.Acquire(ctx, s, rule, req)
				calls.Add(int64(max(c.Calls, 1)))
				if err != nil {
					failed(err)
					continue
				}
				if c.Decision.Action != policy.Execute {
					t.Errorf("a fresh key = %v, want execute", c.Decision.Action)
					continue
				}
				fk := &faultKey{res: c.Record}
				mu.Lock()
				keys[c.Record.StorageKey] = fk
				mu.Unlock()
				done, err := rule.Complete(&c.Record, policy.Response{Status: 201, Body: []byte(req.Key[0])}, c.Now)
				if err != nil {
					t.Error(err)
					return
				}
				// A completion that failed is retried, as a caller would:
				// a write whose reply was lost finds itself stored.
				for range 3 {
					err = s.Write(ctx, done, store.Guard{})
					calls.Add(1)
					if err == nil {
						break
					}
					failed(err)
				}
				if err != nil {
					continue
				}
				mu.Lock()
				fk.completed = &done
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	elapsed := time.Since(begin)

	// Every row decodes, and holds what was acknowledged.
	rows, err := killer.Query(ctx, "SELECT storage_key FROM "+s.Table())
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for rows.Next() {
		var k []byte
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, string(k))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	unknown := 0
	for _, k := range stored {
		rec := readWithRetry(t, s, k)
		fk := keys[k]
		switch {
		case rec == nil:
			t.Errorf("a stored row reads as no record")
		case fk == nil: // reserved, but the reply was lost
			unknown++
			if rec.State != policy.StateInFlight {
				t.Errorf("a reservation whose reply was lost is %v, want in flight", rec.State)
			}
		case fk.completed != nil:
			if rec.State != policy.StateCompleted || rec.Generation != fk.res.Generation+1 || string(rec.Body) != string(fk.completed.Body) {
				t.Errorf("an acknowledged completion reads as %v generation %d body %q, want completed generation %d body %q",
					rec.State, rec.Generation, rec.Body, fk.res.Generation+1, fk.completed.Body)
			}
		default: // the completion's reply was lost, or it never ran
			if !(rec.State == policy.StateInFlight && rec.Generation == fk.res.Generation ||
				rec.State == policy.StateCompleted && rec.Generation == fk.res.Generation+1) {
				t.Errorf("a key whose completion failed reads as %v generation %d, want in flight %d or completed %d",
					rec.State, rec.Generation, fk.res.Generation, fk.res.Generation+1)
			}
		}
	}
	for k, fk := range keys {
		if fk.completed != nil && !contains(stored, k) {
			t.Errorf("an acknowledged completion is missing")
		}
	}

	// The same Store works again: at most one failure per pooled
	// connection that was terminated while idle.
	recovered := false
	for range faultWorkers + 1 {
		if s.Ping(ctx) == nil {
			recovered = true
			break
		}
	}
	if !recovered {
		t.Fatal("the store does not answer after the terminations stopped")
	}
	for i := range 20 {
		req := payRequest(t, rule, fmt.Sprintf("after-%d", i))
		c, err := store.Acquire(ctx, s, rule, req)
		if err != nil || c.Decision.Action != policy.Execute {
			t.Fatalf("Acquire after the terminations = %v, %v", c.Decision.Action, err)
		}
		done, _ := rule.Complete(&c.Record, policy.Response{Status: 201}, c.Now)
		if err := s.Write(ctx, done, store.Guard{}); err != nil {
			t.Fatalf("completion after the terminations: %v", err)
		}
	}

	var summary []string
	errCount := 0
	for k, n := range kinds {
		summary = append(summary, fmt.Sprintf("%s %d", k, n))
		errCount += n
	}
	sort.Strings(summary)
	t.Logf("%d calls in %v, %d backends terminated, %d errors (%s), %d rows, %d reservations whose reply was lost",
		calls.Load(), elapsed.Round(time.Millisecond), kills.Load(), errCount, strings.Join(summary, ", "), len(stored), unknown)
	if kills.Load() == 0 {
		t.Error("no backend was terminated: the test tested nothing")
	}
}

// readWithRetry reads a key, trying again after an ErrUnavailable from a
// connection terminated while idle in the pool.
func readWithRetry(t *testing.T, s *pgstore.Store, key string) *policy.Record {
	t.Helper()
	for attempt := 0; ; attempt++ {
		rec, err := s.Read(context.Background(), key)
		if err == nil {
			return rec
		}
		if !errors.Is(err, store.ErrUnavailable) || attempt == faultWorkers {
			t.Fatalf("Read after the terminations: %v", err)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// payRule returns a rule that rejects a mismatch.
func payRule(t testing.TB) *policy.Rule {
	t.Helper()
	pol, err := policy.Parse([]byte(`{
  "defaults": {"ttl": "1h", "lease": "30s", "methods": []},
  "rules": [{"route": "POST /pay", "fingerprint": {"intent": ["amount"]}}]
}`))
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := pol.Match("POST", "/pay")
	return rule
}

func payRequest(t testing.TB, rule *policy.Rule, key string) policy.Request {
	t.Helper()
	req, err := rule.NewRequest("acme", fingerprint.Request{
		Method: "POST", Path: "/pay",
		Header: http.Header{"Idempotency-Key": {key}},
		Body:   []byte(`{"amount":1}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return req
}
