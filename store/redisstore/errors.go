package redisstore

import (
	"context"
	"errors"

	"github.com/idemprint/idemprint/store"
	"github.com/redis/go-redis/v9"
)

// classify returns the [*store.Error] of a failed call to Redis, with err,
// go-redis's error, as its cause:
//
//   - the context's error when ctx has ended, whatever go-redis says: a
//     deadline of go-redis's own (a dial or read timeout) is a fault of
//     the server, not the caller's deadline;
//   - [store.ErrFull] for an OOM reply: the server reached maxmemory and
//     refuses writes (with the noeviction policy the package requires);
//   - [store.ErrCorrupt] for WRONGTYPE: a script found a key of the store
//     that is neither a string nor a v1 hash (before it wrote anything);
//   - [store.ErrUnavailable] for everything else: network faults, a
//     closed client, a full pool, and error replies of a server that
//     cannot serve now (LOADING, READONLY, MASTERDOWN, CLUSTERDOWN,
//     TRYAGAIN, BUSY, a cluster's redirections exhausted). A script error
//     or a refused command (NOPERM, an unknown command) is a bug or a
//     misconfiguration rather than a fault, but nothing was written
//     either: the store cannot serve, and the cause says why.
//
// redis.Nil never reaches here: no script replies nil.
func classify(ctx context.Context, op, storageKey string, err error) error {
	e := &store.Error{Op: op, StorageKey: storageKey, Kind: store.ErrUnavailable, Err: err}
	switch {
	case ctx.Err() != nil:
		e.Kind = ctx.Err()
	case errors.Is(err, redis.Nil):
		return unexpected(op, storageKey)
	case redis.HasErrorPrefix(err, "OOM"):
		e.Kind = store.ErrFull
	case redis.HasErrorPrefix(err, "WRONGTYPE"):
		e.Kind = store.ErrCorrupt // a key of the store that holds no record
	}
	return e
}
