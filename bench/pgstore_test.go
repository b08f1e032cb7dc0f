package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/pgstore"
)

// postgresEnv names the database the PostgreSQL benchmark uses; it is
// internal/testenv's variable, which this module cannot import.
const postgresEnv = "IDEMPRINT_TEST_POSTGRES"

// pgConns and pgParallelism set the benchmark's pool and concurrency,
// the same for both implementations: pgParallelism × GOMAXPROCS
// goroutines share pgConns connections.
const (
	pgConns       = 16
	pgParallelism = 8
)

// BenchmarkPostgres measures reserve+complete pairs, one fresh key each,
// per second: pgstore's Reserve and Write (each a call of its PL/pgSQL
// function) against the floor of a raw INSERT … ON CONFLICT DO NOTHING
// and UPDATE … WHERE generation = $n on a table of the same shape (same
// columns, constraints and indexes), with the same payloads, pool and
// concurrency, in the same run.
func BenchmarkPostgres(b *testing.B) {
	url := os.Getenv(postgresEnv)
	if url == "" {
		b.Skip("set " + postgresEnv + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable to run this benchmark against a real server")
	}
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = pgConns
	cfg.ConnConfig.RuntimeParams["application_name"] = "idemprint-bench"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	var suffix [6]byte
	rand.Read(suffix[:])
	schema := "idemprint_bench_" + hex.EncodeToString(suffix[:])
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		b.Fatal(err)
	}
	defer pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	s, err := pgstore.New(pool, pgstore.Options{Table: schema + ".records"})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	raw := schema + ".raw"
	if _, err := pool.Exec(ctx, "CREATE TABLE "+raw+" (LIKE "+s.Table()+" INCLUDING ALL)"); err != nil {
		b.Fatal(err)
	}
	pairs := newPairs(b)

	b.Run("ReserveComplete/idemprint-pgstore", func(b *testing.B) {
		runPairs(b, pairs, func(i int64) error {
			res := pairs.reservation(i)
			out, err := s.Reserve(ctx, res)
			if err != nil {
				return err
			}
			if !out.Reserved {
				return errors.New("a fresh key was not reserved")
			}
			done, err := pairs.rule.Complete(&out.Record, pairs.resp, out.Now)
			if err != nil {
				return err
			}
			return s.Write(ctx, done, store.Guard{})
		})
	})
	b.Run("ReserveComplete/raw-upsert", func(b *testing.B) {
		insert := "INSERT INTO " + raw + ` (storage_key, tenant, generation, state, lease_expiry, expires_at, payload)
			VALUES ($1, $2, $3, 1, now() + interval '30 seconds', now() + interval '1 hour', $4) ON CONFLICT DO NOTHING`
		update := "UPDATE " + raw + ` SET generation = $2, state = 2, expires_at = now() + interval '1 hour', payload = $3
			WHERE storage_key = $1 AND generation = $4`
		runPairs(b, pairs, func(i int64) error {
			res := pairs.reservation(i)
			gen := time.Now().UnixMicro()
			key := []byte(res.Record.StorageKey)
			tag, err := pool.Exec(ctx, insert, key, []byte(res.Record.Tenant), gen, store.AppendPayload(nil, &res.Record))
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 1 {
				return errors.New("a fresh key was not inserted")
			}
			done, err := pairs.rule.Complete(&res.Record, pairs.resp, time.Now())
			if err != nil {
				return err
			}
			tag, err = pool.Exec(ctx, update, key, gen+1, store.AppendPayload(nil, &done), gen)
			if err == nil && tag.RowsAffected() != 1 {
				err = errors.New("the completion did not update the row")
			}
			return err
		})
	})
}

// pairs makes the reservations of fresh keys and the response that
// completes them.
type pairs struct {
	rule     *policy.Rule
	template policy.Request
	resp     policy.Response
	run      string       // distinguishes the keys of two runs of the benchmark
	next     atomic.Int64 // the last key used
}

func newPairs(b *testing.B) *pairs {
	pol, err := policy.Parse([]byte(`{
  "defaults": {"ttl": "1h", "lease": "30s", "methods": []},
  "rules": [{"route": "POST /payments", "fingerprint": {"intent": ["amount", "currency"]}}]
}`))
	if err != nil {
		b.Fatal(err)
	}
	rule, _ := pol.Match("POST", "/payments")
	req, err := rule.NewRequest("acme", fingerprint.Request{
		Method: "POST", Path: "/payments",
		Header: http.Header{"Idempotency-Key": {"template"}},
		Body:   []byte(`{"amount": 1000, "currency": "EUR"}`),
	})
	if err != nil {
		b.Fatal(err)
	}
	var run [4]byte
	rand.Read(run[:])
	return &pairs{
		rule:     rule,
		template: req,
		resp: policy.Response{
			Status: 201,
			Header: http.Header{"Content-Type": {"application/json"}},
			Body:   []byte(`{"id": "pay_0123456789", "amount": 1000, "currency": "EUR", "status": "succeeded"}`),
		},
		run: hex.EncodeToString(run[:]),
	}
}

// reservation returns the reservation of the i-th fresh key, as
// [policy.Rule.Decide] makes it for a request without records.
func (p *pairs) reservation(i int64) store.Reservation {
	req := p.template
	req.Key = []string{p.run + "-" + strconv.FormatInt(i, 10)}
	d, err := p.rule.Decide(req, nil, nil, time.Time{})
	if err != nil || d.Action != policy.Execute {
		panic("bench: a fresh key is not executed")
	}
	return store.Reservation{Record: *d.Reserve, Lease: p.rule.Lease(), TTL: p.rule.TTL()}
}

// runPairs runs pair on fresh keys from pgParallelism × GOMAXPROCS
// goroutines and reports pairs/s.
func runPairs(b *testing.B, p *pairs, pair func(i int64) error) {
	b.ReportAllocs()
	b.SetParallelism(pgParallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := pair(p.next.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
}
