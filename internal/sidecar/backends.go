package sidecar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/pgstore"
	"github.com/idemprint/idemprint/store/redisstore"
)

// openRedis connects to the Redis server of a redis:// or rediss:// URL,
// in go-redis's form (redis://[[user]:password@]host[:port][/db]).
func openRedis(spec string, log *slog.Logger) (store.Store, func(), error) {
	setRedisLogger(log)
	opts, err := redis.ParseURL(spec)
	if err != nil {
		return nil, nil, errors.Join(ErrStoreSpec, err)
	}
	opts.ContextTimeoutEnabled = true // a request's deadline bounds its calls
	return newRedis(redis.NewClient(opts))
}

// openRedisCluster connects to the Redis Cluster of which addrs are nodes.
func openRedisCluster(addrs []string, log *slog.Logger) (store.Store, func(), error) {
	setRedisLogger(log)
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, nil, errors.Join(ErrStoreSpec, errors.New("sidecar: a Redis Cluster node is host:port, not "+strconv.Quote(a)))
		}
	}
	return newRedis(redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true}))
}

// setRedisLogger sends go-redis's own messages (failed dials while the
// server is down) to log, at warn level, instead of its default logger's
// plain lines on stderr. go-redis has one logger per process.
func setRedisLogger(log *slog.Logger) {
	if log != nil {
		redis.SetLogger(redisLogger{log})
	}
}

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.LogAttrs(ctx, slog.LevelWarn, fmt.Sprintf(format, v...))
}

func newRedis(client redis.UniversalClient) (store.Store, func(), error) {
	st, err := redisstore.New(client, redisstore.Options{})
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return st, func() { client.Close() }, nil
}

// postgresApp is the application_name of the sidecar's connections unless
// the URL names one: what pg_stat_activity shows.
const postgresApp = "idemprint"

// postgresConns is the size of the pool unless the URL sets
// pool_max_conns; unless it sets pool_min_conns, every connection is
// opened at start and kept.
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
	if !strings.Contains(spec, "pool_min_conns") {
		// A pool that connects on demand makes the first burst wait for
		// new backends, and a completion that waits past its lease lets a
		// duplicate execute: serve keeps every connection open.
		cfg.MinConns = cfg.MaxConns
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
	warm(ctx, pool, cfg.MinConns, log)
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

// warm opens n of pool's connections before serve takes requests, so that
// none of them waits for one; pgxpool would open them in the background.
// A database that refuses some (max_connections) is logged, not fatal:
// the pool tries again as requests need them.
func warm(ctx context.Context, pool *pgxpool.Pool, n int32, log *slog.Logger) {
	conns := make([]*pgxpool.Conn, 0, n)
	var err error
	for range n {
		var c *pgxpool.Conn
		if c, err = pool.Acquire(ctx); err != nil {
			break
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
	if err != nil && log != nil {
		log.LogAttrs(ctx, slog.LevelWarn, "sidecar: PostgreSQL opened fewer connections than the pool keeps",
			slog.Int("open", len(conns)), slog.Int("min", int(n)), slog.Any("error", err))
	}
}
