package sidecar

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"

	"github.com/idemprint/idemprint/store"
)

// ErrStoreSpec reports a store specification [Open] does not understand.
var ErrStoreSpec = errors.New("sidecar: invalid store")

// Open opens the store that spec names:
//
//	memory                    an in-process store: one instance only
//	redis://… or rediss://…   a Redis server (go-redis's URL form)
//	postgres://…              a PostgreSQL database (pgx's URL form)
//
// or, when cluster lists node addresses, a Redis Cluster (spec must then
// be "" or "memory", the default). A PostgreSQL store's pool has 32
// connections unless the URL sets pool_max_conns, all opened before Open
// returns and kept unless it sets pool_min_conns; its table is created
// when it is missing, and its ended records are swept every minute (errors
// go to log, which may be nil). Ping the store ([store.Pinger]) to know
// that it answers. close stops the sweeping and releases the store's
// connections.
func Open(ctx context.Context, spec string, cluster []string, log *slog.Logger) (st store.Store, close func(), err error) {
	if len(cluster) > 0 {
		if spec != "" && spec != "memory" {
			return nil, nil, errors.Join(ErrStoreSpec, errors.New("sidecar: a Redis Cluster and a store URL are exclusive"))
		}
		return openRedisCluster(cluster, log)
	}
	if spec == "" || spec == "memory" {
		m, err := store.NewMemory(store.MemoryOptions{})
		return m, func() {}, err
	}
	u, err := url.Parse(spec)
	if err != nil {
		return nil, nil, errors.Join(ErrStoreSpec, errors.New("sidecar: the store is neither \"memory\" nor a URL"))
	}
	switch strings.ToLower(u.Scheme) {
	case "redis", "rediss":
		return openRedis(spec, log)
	case "postgres", "postgresql":
		return openPostgres(ctx, spec, log)
	}
	return nil, nil, errors.Join(ErrStoreSpec, errors.New("sidecar: unknown store scheme "+u.Scheme+" (want memory, redis://, rediss:// or postgres://)"))
}

// Redact returns spec with any password replaced by "xxxxx", for logs.
func Redact(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.User == nil {
		return spec
	}
	return u.Redacted()
}
