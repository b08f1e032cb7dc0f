package redisstore

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/redis/go-redis/v9"
)

// PurgeTenant implements [store.TenantPurger]: it deletes every record of
// tenant and returns how many it deleted.
//
// Redis has no index by tenant, so PurgeTenant walks the whole keyspace
// of every primary node with SCAN (MATCH on the tenant's part of the
// storage key, COUNT [Options].ScanCount), and deletes each batch of
// matches with UNLINK in one pipelined round trip. Its cost grows with
// every key in the database, the store's or not: about N/ScanCount SCAN
// round trips per node for N keys, each bounded on the server by
// ScanCount. Run it as an operator's task, not on a request's path.
// Records written while it runs may survive it; a reservation it deletes
// can no longer be completed by its holder. On an error, records already
// deleted stay deleted and the count is of those.
func (s *Store) PurgeTenant(ctx context.Context, tenant string) (int, error) {
	const op = "purge"
	if err := ctx.Err(); err != nil {
		return 0, &store.Error{Op: op, Kind: err}
	}
	// A storage key is a version, then ":" len ":" tenant ":" and the
	// other components; the glob finds candidates, tenantMatches decides.
	pattern := globEscape(s.prefix) + "{" + strings.Repeat("?", tagLen) + "}*:" +
		strconv.Itoa(len(tenant)) + ":" + globEscape(tenant) + ":*"
	var n atomic.Int64
	scan := func(ctx context.Context, node redis.Cmdable) error {
		var cursor uint64
		for {
			keys, next, err := node.Scan(ctx, cursor, pattern, s.scanCount).Result()
			if err != nil {
				return err
			}
			kept := keys[:0]
			for _, k := range keys {
				if s.tenantMatches(k, tenant) {
					kept = append(kept, k)
				}
			}
			if len(kept) > 0 {
				cmds, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
					for _, k := range kept {
						p.Unlink(ctx, k)
					}
					return nil
				})
				for _, c := range cmds {
					if c, ok := c.(*redis.IntCmd); ok && c.Err() == nil {
						n.Add(c.Val())
					}
				}
				if err != nil {
					return err
				}
			}
			if next == 0 {
				return nil
			}
			cursor = next
		}
	}
	var err error
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return scan(ctx, node) })
	case *redis.Ring:
		err = c.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error { return scan(ctx, node) })
	default: // one node, or Sentinel's current primary
		err = scan(ctx, c)
	}
	if err != nil {
		return int(n.Load()), classify(ctx, op, "", err)
	}
	return int(n.Load()), nil
}

// tenantMatches reports whether the Redis key k is of this store and holds
// a record of tenant.
func (s *Store) tenantMatches(k, tenant string) bool {
	rest, ok := strings.CutPrefix(k, s.prefix)
	if !ok || len(rest) < tagLen+2 || rest[0] != '{' || rest[tagLen+1] != '}' {
		return false
	}
	sk := rest[tagLen+2:]
	if _, ok := policy.PrimaryKey(sk); !ok {
		return false
	}
	i := strings.IndexByte(sk, ':')
	return i >= 0 && strings.HasPrefix(sk[i:], ":"+strconv.Itoa(len(tenant))+":"+tenant+":")
}

// globEscape escapes the characters special to Redis's glob-style
// patterns.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
