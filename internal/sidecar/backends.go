package sidecar

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/pgstore"
)

// Until the Redis backend is merged.
var errNotBuilt = errors.New("sidecar: this store is not built in yet")

func openRedis(string) (store.Store, func(), error) { return nil, nil, errNotBuilt }
func openRedisCluster([]string) (store.Store, func(), error) {
	return nil, nil, errNotBuilt
}

// postgresApp is the application_name of the sidecar's connections unless
// the URL names one: what pg_stat_activity shows.
const postgresApp = "idemprint"

// postgresConns is the size of the pool unless the URL sets
// pool_max_conns.
const postgresConns = 32

// sweepEvery is how often a PostgreSQL store deletes the rows whose life
// ended; every instance sweeps, skipping the rows another one holds.
const sweepEvery = time.Minute

// openPostgres connects a pool, creates the table and its functions when
// they are missing, and sweeps ended records every minute until closed.
func openPostgres(ctx context.Context, spec string, log *slog.Logger) (store.Store, func(), error) {
	cfg, err := pgxpool.ParseConfig(spec)
	if err != nil {
		return nil, nil, errors.Join(ErrStoreSpec, err)
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = postgresApp
	}
	if !strings.Contains(spec, "pool_max_conns") {
		// pgxpool's default, the number of CPUs (at least 4), queues a
		// proxy's concurrent requests behind a few commits.
		cfg.MaxConns = postgresConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	st, err := pgstore.New(pool, pgstore.Options{Logger: log})
	if err == nil {
		err = st.CreateTable(ctx)
	}
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	sweepCtx, stop := context.WithCancel(context.Background())
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		st.RunSweeper(sweepCtx, sweepEvery, 1000)
	}()
	return st, func() {
		stop()
		<-swept
		pool.Close()
	}, nil
}
