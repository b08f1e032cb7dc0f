package idemhttp_test

import (
	"testing"

	"github.com/idemprint/idemprint/internal/teststore"
	"github.com/idemprint/idemprint/store"
)

// The scenario and concurrency tests also run on the service-backed
// stores, when they are configured.
func init() {
	serviceBackends = append(serviceBackends,
		backend{"Postgres", func(t *testing.T) store.Store { return teststore.Postgres(t) }},
	)
}
