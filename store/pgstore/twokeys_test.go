package pgstore_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/internal/testenv"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/pgstore"
)

// newRule returns the rule of a policy that executes a mismatch as a new
// operation.
func newRule(t testing.TB) *policy.Rule {
	t.Helper()
	pol, err := policy.Parse([]byte(`{
  "defaults": {"ttl": "1h", "lease": "30s", "methods": []},
  "rules": [{"route": "POST /new", "fingerprint": {"intent": ["amount"]}, "on_mismatch": "new"}]
}`))
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := pol.Match("POST", "/new")
	return rule
}

func newRequest(t testing.TB, rule *policy.Rule, tenant, key string, amount int) policy.Request {
	t.Helper()
	req, err := rule.NewRequest(tenant, fingerprint.Request{
		Method: "POST", Path: "/new",
		Header: http.Header{"Idempotency-Key": {key}},
		Body:   []byte(`{"amount":` + strconv.Itoa(amount) + `}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func reservation(t testing.TB, rule *policy.Rule, req policy.Request) store.Reservation {
	t.Helper()
	d, err := rule.Decide(req, nil, nil, time.Time{})
	if err != nil || d.Action != policy.Execute {
		t.Fatalf("Decide without records = %v, %v", d.Action, err)
	}
	_, nk, err := rule.StorageKeys(req)
	if err != nil {
		t.Fatal(err)
	}
	return store.Reservation{Record: *d.Reserve, Lease: rule.Lease(), TTL: rule.TTL(), NewIdentity: nk}
}

// startRound reserves the key of a round for request a and returns
// request b, which reuses the key with another body, and a's reservation.
func startRound(t *testing.T, s store.Store, rule *policy.Rule, round int) (b policy.Request, first store.Outcome) {
	t.Helper()
	key := "k" + strconv.Itoa(round)
	a := newRequest(t, rule, "acme", key, 10)
	first, err := s.Reserve(context.Background(), reservation(t, rule, a))
	if err != nil || !first.Reserved {
		t.Fatalf("round %d: reserving a: %v, %v", round, first.Reserved, err)
	}
	return newRequest(t, rule, "acme", key, 20), first
}

// stressRounds and stressTime bound the two-key stress tests.
const (
	stressRounds = 300
	stressTime   = 20 * time.Second
)

// The race the store's locking exists for, played directly: request b
// executes as new under its new identity N, guarded by "a's reservation
// under the primary key P still binds with generation g", while a's
// holder releases P and b's retry reserves P because P stopped binding.
// The two writes must never both succeed. Each round starts both sides
// together, on a key of its own.
func TestTwoKeysRaceDirect(t *testing.T) {
	pool := testPool(t, "idemprint-pgstore-twokeys", 8)
	s := newStore(t, pool, storeOptions())
	rule := newRule(t)
	ctx := context.Background()
	deadline := time.Now().Add(stressTime)
	var both, asNew, reserved, rounds int
	for round := 0; round < stressRounds && time.Now().Before(deadline); round++ {
		rounds++
		b, first := startRound(t, s, rule, round)
		// b's decision on a's reservation: execute as new, guarded by it.
		d, err := rule.Decide(b, &first.Record, nil, first.Now)
		if err != nil || d.Action != policy.ExecuteAsNew {
			t.Fatalf("round %d: b's decision = %v, %v; want execute-as-new", round, d.Action, err)
		}
		guard := store.Guard{StorageKey: first.Record.StorageKey, Generation: first.Record.Generation}
		released, err := rule.Release(&first.Record)
		if err != nil {
			t.Fatal(err)
		}
		var (
			wg           sync.WaitGroup
			start        = make(chan struct{})
			wroteN       bool
			reservedP    bool
			errN, errP   error
			releaseError error
		)
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			errN = s.Write(ctx, *d.Reserve, guard)
			wroteN = errN == nil
			if errors.Is(errN, store.ErrConflict) {
				errN = nil
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			if releaseError = s.Write(ctx, released, store.Guard{}); releaseError != nil {
				return
			}
			out, err := s.Reserve(ctx, reservation(t, rule, b))
			reservedP, errP = out.Reserved, err
		}()
		close(start)
		wg.Wait()
		if errN != nil || errP != nil || releaseError != nil {
			t.Fatalf("round %d: errors: new identity %v, release %v, reserve %v", round, errN, releaseError, errP)
		}
		switch {
		case wroteN && reservedP:
			both++
		case wroteN:
			asNew++
		case reservedP:
			reserved++
		}
	}
	t.Logf("%d rounds in which b ran under both keys, %d under its new identity, %d under the primary key, of %d", both, asNew, reserved, rounds)
	if both > 0 {
		t.Errorf("in %d of %d rounds request b ran under both of its storage keys", both, rounds)
	}
	if asNew+reserved+both != rounds {
		t.Errorf("in %d of %d rounds request b ran under neither key", rounds-asNew-reserved-both, rounds)
	}
}

// The same race through Acquire, with several retries of b racing a's
// release, a's completion with an uncached status, or an operator's
// delete of a's reservation: b executes exactly once per round.
func TestTwoKeysRaceAcquire(t *testing.T) {
	pool := testPool(t, "idemprint-pgstore-twokeys-acquire", 8)
	s := newStore(t, pool, storeOptions())
	rule := newRule(t)
	ctx := context.Background()
	const retries = 6
	deadline := time.Now().Add(stressTime)
	rounds := 0
	for round := 0; round < stressRounds && time.Now().Before(deadline); round++ {
		rounds++
		b, first := startRound(t, s, rule, round)
		var (
			wg     sync.WaitGroup
			start  = make(chan struct{})
			claims [retries]store.Claim
			errs   [retries + 1]error
		)
		for i := range retries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				claims[i], errs[i] = store.Acquire(ctx, s, rule, b)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			switch round % 3 {
			case 0:
				rel, err := rule.Release(&first.Record)
				if err == nil {
					err = s.Write(ctx, rel, store.Guard{})
				}
				errs[retries] = err
			case 1:
				done, err := rule.Complete(&first.Record, policy.Response{Status: 503}, first.Now)
				if err == nil {
					err = s.Write(ctx, done, store.Guard{})
				}
				errs[retries] = err
			case 2:
				errs[retries] = s.Delete(ctx, first.Record.StorageKey)
			}
		}()
		close(start)
		wg.Wait()
		runs := 0
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, goroutine %d: %v", round, i, err)
			}
		}
		for _, c := range claims {
			if c.Decision.Action == policy.Execute || c.Decision.Action == policy.ExecuteAsNew {
				runs++
			}
		}
		if runs != 1 {
			t.Errorf("round %d: request b executed %d times across its two storage keys, want once", round, runs)
		}
	}
	t.Logf("%d rounds", rounds)
}

// Under REPEATABLE READ a statement after a lock wait would read the
// snapshot taken before it, and the two-key race would be open again: the
// functions refuse to run, and the store reports ErrUnavailable.
func TestRepeatableReadRefused(t *testing.T) {
	pool := testPool(t, "idemprint-pgstore-isolation", 2)
	s := newStore(t, pool, storeOptions())
	cfg, err := pgxpool.ParseConfig(testenv.Lookup(t, testenv.Postgres, exampleURL))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "repeatable read"
	rr, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	s2, err := pgstore.New(rr, pgstore.Options{Table: strings.ReplaceAll(s.Table(), `"`, "")})
	if err != nil {
		t.Fatal(err)
	}
	rule := newRule(t)
	_, err = s2.Reserve(context.Background(), reservation(t, rule, newRequest(t, rule, "acme", "k1", 10)))
	var pgErr *pgconn.PgError
	if !errors.Is(err, store.ErrUnavailable) || !errors.As(err, &pgErr) || pgErr.Code != "25000" {
		t.Errorf("Reserve under REPEATABLE READ: error %v, want ErrUnavailable from SQLSTATE 25000", err)
	}
}
