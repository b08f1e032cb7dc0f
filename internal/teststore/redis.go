package teststore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemprint/idemprint/internal/testenv"
	"github.com/idemprint/idemprint/store/redisstore"
)

// RedisClient returns a client of the single Redis server the environment
// names, or skips the test.
func RedisClient(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(RedisOptions(t))
	t.Cleanup(func() { c.Close() })
	return c
}

// RedisOptions returns the options of a client of the single Redis server
// the environment names, or skips the test.
func RedisOptions(t testing.TB) *redis.Options {
	t.Helper()
	url := testenv.Lookup(t, testenv.Redis, "redis://127.0.0.1:6379/0")
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("%s: %v", testenv.Redis, err)
	}
	opts.ContextTimeoutEnabled = true
	return opts
}

// RedisClusterClient returns a client of the Redis Cluster the environment
// names, or skips the test.
func RedisClusterClient(t testing.TB) *redis.ClusterClient {
	t.Helper()
	addrs := testenv.Lookup(t, testenv.RedisCluster, "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003")
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ","), ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// RedisStore returns a Store with a prefix of its own, whose keys are
// deleted when the test ends.
func RedisStore(t testing.TB, client redis.UniversalClient) *redisstore.Store {
	t.Helper()
	var b [8]byte
	rand.Read(b[:])
	prefix := "idemprint-test:" + hex.EncodeToString(b[:]) + ":"
	s, err := redisstore.New(client, redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if n, err := deleteRedisPrefix(client, prefix); err != nil {
			t.Errorf("deleting the test's %d keys: %v", n, err)
		}
	})
	return s
}

// deleteRedisPrefix deletes every key under prefix (which has no glob
// characters) on every primary node.
func deleteRedisPrefix(client redis.UniversalClient, prefix string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n atomic.Int64 // ForEachMaster calls del concurrently
	del := func(ctx context.Context, node *redis.Client) error {
		iter := node.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			// One key a command: on a cluster node the keys of a batch are
			// in several slots.
			if err := node.Del(ctx, iter.Val()).Err(); err != nil {
				return err
			}
			n.Add(1)
		}
		return iter.Err()
	}
	var err error
	switch c := client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, del)
	case *redis.Client:
		err = del(ctx, c)
	default:
		panic("unexpected client type")
	}
	return int(n.Load()), err
}
