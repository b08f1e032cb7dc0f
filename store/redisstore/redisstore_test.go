package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemprint/idemprint/internal/testenv"
	"github.com/idemprint/idemprint/store/redisstore"
	"github.com/idemprint/idemprint/store/storetest"
	"github.com/redis/go-redis/v9"
)

// nodeClient returns a client of the single Redis server the environment
// names, or skips the test.
func nodeClient(t *testing.T) *redis.Client {
	t.Helper()
	c := redis.NewClient(nodeOptions(t))
	t.Cleanup(func() { c.Close() })
	return c
}

// nodeOptions returns the options of a client of the single Redis server
// the environment names, or skips the test.
func nodeOptions(t *testing.T) *redis.Options {
	t.Helper()
	url := testenv.Lookup(t, testenv.Redis, "redis://127.0.0.1:6379/0")
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("%s: %v", testenv.Redis, err)
	}
	opts.ContextTimeoutEnabled = true
	return opts
}

// clusterClient returns a client of the Redis Cluster the environment
// names, or skips the test.
func clusterClient(t *testing.T) *redis.ClusterClient {
	t.Helper()
	addrs := testenv.Lookup(t, testenv.RedisCluster, "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003")
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ","), ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// newStore returns a Store with a prefix of its own, whose keys are
// deleted when the test ends.
func newStore(t *testing.T, client redis.UniversalClient) *redisstore.Store {
	t.Helper()
	var b [8]byte
	rand.Read(b[:])
	prefix := "idemprint-test:" + hex.EncodeToString(b[:]) + ":"
	s, err := redisstore.New(client, redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if n, err := deletePrefix(client, prefix); err != nil {
			t.Errorf("deleting the test's %d keys: %v", n, err)
		}
	})
	return s
}

// deletePrefix deletes every key under prefix (which has no glob
// characters) on every primary node.
func deletePrefix(client redis.UniversalClient, prefix string) (int, error) {
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

func conformance(t *testing.T, client redis.UniversalClient) {
	storetest.Run(t, func(t *testing.T) storetest.Subject {
		s := newStore(t, client)
		return storetest.Subject{
			Store: s,
			Corrupt: func(storageKey string) error {
				return client.HSet(context.Background(), s.Key(storageKey), "r", "not a payload").Err()
			},
		}
	})
}

func TestConformance(t *testing.T) {
	t.Run("Node", func(t *testing.T) { conformance(t, nodeClient(t)) })
	t.Run("Cluster", func(t *testing.T) { conformance(t, clusterClient(t)) })
}
