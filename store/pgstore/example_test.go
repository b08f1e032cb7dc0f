package pgstore_test

import (
	"context"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/pgstore"
)

// A service keeps its records in PostgreSQL: it creates the table once,
// sweeps it in the background, and runs each request through
// store.Acquire, completing what it executes.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	s, err := pgstore.New(pool, pgstore.Options{Table: "billing.idemprint_records"})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	sweepCtx, stopSweeping := context.WithCancel(ctx)
	defer stopSweeping()
	go s.RunSweeper(sweepCtx, time.Minute, 1000)

	pol, err := policy.Parse([]byte(`{"rules": [{"route": "POST /payments", "fingerprint": {"intent": ["amount"]}}]}`))
	if err != nil {
		log.Fatal(err)
	}
	rule, _ := pol.Match("POST", "/payments")
	req, err := rule.NewRequest("acme", fingerprint.Request{
		Method: "POST", Path: "/payments",
		Header: http.Header{"Idempotency-Key": {"order-1234"}},
		Body:   []byte(`{"amount": 1000}`),
	})
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	claim, err := store.Acquire(ctx, s, rule, req)
	if err != nil {
		log.Fatal(err) // a *store.Error: ErrUnavailable, ErrCorrupt, …
	}
	switch claim.Decision.Action {
	case policy.Execute, policy.ExecuteAsNew:
		resp := policy.Response{Status: 201, Body: []byte(`{"id": "pay_1"}`)} // the handler's answer
		done, err := rule.Complete(&claim.Record, resp, claim.Now.Add(time.Since(start)))
		if err != nil {
			log.Fatal(err)
		}
		if err := s.Write(ctx, done, store.Guard{}); err != nil {
			log.Print(err) // ErrConflict: the lease lapsed and another request took over
		}
	case policy.Replay, policy.Reject:
		log.Print(claim.Decision.Response.Status)
	}
}

// Behind PgBouncer in transaction mode, older than 1.21 or without
// max_prepared_statements, pgx must not rely on named prepared
// statements: the next statement may run on another server connection.
func Example_pgBouncer() {
	cfg, err := pgxpool.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec // unnamed statements, still one round trip
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	if _, err := pgstore.New(pool, pgstore.Options{}); err != nil {
		log.Fatal(err)
	}
}
