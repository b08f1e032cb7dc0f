package idemhttp_test

import (
	"testing"

	"github.com/idemprint/idemprint/internal/teststore"
	"github.com/idemprint/idemprint/store"
)

// The end-to-end and failure tests also run on the service-backed stores,
// when they are configured (each subtest skips with a hint otherwise).
func init() {
	serviceBackends = append(serviceBackends,
		backend{"Redis", func(t *testing.T) store.Store { return teststore.RedisStore(t, teststore.RedisClient(t)) }},
		backend{"RedisCluster", func(t *testing.T) store.Store {
			return teststore.RedisStore(t, teststore.RedisClusterClient(t))
		}},
		backend{"Postgres", func(t *testing.T) store.Store { return teststore.Postgres(t) }},
	)
}
