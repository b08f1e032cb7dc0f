package redisstore_test

import (
	"context"
	"testing"

	"github.com/idemprint/idemprint/internal/teststore"
	"github.com/idemprint/idemprint/store/storetest"
	"github.com/redis/go-redis/v9"
)

// The clients and isolated stores of these tests are package teststore's.
var (
	nodeClient    = teststore.RedisClient
	nodeOptions   = teststore.RedisOptions
	clusterClient = teststore.RedisClusterClient
	newStore      = teststore.RedisStore
)

func conformance(t *testing.T, client redis.UniversalClient) {
	storetest.Run(t, func(t *testing.T) storetest.Subject {
		s := newStore(t, client)
		return storetest.Subject{
			Store: s,
			Corrupt: func(storageKey string) error {
				// A byte after the payload's checksum.
				return client.Append(context.Background(), s.Key(storageKey), "x").Err()
			},
		}
	})
}

func TestConformance(t *testing.T) {
	t.Run("Node", func(t *testing.T) { conformance(t, nodeClient(t)) })
	t.Run("Cluster", func(t *testing.T) { conformance(t, clusterClient(t)) })
}
